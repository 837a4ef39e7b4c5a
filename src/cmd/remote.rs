//! `sweep --observer URL`: opens the session on the observer beside the target before any load,
//! and the line that says the target is read through it.
use chokepoint_experiment::SweepConfig;
use chokepoint_remote::client::RemoteObserver;
use chokepoint_remote::SessionRequest;
use std::path::Path;

/// The observer at `url`, its session open for this sweep; bad input (no answer, a wrong token,
/// a busy observer, no target there) as one line.
pub fn connect(
    url: &str,
    token_file: Option<&Path>,
    config: &SweepConfig,
) -> anyhow::Result<RemoteObserver> {
    let parsed: http::Uri = url
        .parse()
        .ok()
        .filter(|uri: &http::Uri| uri.scheme_str() == Some("http") && uri.host().is_some())
        .ok_or_else(|| {
            anyhow::anyhow!("--observer {url}: not an http:// URL; give http://HOST:PORT of a chokepoint observe")
        })?;
    let token = token_file
        .map(|path| chokepoint_remote::auth::read_token(path, "--observer-token-file"))
        .transpose()
        .map_err(anyhow::Error::msg)?;
    let swept: Option<http::Uri> = config.base.url.parse().ok();
    let request = SessionRequest {
        listen_port: port_of(&config.base.url),
        mock_port: config.mock.as_deref().and_then(port_of),
        interval_ms: config.observe_interval.as_millis() as u64,
        probe_path: swept
            .as_ref()
            .and_then(|uri| uri.path_and_query())
            .map(|p| p.as_str().to_string()),
        tls: swept.as_ref().and_then(|uri| uri.scheme_str()) == Some("https"),
    };
    let base = format!("http://{}", parsed.authority().expect("a host"));
    RemoteObserver::connect(&base, token, &request).map_err(anyhow::Error::msg)
}

/// What the sweep says before its first step.
pub fn observing_line(remote: &RemoteObserver) -> String {
    let target = remote.target();
    let pids: Vec<String> = target.roots.iter().map(i32::to_string).collect();
    let port = target
        .listen_port
        .map(|port| format!(" (listening on port {port} there)"))
        .unwrap_or_default();
    let behind = target
        .forwarder
        .as_ref()
        .map(|f| {
            format!(
                "; the port is {} (process {}) there, a forwarder to {}, followed to {}",
                f.name,
                f.pid,
                f.hop(),
                f.served_name
            )
        })
        .unwrap_or_default();
    format!(
        "chokepoint: observing process {}{port} and its descendants through the observer at {} ({} cores there){behind}",
        pids.join(", "),
        remote.url(),
        target.cores
    )
}

fn port_of(url: &str) -> Option<u16> {
    let uri: http::Uri = url.parse().ok()?;
    uri.port_u16().or(match uri.scheme_str() {
        Some("https") => Some(443),
        Some("http") => Some(80),
        _ => None,
    })
}
