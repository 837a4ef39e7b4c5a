//! A proxy's caps on its upstream servers, and HAProxy's on the client connections a frontend
//! accepts (its `maxconn`: past it connections wait unaccepted in the listen queue), read from
//! the configuration its command line names:
//! HAProxy's `maxconn` on a `server` line (`-f FILE`, or every `.cfg` of `-f DIR`), nginx's
//! `max_conns=` on a `server` of an `upstream` block (`-c FILE`, else Debian's
//! `/etc/nginx/nginx.conf`, with its `include`s). Past the cap HAProxy queues a request in the
//! backend and nginx answers 502 at once (open-source nginx has no upstream queue): no thread
//! waits on either, so the configuration is the one place that says the number.
//!
//! Read once, when a sweep ends, for the target's processes named `haproxy` or `nginx`; only
//! each cap, the server's address and the line that set it are kept. A file that is gone or may
//! not be read gives nothing. Written by hand: no crate on crates.io parses either format, and
//! only these two directives are read (each file read whole, a few kilobytes).
use chokepoint_result::{FrontCap, UpstreamCap};
use procfs::process::Process;
use std::path::{Path, PathBuf};

/// nginx's configuration when `-c` does not name one (Debian's `--conf-path`).
const NGINX_DEFAULT: &str = "/etc/nginx/nginx.conf";
/// The keywords that open a section of HAProxy's configuration.
const HAPROXY_SECTIONS: &[&str] = &[
    "global",
    "defaults",
    "frontend",
    "backend",
    "listen",
    "resolvers",
    "peers",
    "userlist",
    "program",
    "http-errors",
    "ring",
    "cache",
    "mailers",
];
/// Files an nginx configuration may include, at most: a loop of includes stops there.
const MOST_FILES: usize = 64;

/// The upstream caps the proxies among `pids` are configured with, each once.
pub fn upstream_caps(pids: &[i32]) -> Vec<UpstreamCap> {
    let mut caps: Vec<UpstreamCap> = Vec::new();
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        let Ok(comm) = process.stat().map(|s| s.comm) else {
            continue;
        };
        // nginx rewrites its command line into one title ("nginx: master process
        // /usr/sbin/nginx -c FILE"): its words are the arguments.
        let args: Vec<String> = process
            .cmdline()
            .unwrap_or_default()
            .iter()
            .flat_map(|arg| arg.split_whitespace().map(String::from).collect::<Vec<_>>())
            .collect();
        let cwd = process.cwd().unwrap_or_default();
        let found = match comm.as_str() {
            "haproxy" => haproxy_files(&args, &cwd)
                .iter()
                .filter_map(|file| std::fs::read_to_string(file).ok())
                .flat_map(|text| haproxy_caps(&text))
                .collect(),
            // A worker's title names no file: it would read the default one, maybe another
            // nginx's. Its master's command line names the one both run.
            "nginx" if is_nginx_worker(&args) => Vec::new(),
            "nginx" => nginx_caps_in(&nginx_file(&args, &cwd)),
            _ => Vec::new(),
        };
        for cap in found {
            if !caps.contains(&cap) {
                caps.push(cap);
            }
        }
    }
    caps
}

/// Whether nginx's title (`nginx: worker process`, `nginx: cache manager process`) is not its
/// master's (`nginx: master process /usr/sbin/nginx -c FILE`).
fn is_nginx_worker(args: &[String]) -> bool {
    args.first().is_some_and(|w| w == "nginx:") && args.get(1).is_some_and(|w| w != "master")
}

/// The files of HAProxy's `-f` arguments: a file, or a folder's `.cfg` files in name order.
fn haproxy_files(args: &[String], cwd: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    for pair in args.windows(2) {
        if pair[0] != "-f" {
            continue;
        }
        let path = cwd.join(&pair[1]);
        match std::fs::read_dir(&path) {
            Ok(entries) => {
                let mut cfgs: Vec<PathBuf> = entries
                    .filter_map(|e| Some(e.ok()?.path()))
                    .filter(|p| p.extension().is_some_and(|x| x == "cfg"))
                    .collect();
                cfgs.sort();
                files.extend(cfgs);
            }
            Err(_) => files.push(path),
        }
    }
    files
}

/// The caps HAProxy's configuration `text` sets: each `server` line's `maxconn`, or the one a
/// `default-server` line set before it in its section or in the `defaults` section before that
/// (HAProxy 2.6 `doc/configuration.txt`, "default-server"). 0 is no cap.
pub fn haproxy_caps(text: &str) -> Vec<UpstreamCap> {
    let maxconn = |words: &[&str]| {
        words
            .windows(2)
            .find(|w| w[0] == "maxconn")
            .and_then(|w| w[1].parse::<u32>().ok())
    };
    let (mut from_defaults, mut in_section) = (None, None);
    let mut in_defaults = false;
    let mut caps = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&keyword) = words.first() else {
            continue;
        };
        if HAPROXY_SECTIONS.contains(&keyword) {
            in_defaults = keyword == "defaults";
            if in_defaults {
                from_defaults = None;
            }
            in_section = from_defaults;
            continue;
        }
        match keyword {
            "default-server" => {
                let set = maxconn(&words).or(in_section);
                if in_defaults {
                    from_defaults = set;
                }
                in_section = set;
            }
            "server" if words.len() >= 3 => {
                let Some(cap) = maxconn(&words).or(in_section).filter(|n| *n > 0) else {
                    continue;
                };
                caps.push(UpstreamCap {
                    program: "haproxy".into(),
                    address: words[2].to_string(),
                    port: port_of(words[2]),
                    cap,
                    directive: format!("server {} {} maxconn {cap}", words[1], words[2]),
                });
            }
            _ => {}
        }
    }
    caps
}

/// The caps on client connections the HAProxy processes among `pids` accept, per bound port.
pub fn front_caps(pids: &[i32]) -> Vec<FrontCap> {
    let mut caps: Vec<FrontCap> = Vec::new();
    for &pid in pids {
        let Ok(process) = Process::new(pid) else {
            continue;
        };
        if !process.stat().is_ok_and(|s| s.comm == "haproxy") {
            continue;
        }
        let args = process.cmdline().unwrap_or_default();
        let cwd = process.cwd().unwrap_or_default();
        let text: String = haproxy_files(&args, &cwd)
            .iter()
            .filter_map(|file| std::fs::read_to_string(file).ok())
            .collect::<Vec<_>>()
            .join("\n");
        for cap in haproxy_front_caps(&text) {
            if !caps.contains(&cap) {
                caps.push(cap);
            }
        }
    }
    caps
}

/// The cap on client connections each `frontend` or `listen` section of HAProxy's
/// configuration `text` sets on the ports its `bind` lines name: its `maxconn`, else the one of
/// the `defaults` section before it, else the `global` one (HAProxy 2.6
/// `doc/configuration.txt`, "maxconn" among the proxy keywords: "When this value is set to
/// zero, which is the default, the global maxconn value is used"). A global `maxconn` left
/// unset is HAProxy's own reckoning from its file limit, which no file states: no cap then.
pub fn haproxy_front_caps(text: &str) -> Vec<FrontCap> {
    /// One `frontend` or `listen` section as read so far.
    struct Front {
        name: String,
        ports: Vec<u16>,
        maxconn: Option<u32>,
    }
    let maxconn = |words: &[&str]| match words {
        ["maxconn", n, ..] => n.parse::<u32>().ok(),
        _ => None,
    };
    let (mut global, mut defaults) = (None, None);
    let mut section = "";
    let mut fronts: Vec<(Front, Option<u32>)> = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        let words: Vec<&str> = line.split_whitespace().collect();
        let Some(&keyword) = words.first() else {
            continue;
        };
        if HAPROXY_SECTIONS.contains(&keyword) {
            section = keyword;
            if section == "defaults" {
                defaults = None;
            }
            if matches!(section, "frontend" | "listen") {
                let front = Front {
                    name: words.get(1).copied().unwrap_or_default().to_string(),
                    ports: Vec::new(),
                    maxconn: None,
                };
                fronts.push((front, defaults));
            }
            continue;
        }
        match (section, keyword) {
            ("global", "maxconn") => global = maxconn(&words),
            ("defaults", "maxconn") => defaults = maxconn(&words),
            ("frontend" | "listen", "maxconn") => {
                if let Some((front, _)) = fronts.last_mut() {
                    front.maxconn = maxconn(&words);
                }
            }
            ("frontend" | "listen", "bind") => {
                if let (Some((front, _)), Some(addresses)) = (fronts.last_mut(), words.get(1)) {
                    front.ports.extend(addresses.split(',').filter_map(port_of));
                }
            }
            _ => {}
        }
    }
    let mut caps = Vec::new();
    for (front, from_defaults) in fronts {
        let (cap, directive) = match (front.maxconn, from_defaults, global) {
            (Some(n), _, _) if n > 0 => (n, format!("frontend {}: maxconn {n}", front.name)),
            (_, Some(n), _) if n > 0 => (n, format!("defaults: maxconn {n}")),
            (_, _, Some(n)) if n > 0 => (n, format!("global: maxconn {n}")),
            _ => continue,
        };
        caps.extend(front.ports.iter().map(|&port| FrontCap {
            program: "haproxy".into(),
            port,
            cap,
            directive: directive.clone(),
        }));
    }
    caps
}

/// The file nginx reads: `-c FILE`, else its default.
fn nginx_file(args: &[String], cwd: &Path) -> PathBuf {
    args.windows(2)
        .find(|pair| pair[0] == "-c")
        .map_or_else(|| PathBuf::from(NGINX_DEFAULT), |pair| cwd.join(&pair[1]))
}

/// The caps of nginx's configuration at `file` and what it includes.
fn nginx_caps_in(file: &Path) -> Vec<UpstreamCap> {
    let base = file.parent().unwrap_or(Path::new("/")).to_path_buf();
    let mut pending = vec![file.to_path_buf()];
    let mut read = 0;
    let mut text = String::new();
    while let Some(next) = pending.pop() {
        read += 1;
        if read > MOST_FILES {
            break;
        }
        let Ok(body) = std::fs::read_to_string(&next) else {
            continue;
        };
        pending.extend(
            nginx_includes(&body)
                .iter()
                .flat_map(|i| matching(&base, i)),
        );
        text.push_str(&body);
        text.push('\n');
    }
    nginx_caps(&text)
}

/// The paths `include` statements of `text` name.
fn nginx_includes(text: &str) -> Vec<String> {
    statements(text)
        .filter_map(|(words, _)| match words.as_slice() {
            ["include", path] => Some(path.to_string()),
            _ => None,
        })
        .collect()
}

/// The files `pattern` names, relative to nginx's configuration folder `base`: one `*` in
/// its file name at most (`sites-enabled/*`, `conf.d/*.conf`).
fn matching(base: &Path, pattern: &str) -> Vec<PathBuf> {
    let path = base.join(pattern);
    let Some(name) = path.file_name().and_then(|n| n.to_str()) else {
        return Vec::new();
    };
    let Some((before, after)) = name.split_once('*') else {
        return vec![path.clone()];
    };
    let Some(folder) = path.parent() else {
        return Vec::new();
    };
    let mut found: Vec<PathBuf> = std::fs::read_dir(folder)
        .into_iter()
        .flatten()
        .filter_map(|e| e.ok())
        .map(|e| e.path())
        .filter(|p| {
            p.file_name()
                .and_then(|n| n.to_str())
                .is_some_and(|n| n.starts_with(before) && n.ends_with(after))
        })
        .collect();
    found.sort();
    found
}

/// The statements of an nginx configuration, each with whether it is inside an `upstream`
/// block: words up to `;`, blocks opened by `{` and closed by `}`, comments from `#`.
fn statements(text: &str) -> impl Iterator<Item = (Vec<&str>, bool)> {
    let mut blocks: Vec<bool> = Vec::new();
    let mut words: Vec<&str> = Vec::new();
    let mut out = Vec::new();
    for line in text.lines() {
        let line = line.split('#').next().unwrap_or_default();
        for token in line.split_inclusive([';', '{', '}']) {
            let end = token.chars().last();
            let body = token.trim_end_matches([';', '{', '}']);
            words.extend(body.split_whitespace());
            match end {
                Some(';') => {
                    out.push((std::mem::take(&mut words), blocks.last() == Some(&true)));
                }
                Some('{') => {
                    blocks.push(words.first() == Some(&"upstream"));
                    words.clear();
                }
                Some('}') => {
                    blocks.pop();
                    words.clear();
                }
                _ => {}
            }
        }
    }
    out.into_iter()
}

/// The caps nginx's configuration `text` sets: `max_conns=N` on a `server` of an `upstream`
/// block (0 is no cap).
pub fn nginx_caps(text: &str) -> Vec<UpstreamCap> {
    statements(text)
        .filter(|(words, in_upstream)| *in_upstream && words.first() == Some(&"server"))
        .filter_map(|(words, _)| {
            let address = *words.get(1)?;
            let cap = words
                .iter()
                .find_map(|w| w.strip_prefix("max_conns="))
                .and_then(|n| n.parse::<u32>().ok())
                .filter(|n| *n > 0)?;
            Some(UpstreamCap {
                program: "nginx".into(),
                address: address.to_string(),
                // A server without a port is on 80 (nginx's `server` in `upstream`).
                port: port_of(address).or((!address.starts_with("unix:")).then_some(80)),
                cap,
                directive: format!("server {address} max_conns={cap}"),
            })
        })
        .collect()
}

/// The port of `host:port` (`[::1]:8080` too).
fn port_of(address: &str) -> Option<u16> {
    address.rsplit_once(':')?.1.parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn haproxy_reads_each_frontends_maxconn_then_the_defaults_then_the_global() {
        let text = "\
global
    maxconn 4096   # the process's
defaults
    mode http
frontend front
    bind 127.0.0.1:8080,127.0.0.1:8081
    maxconn 16
    default_backend upstream
listen stats
    bind :9000
defaults
    maxconn 300
frontend second
    bind 0.0.0.0:8443 ssl crt /x.pem
backend upstream
    maxconn 50
    server s1 127.0.0.1:9090
";
        let caps: Vec<(u16, u32, String)> = haproxy_front_caps(text)
            .into_iter()
            .map(|c| (c.port, c.cap, c.directive))
            .collect();
        assert_eq!(
            caps,
            vec![
                (8080, 16, "frontend front: maxconn 16".to_string()),
                (8081, 16, "frontend front: maxconn 16".to_string()),
                (9000, 4096, "global: maxconn 4096".to_string()),
                (8443, 300, "defaults: maxconn 300".to_string()),
            ]
        );
        // No maxconn anywhere: HAProxy reckons one from its file limit, which no file states.
        assert!(haproxy_front_caps("frontend f\n  bind :80\n").is_empty());
        // The test target's own file.
        let target = std::fs::read_to_string(
            std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
                .join("../../tests/targets/haproxy-frontend-maxconn/haproxy.cfg"),
        )
        .expect("the target's configuration")
        .replace("{PORT}", "18080")
        .replace("{UPSTREAM}", "127.0.0.1:9090");
        let caps = haproxy_front_caps(&target);
        assert_eq!(caps.len(), 1);
        assert_eq!((caps[0].port, caps[0].cap), (18080, 16));
    }

    #[test]
    fn haproxy_reads_each_servers_maxconn_or_its_default_server() {
        let text = "\
global
    maxconn 4096
defaults
    mode http
    default-server maxconn 50
frontend web
    bind 127.0.0.1:8080
    default_backend app
backend app
    server s1 127.0.0.1:9090 maxconn 8 check  # the cap
    server s2 127.0.0.1:9091 check
backend other
    default-server maxconn 0
    server s3 10.0.0.1:80
";
        let caps = haproxy_caps(text);
        let told: Vec<(&str, Option<u16>, u32)> = caps
            .iter()
            .map(|c| (c.address.as_str(), c.port, c.cap))
            .collect();
        // The global maxconn caps what HAProxy accepts, not a server; 0 is no cap.
        assert_eq!(
            told,
            vec![
                ("127.0.0.1:9090", Some(9090), 8),
                ("127.0.0.1:9091", Some(9091), 50)
            ]
        );
        assert_eq!(caps[0].directive, "server s1 127.0.0.1:9090 maxconn 8");
    }

    #[test]
    fn nginx_reads_max_conns_in_upstream_blocks_only() {
        let text = "\
events { worker_connections 512; }
http {
    upstream app { server 127.0.0.1:9090 max_conns=8; server backend.local max_conns=3 weight=2; }
    upstream other {
        server unix:/run/app.sock;   # no cap
    }
    server { listen 8080; location / { proxy_pass http://app; } }
}
";
        let told: Vec<(String, Option<u16>, u32)> = nginx_caps(text)
            .into_iter()
            .map(|c| (c.address, c.port, c.cap))
            .collect();
        assert_eq!(
            told,
            vec![
                ("127.0.0.1:9090".to_string(), Some(9090), 8),
                ("backend.local".to_string(), Some(80), 3)
            ]
        );
    }

    #[test]
    fn an_nginx_worker_is_told_from_its_master_by_its_title() {
        let title = |t: &str| t.split(' ').map(String::from).collect::<Vec<_>>();
        assert!(is_nginx_worker(&title("nginx: worker process")));
        assert!(is_nginx_worker(&title("nginx: cache manager process")));
        assert!(!is_nginx_worker(&title(
            "nginx: master process /usr/sbin/nginx -c /x.conf"
        )));
        assert!(!is_nginx_worker(&title("/usr/sbin/nginx -c /x.conf")));
    }

    #[test]
    fn nginx_follows_its_includes() {
        let dir = std::env::temp_dir().join(format!("cp-nginx-{}", std::process::id()));
        std::fs::create_dir_all(dir.join("conf.d")).unwrap();
        std::fs::write(dir.join("nginx.conf"), "http { include conf.d/*.conf; }\n").unwrap();
        std::fs::write(
            dir.join("conf.d/app.conf"),
            "upstream app { server 127.0.0.1:7000 max_conns=12; }\n",
        )
        .unwrap();
        let caps = nginx_caps_in(&dir.join("nginx.conf"));
        std::fs::remove_dir_all(&dir).ok();
        assert_eq!(caps.len(), 1);
        assert_eq!((caps[0].port, caps[0].cap), (Some(7000), 12));
    }
}
