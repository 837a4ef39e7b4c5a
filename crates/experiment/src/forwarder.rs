//! `--pid auto` behind a forwarder: when the process on the URL's port is a forwarder
//! (`chokepoint_observe::forward`), a short probe of the URL
//! (`chokepoint_observe::forward::probe`) makes it pass connections on, and the process
//! listening where they go is observed beside it. The probe goes to the URL's own loopback port
//! only (`listening_target` follows nothing else).
use crate::SweepConfig;
use chokepoint_observe::forward::forwarder_among;
use chokepoint_observe::forward::probe::{follow, Probe};
use chokepoint_result::Forwarder;

impl SweepConfig {
    /// Observes `found` (the processes on the URL's port, `--pid auto`) and, when one of them
    /// is a forwarder, the process it passes connections on to, kept in `self.forwarder`. That
    /// process comes first among the roots: it is the service, whose stacks, CPU quota and
    /// runtime the observer reads from the first root (docker-proxy is not in the container's
    /// cgroup).
    pub fn with_listening_target(self, found: Vec<i32>) -> SweepConfig {
        let forwarder = self.follow_forwarder(&found);
        let mut roots: Vec<i32> = forwarder
            .iter()
            .flat_map(|f| f.served_pids.iter().copied())
            .collect();
        roots.extend(found);
        let mut config = self.with_target_pids(roots);
        config.forwarder = forwarder;
        config
    }

    /// The forwarder among `found` (the processes on the URL's port) and the process it passes
    /// connections on to; `None` when none of them is a forwarder, or the probe saw it pass none
    /// to a process of this machine.
    pub fn follow_forwarder(&self, found: &[i32]) -> Option<Forwarder> {
        let (pid, name) = forwarder_among(found)?;
        let uri: http::Uri = self.base.url.parse().ok()?;
        let host = uri
            .host()?
            .trim_start_matches('[')
            .trim_end_matches(']')
            .to_string();
        let tls = uri.scheme_str() == Some("https");
        let probe = Probe {
            host,
            port: uri.port_u16().unwrap_or(if tls { 443 } else { 80 }),
            path: uri
                .path_and_query()
                .map_or("/".to_string(), |p| p.as_str().to_string()),
            tls,
        };
        let skip: Vec<u16> = self
            .mock
            .as_deref()
            .and_then(|m| m.parse::<http::Uri>().ok())
            .and_then(|m| m.port_u16())
            .into_iter()
            .collect();
        Some(follow(pid, &probe, &skip)?.into_forwarder(name, pid))
    }
}
