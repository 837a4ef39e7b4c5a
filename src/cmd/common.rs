//! Flags and argument parsers shared by several subcommands. Each parser returns a message that
//! names what was wrong and how to fix it; clap puts the flag's name in front.
use anyhow::Context;
use chokepoint_diagnose::catalogue::Catalogue;
use chokepoint_load::LoadConfig;
use std::path::PathBuf;
use std::time::Duration;

/// The request flags of `load` and `sweep`: what each request is and how it is sent.
#[derive(Debug, Clone, clap::Args)]
pub struct RequestArgs {
    /// Request method
    #[arg(short, long, default_value = "GET", value_parser = method)]
    pub method: chokepoint_load::Method,
    /// A request header, 'Name: value' (repeatable)
    #[arg(short = 'H', long = "header", value_name = "NAME: VALUE", value_parser = header)]
    pub headers: Vec<(String, String)>,
    /// Request body
    #[arg(long, conflicts_with = "body_file")]
    pub body: Option<String>,
    /// Request body read from a file
    #[arg(long, value_name = "FILE")]
    pub body_file: Option<PathBuf>,
    /// Per-request timeout
    #[arg(long, value_parser = positive_duration, allow_hyphen_values = true, default_value = "30s")]
    pub timeout: Duration,
    /// Open a new connection for each request (default: one kept-alive connection per client)
    #[arg(long)]
    pub no_keepalive: bool,
    /// https://: accept any server certificate (self-signed, expired, another name)
    #[arg(short = 'k', long, conflicts_with = "cacert")]
    pub insecure: bool,
    /// https://: trust the CA certificates in this PEM file instead of the platform's
    #[arg(long, value_name = "FILE")]
    pub cacert: Option<PathBuf>,
    /// Send the requests of this file in turn (vegeta's targets format: 'METHOD URL', header
    /// lines, an optional '@body-file' line; a blank line between requests)
    #[arg(long, value_name = "FILE", conflicts_with_all = ["method", "body", "body_file"])]
    pub targets: Option<PathBuf>,
    /// The order of the --targets requests
    #[arg(long, value_enum, default_value = "round-robin", requires = "targets")]
    pub targets_order: TargetsOrderArg,
    /// Speak HTTP/2: h2 by ALPN over https://, h2c with prior knowledge over http://; the -c
    /// clients are concurrent streams over --connections connections (as h2load's -c and -m)
    #[arg(long)]
    pub http2: bool,
    /// --http2 or --grpc: the connections the streams are spread over (at most one per client;
    /// one by default, as a gRPC channel keeps one per host)
    #[arg(long, value_name = "N", default_value_t = 1, value_parser = client_count)]
    pub connections: u32,
    #[command(flatten)]
    pub grpc: super::grpc::GrpcArgs,
}

/// `--targets-order`.
#[derive(Debug, Clone, Copy, clap::ValueEnum)]
pub enum TargetsOrderArg {
    /// In the file's order, over and over
    RoundRobin,
    /// Each round of one request per target in a random order
    Random,
}

impl RequestArgs {
    /// The configuration of a run of `url`, or of the targets file's requests when there is no
    /// URL; a file that cannot be read or used is an error naming the flag.
    pub fn config(&self, url: Option<&str>) -> anyhow::Result<LoadConfig> {
        let targets = match &self.targets {
            Some(path) => {
                let text = std::fs::read_to_string(path)
                    .with_context(|| format!("--targets {}: cannot read it", path.display()))?;
                chokepoint_load::parse_targets(&text, &path.display().to_string(), &|body| {
                    std::fs::read(body)
                })?
            }
            None => Vec::new(),
        };
        let url = match (url, targets.first()) {
            (Some(url), _) => url.to_string(),
            (None, Some(first)) => first.url.clone(),
            (None, None) => anyhow::bail!("give the URL to load, or --targets FILE"),
        };
        let mut config = LoadConfig::new(&url)?;
        config.targets = targets;
        self.apply(&mut config)?;
        self.grpc.apply(&mut config)?;
        if config.connections != 1 && !config.http2 {
            anyhow::bail!("--connections spreads HTTP/2 streams: add --http2 (or --grpc)");
        }
        Ok(config)
    }

    /// Puts the request flags into `config`; a body file that cannot be read is an error naming
    /// the flag.
    fn apply(&self, config: &mut LoadConfig) -> anyhow::Result<()> {
        config.method = self.method.clone();
        config.headers = self.headers.clone();
        config.timeout = self.timeout;
        config.keepalive = !self.no_keepalive;
        config.body = match (&self.body, &self.body_file) {
            (Some(text), _) => chokepoint_load::Bytes::from(text.clone()),
            (None, Some(path)) => std::fs::read(path)
                .map(chokepoint_load::Bytes::from)
                .with_context(|| format!("--body-file {}: cannot read it", path.display()))?,
            (None, None) => chokepoint_load::Bytes::new(),
        };
        config.trust = match (&self.cacert, self.insecure) {
            (_, true) => chokepoint_load::Trust::Insecure,
            (Some(path), false) => chokepoint_load::Trust::CaFile(path.clone()),
            (None, false) => chokepoint_load::Trust::Platform,
        };
        config.http2 = self.http2;
        config.connections = self.connections;
        config.targets_order = match self.targets_order {
            TargetsOrderArg::RoundRobin => chokepoint_load::TargetsOrder::RoundRobin,
            TargetsOrderArg::Random => chokepoint_load::TargetsOrder::Random,
        };
        Ok(())
    }
}

/// A request method (`GET`, `post`, ...), sent in upper case.
pub fn method(text: &str) -> Result<chokepoint_load::Method, String> {
    chokepoint_load::parse_method(text).map_err(|e| e.to_string())
}

/// A duration such as `10s`, `500ms` or `1m30s` that must be greater than zero.
pub fn positive_duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed.starts_with('-') {
        return Err(format!(
            "'{text}' is negative: give a positive duration such as 10s"
        ));
    }
    let parsed = if trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') && !trimmed.is_empty() {
        // A bare number is seconds, as in ab and wrk.
        trimmed
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite())
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("'{text}' is not a duration: use e.g. 10s, 500ms, 1m"))?
    } else {
        humantime::parse_duration(trimmed)
            .map_err(|e| format!("'{text}' is not a duration ({e}): use e.g. 10s, 500ms, 1m"))?
    };
    if parsed.is_zero() {
        return Err(format!(
            "'{text}' is zero: give a duration greater than 0, such as 10s"
        ));
    }
    Ok(parsed)
}

/// A duration that may be zero (a think time, a delay).
pub fn duration(text: &str) -> Result<Duration, String> {
    let trimmed = text.trim();
    if trimmed == "0" {
        return Ok(Duration::ZERO);
    }
    if trimmed.starts_with('-') {
        return Err(format!(
            "'{text}' is negative: give a duration such as 0s or 100ms"
        ));
    }
    if trimmed.chars().all(|c| c.is_ascii_digit() || c == '.') && !trimmed.is_empty() {
        return trimmed
            .parse::<f64>()
            .ok()
            .filter(|s| s.is_finite())
            .map(Duration::from_secs_f64)
            .ok_or_else(|| format!("'{text}' is not a duration: use e.g. 100ms, 1s"));
    }
    humantime::parse_duration(trimmed)
        .map_err(|e| format!("'{text}' is not a duration ({e}): use e.g. 100ms, 1s"))
}

/// A count that must be at least 1.
pub fn positive_count(text: &str) -> Result<u64, String> {
    match text.trim().parse::<i128>() {
        Ok(n) if n >= 1 && n <= u64::MAX as i128 => Ok(n as u64),
        Ok(_) => Err(format!("'{text}' must be at least 1")),
        Err(_) => Err(format!("'{text}' is not a whole number")),
    }
}

/// A client count: at least 1, at most 1,000,000.
pub fn client_count(text: &str) -> Result<u32, String> {
    let n = positive_count(text)?;
    u32::try_from(n)
        .ok()
        .filter(|n| *n <= 1_000_000)
        .ok_or_else(|| format!("'{text}' is too many clients: at most 1000000"))
}

/// A header given as `Name: value`.
pub fn header(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once(':')
        .ok_or_else(|| format!("'{text}' is not a header: write it as 'Name: value'"))?;
    let name = name.trim();
    if name.is_empty() || !name.bytes().all(|b| b.is_ascii_graphic() && b != b':') {
        return Err(format!(
            "'{text}' has no valid header name: write it as 'Name: value'"
        ));
    }
    Ok((name.to_string(), value.trim().to_string()))
}

/// A token that is cancelled when the user presses Ctrl-C (SIGINT) or the process gets SIGTERM.
/// A second Ctrl-C exits at once with code 130.
pub fn cancel_on_ctrl_c() -> tokio_util::sync::CancellationToken {
    let token = tokio_util::sync::CancellationToken::new();
    let cancel = token.clone();
    let spawned = std::thread::Builder::new()
        .name("cp-signals".into())
        .spawn(move || {
            let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
            else {
                return;
            };
            runtime.block_on(async move {
                let Ok(mut terminate) =
                    tokio::signal::unix::signal(tokio::signal::unix::SignalKind::terminate())
                else {
                    return;
                };
                tokio::select! {
                    _ = tokio::signal::ctrl_c() => {}
                    _ = terminate.recv() => {}
                }
                cancel.cancel();
                eprintln!("chokepoint: stopping (press Ctrl-C again to quit at once)");
                let _ = tokio::signal::ctrl_c().await;
                std::process::exit(130);
            });
        });
    if spawned.is_err() {
        eprintln!("chokepoint: cannot watch for Ctrl-C; the run will go to its end");
    }
    token
}

/// Fails early, before a long run, when `path` cannot be written (its folder is missing).
pub fn check_writable(path: &std::path::Path, flag: &str) -> anyhow::Result<()> {
    let parent = match path.parent() {
        Some(p) if !p.as_os_str().is_empty() => p,
        _ => std::path::Path::new("."),
    };
    if !parent.is_dir() {
        anyhow::bail!(
            "{flag} {}: the folder {} does not exist; create it or choose another path",
            path.display(),
            parent.display()
        );
    }
    if path.is_dir() {
        anyhow::bail!("{flag} {}: is a folder; give a file path", path.display());
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations_must_be_positive_where_asked() {
        assert_eq!(positive_duration("10s"), Ok(Duration::from_secs(10)));
        assert_eq!(positive_duration("2"), Ok(Duration::from_secs(2)));
        assert_eq!(positive_duration("250ms"), Ok(Duration::from_millis(250)));
        assert!(positive_duration("0s").unwrap_err().contains("zero"));
        assert!(positive_duration("0").unwrap_err().contains("zero"));
        assert!(positive_duration("-1s").unwrap_err().contains("negative"));
        assert!(positive_duration("soon").is_err());
        assert_eq!(duration("0"), Ok(Duration::ZERO));
        assert_eq!(duration("0s"), Ok(Duration::ZERO));
        assert!(duration("-5ms").is_err());
    }

    #[test]
    fn counts_and_headers() {
        assert_eq!(client_count("20"), Ok(20));
        assert!(client_count("0").is_err());
        assert!(client_count("-3").is_err());
        assert!(client_count("x").is_err());
        assert_eq!(
            header("X-Test:  a b"),
            Ok(("X-Test".to_string(), "a b".to_string()))
        );
        assert!(header("no colon").is_err());
        assert!(header(": v").is_err());
    }
}

/// `--catalogue FILE` of `sweep` and `merge`: entries of the user's own for the catalogue of
/// known pools (`catalogue/pools.toml`), put in front of the built-in ones.
#[derive(Debug, Clone, clap::Args)]
pub struct CatalogueArgs {
    /// Known pools of your own, in the form of chokepoint's catalogue/pools.toml: the finding
    /// names their setting, before the built-in entries' (default: $CHOKEPOINT_CATALOGUE)
    #[arg(long, value_name = "FILE", env = "CHOKEPOINT_CATALOGUE")]
    pub catalogue: Option<PathBuf>,
}

impl CatalogueArgs {
    /// The catalogue the diagnosis reads: the file's entries, if one was given, in front of the
    /// built-in ones; a file that cannot be read or is not a catalogue is refused in one line
    /// naming it.
    pub fn catalogue(&self) -> anyhow::Result<Catalogue> {
        let Some(path) = &self.catalogue else {
            return Ok(Catalogue::built_in().clone());
        };
        let name = path.display();
        let text = std::fs::read_to_string(path).with_context(|| {
            format!("--catalogue {name}: cannot read it (give a TOML file of [[pool]] entries)")
        })?;
        let user = Catalogue::parse(&text).map_err(|err| {
            anyhow::anyhow!("--catalogue {name}: {err} (see catalogue/pools.toml for the form)")
        })?;
        Ok(user.with_built_in())
    }
}
