//! `chokepoint mock`: the controlled downstream, on a port, until Ctrl-C.
use super::common;
use anyhow::Context;
use std::net::{IpAddr, SocketAddr};
use std::path::PathBuf;
use std::process::ExitCode;
use std::time::Duration;

/// Arguments of `chokepoint mock`.
#[derive(Debug, clap::Args)]
pub struct Args {
    /// Port to listen on for HTTP (0 picks a free one; default 8080, none with only --https-port)
    #[arg(short, long)]
    pub port: Option<u16>,
    /// Also (or, without --port, only) serve HTTPS on this port (0 picks a free one)
    #[arg(long, value_name = "PORT")]
    pub https_port: Option<u16>,
    /// HTTPS certificate chain, PEM (default: a self-signed one made at start, written to a file
    /// whose path is printed)
    #[arg(long, value_name = "FILE", requires_all = ["https_port", "tls_key"])]
    pub tls_cert: Option<PathBuf>,
    /// The private key of --tls-cert, PEM
    #[arg(long, value_name = "FILE", requires = "tls_cert")]
    pub tls_key: Option<PathBuf>,
    /// Address to listen on
    #[arg(long, default_value = "127.0.0.1")]
    pub bind: IpAddr,
    /// Global delay added to every stub response, e.g. 1s or 100ms
    #[arg(long, value_parser = common::duration, allow_hyphen_values = true)]
    pub delay: Option<Duration>,
    /// WireMock mappings: a JSON file, or a folder (mappings/*.json with __files/ beside, and
    /// grpc/*.dsc descriptor sets: gRPC calls to their methods are matched and answered as
    /// JSON); recordings (/__admin/recordings/stop, snapshot) are written to the folder's
    /// mappings/
    #[arg(long, value_name = "DIR_OR_FILE")]
    pub mappings: Option<PathBuf>,
    /// Serve at most N connections at once; others wait as in a full accept queue
    #[arg(long, value_name = "N", value_parser = common::positive_count, allow_hyphen_values = true)]
    pub max_connections: Option<u64>,
    /// Advertise and enforce SETTINGS_MAX_CONCURRENT_STREAMS = N on each HTTP/2 connection:
    /// streams beyond N are refused (REFUSED_STREAM), so clients queue (default: no limit)
    #[arg(long, value_name = "N", value_parser = stream_cap, allow_hyphen_values = true)]
    pub max_concurrent_streams: Option<u32>,
    /// Close keep-alive connections idle this long (default: keep them until the client closes)
    #[arg(long, value_parser = common::positive_duration, allow_hyphen_values = true)]
    pub keepalive_timeout: Option<Duration>,
    /// Keep the last N requests for GET /__admin/requests (0 = off)
    #[arg(long, value_name = "N", default_value_t = 0)]
    pub journal: usize,
    /// Render every stub's response as a template, as WireMock's flag of the same name does
    #[arg(long)]
    pub global_response_templating: bool,
    /// Forward any request no stub matches to this downstream (http[s]://host:port), as
    /// WireMock's --proxy-all does; the stubs' delays and the in-flight count still apply. An
    /// https downstream is trusted by the system's roots and --proxy-cacert
    #[arg(long, value_name = "URL")]
    pub proxy_all: Option<String>,
    /// Also trust these PEM certificates (a CA, or a server's own self-signed one) for https
    /// proxyBaseUrl, --proxy-all and webhook targets, besides the system's roots
    #[arg(long, value_name = "FILE")]
    pub proxy_cacert: Option<PathBuf>,
}

/// Runs the subcommand.
pub fn run(args: Args) -> anyhow::Result<ExitCode> {
    if let Some(Err(reason)) = args
        .proxy_cacert
        .as_deref()
        .map(chokepoint_mock::mapping::check_proxy_cacert)
    {
        anyhow::bail!("{reason}");
    }
    let recordings_dir = args.mappings.as_deref().and_then(recordings_folder);
    // A WireMock root's grpc/ descriptor sets, as WireMock's gRPC extension reads them.
    let grpc_schema = match args.mappings.as_deref().filter(|path| path.is_dir()) {
        Some(root) => chokepoint_mock::mapping::grpc_schema(root)?.map(std::sync::Arc::new),
        None => None,
    };
    let (mappings, files_root) = match &args.mappings {
        Some(path) => {
            let source = chokepoint_mock::mapping::locate(path)?;
            // A WireMock root whose mappings/ is empty is a mock to record into.
            let root_to_record_into = path.join("mappings").is_dir();
            if source.files.is_empty() && !root_to_record_into {
                anyhow::bail!(
                    "no *.json mappings in {}: give a mapping file or a folder holding mappings/",
                    path.display()
                );
            }
            let mappings = chokepoint_mock::load_mappings(path).map_err(|err| {
                // Every problem on its own line, then the one-line verdict.
                let problems = err.problems();
                if problems.len() > 1 {
                    for problem in &problems {
                        eprintln!("chokepoint: {problem}");
                    }
                    anyhow::anyhow!(
                        "{} problems in the mappings at {} (listed above): nothing is served; \
                         fix them and start again",
                        problems.len(),
                        path.display()
                    )
                } else {
                    anyhow::Error::new(err)
                }
            })?;
            (mappings, source.files_root)
        }
        None => (Vec::new(), None),
    };
    let mut mappings = mappings;
    if let Some(url) = &args.proxy_all {
        if let Err(reason) = chokepoint_mock::mapping::check_proxy_url(url) {
            anyhow::bail!("--proxy-all {reason}");
        }
        mappings.push(chokepoint_mock::proxy_all(url)?);
    }
    let stub_count = mappings.len();
    let config = chokepoint_mock::MockConfig {
        fixed_delay: args.delay.filter(|d| !d.is_zero()),
        mappings,
        max_connections: args
            .max_connections
            .map(|n| usize::try_from(n).unwrap_or(usize::MAX)),
        keepalive_timeout: args.keepalive_timeout,
        journal: args.journal,
        files_root,
        global_templating: args.global_response_templating,
        recordings_dir,
        proxy_cacert: args.proxy_cacert.clone(),
        max_concurrent_streams: args.max_concurrent_streams,
        grpc_schema,
    };
    let plain_port = match (args.port, args.https_port) {
        (Some(port), _) => Some(port),
        (None, None) => Some(8080),
        (None, Some(_)) => None,
    };
    let listener = match plain_port {
        Some(port) => {
            let listener = chokepoint_mock::bind(SocketAddr::new(args.bind, port))?;
            let local = listener
                .local_addr()
                .context("cannot read the listening address")?;
            println!(
                "{}",
                describe(&format!("http://{local}"), &config, stub_count)
            );
            Some(listener)
        }
        None => None,
    };
    let https = match args.https_port {
        Some(port) => {
            let listener = chokepoint_mock::bind(SocketAddr::new(args.bind, port))?;
            let local = listener
                .local_addr()
                .context("cannot read the listening address")?;
            let tls = match (&args.tls_cert, &args.tls_key) {
                (Some(cert), Some(key)) => chokepoint_mock::MockTls::from_pem_files(cert, key)?,
                _ => chokepoint_mock::MockTls::self_signed(
                    &std::env::temp_dir().join(format!("chokepoint-mock-{}.pem", local.port())),
                )?,
            };
            println!(
                "{}",
                describe(&format!("https://{local}"), &config, stub_count)
            );
            println!(
                "chokepoint mock: HTTPS certificate at {} (trust it in the service under test)",
                tls.cert_path.display()
            );
            Some((listener, tls))
        }
        None => None,
    };
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .thread_name("cp-mock")
        .enable_all()
        .build()
        .context("cannot start the runtime")?;
    runtime.block_on(async move {
        let listener = listener
            .map(tokio::net::TcpListener::from_std)
            .transpose()
            .context("cannot listen")?;
        let https = match https {
            Some((listener, tls)) => Some((
                tokio::net::TcpListener::from_std(listener).context("cannot listen")?,
                tls,
            )),
            None => None,
        };
        let shutdown = tokio_util::sync::CancellationToken::new();
        let on_ctrl_c = shutdown.clone();
        tokio::spawn(async move {
            let _ = tokio::signal::ctrl_c().await;
            on_ctrl_c.cancel();
        });
        chokepoint_mock::serve_plain_and_https(listener, https, config, shutdown).await?;
        anyhow::Ok(())
    })?;
    Ok(ExitCode::SUCCESS)
}

/// Where recordings are written: a WireMock root's `mappings/`, or the folder of mappings itself
/// (none for a single mapping file).
fn recordings_folder(mappings: &std::path::Path) -> Option<PathBuf> {
    if !mappings.is_dir() {
        return None;
    }
    let inside = mappings.join("mappings");
    Some(if inside.is_dir() {
        inside
    } else {
        mappings.to_path_buf()
    })
}

/// `--max-concurrent-streams`: at least 1, and a 32-bit HTTP/2 setting.
fn stream_cap(text: &str) -> Result<u32, String> {
    let n = common::positive_count(text)?;
    u32::try_from(n).map_err(|_| format!("'{text}' is too many streams: at most {}", u32::MAX))
}

/// The one start line: where it listens and how it is configured.
fn describe(url: &str, config: &chokepoint_mock::MockConfig, stubs: usize) -> String {
    let delay = config
        .fixed_delay
        .map_or("none".to_string(), |d| format!("{d:?}"));
    let stubs = if stubs == 0 {
        "every request 200 OK".to_string()
    } else {
        format!("{stubs} stubs")
    };
    let cap = config
        .max_connections
        .map_or("unlimited".to_string(), |n| n.to_string());
    let streams = config
        .max_concurrent_streams
        .map_or("unlimited".to_string(), |n| n.to_string());
    let keepalive = config
        .keepalive_timeout
        .map_or("until the client closes".to_string(), |d| format!("{d:?}"));
    let journal = match config.journal {
        0 => "off".to_string(),
        n => format!("last {n}"),
    };
    format!(
        "chokepoint mock listening on {url} (delay {delay}; {stubs}; max connections \
         {cap}; HTTP/2 streams per connection {streams}; keep-alive {keepalive}; journal {journal}; stats at /__chokepoint/stats)"
    )
}
