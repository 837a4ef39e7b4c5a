//! The load engine over HTTP/2 (h2c, prior knowledge) against an in-process server made with
//! the `h2` crate's server side, which can refuse streams, end connections with an error
//! `GOAWAY`, cap concurrent streams and count the streams it sees per connection. (nginx over
//! h2 and h2c is in the CLI's tests, `tests/cli/cli_h2.rs`.)
use chokepoint_load::{start, LoadConfig, LoadError};
use chokepoint_result::error_kind;
use h2::Reason;
use std::sync::atomic::{AtomicU64, Ordering::SeqCst};
use std::sync::{Arc, Mutex};
use std::time::Duration;
use tokio::net::TcpListener;
use tokio_util::sync::CancellationToken;

/// How the test server answers.
#[derive(Debug, Clone, Copy)]
struct Behaviour {
    /// Reset every k-th stream of a connection with REFUSED_STREAM.
    refuse_every: Option<u64>,
    /// After answering this many streams on a connection, end it with GOAWAY
    /// (ENHANCE_YOUR_CALM) instead of answering the next.
    goaway_after: Option<u64>,
    /// SETTINGS_MAX_CONCURRENT_STREAMS.
    max_streams: Option<u32>,
    /// Before each response.
    delay: Duration,
}

const PLAIN: Behaviour = Behaviour {
    refuse_every: None,
    goaway_after: None,
    max_streams: None,
    delay: Duration::ZERO,
};

#[derive(Default)]
struct Seen {
    connections: AtomicU64,
    streams: AtomicU64,
    /// Per connection, the most streams it had open at once.
    max_open: Mutex<Vec<u64>>,
}

struct Server {
    url: String,
    seen: Arc<Seen>,
    _runtime: tokio::runtime::Runtime,
}

fn server(behaviour: Behaviour) -> Server {
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .thread_name("test-h2-server")
        .enable_all()
        .build()
        .unwrap();
    let listener = runtime.block_on(TcpListener::bind("127.0.0.1:0")).unwrap();
    let url = format!("http://{}/x", listener.local_addr().unwrap());
    let seen = Arc::new(Seen::default());
    let counted = seen.clone();
    runtime.spawn(async move {
        while let Ok((stream, _)) = listener.accept().await {
            counted.connections.fetch_add(1, SeqCst);
            tokio::spawn(serve(stream, behaviour, counted.clone()));
        }
    });
    Server {
        url,
        seen,
        _runtime: runtime,
    }
}

async fn serve(stream: tokio::net::TcpStream, behaviour: Behaviour, seen: Arc<Seen>) {
    let mut builder = h2::server::Builder::new();
    if let Some(max) = behaviour.max_streams {
        builder.max_concurrent_streams(max);
    }
    let Ok(mut connection) = builder.handshake::<_, bytes::Bytes>(stream).await else {
        return;
    };
    let slot = {
        let mut max_open = seen.max_open.lock().unwrap();
        max_open.push(0);
        max_open.len() - 1
    };
    let open = Arc::new(AtomicU64::new(0));
    let mut streams = 0u64;
    while let Some(Ok((_request, mut respond))) = connection.accept().await {
        streams += 1;
        seen.streams.fetch_add(1, SeqCst);
        if behaviour.goaway_after.is_some_and(|k| streams > k) {
            connection.abrupt_shutdown(Reason::ENHANCE_YOUR_CALM);
            break;
        }
        if behaviour
            .refuse_every
            .is_some_and(|k| streams.is_multiple_of(k))
        {
            respond.send_reset(Reason::REFUSED_STREAM);
            continue;
        }
        let now = open.fetch_add(1, SeqCst) + 1;
        {
            let mut max_open = seen.max_open.lock().unwrap();
            max_open[slot] = max_open[slot].max(now);
        }
        let open = open.clone();
        tokio::spawn(async move {
            tokio::time::sleep(behaviour.delay).await;
            open.fetch_sub(1, SeqCst);
            let response = http::Response::new(());
            if let Ok(mut body) = respond.send_response(response, false) {
                let _ = body.send_data(bytes::Bytes::from_static(b"ok"), true);
            }
        });
    }
    // Lets the GOAWAY (or the last responses) go out before the connection is dropped.
    let _ = std::future::poll_fn(|cx| connection.poll_closed(cx)).await;
}

fn h2_config(url: &str, clients: u32, connections: u32, requests: u64) -> LoadConfig {
    let mut config = LoadConfig::new(url).unwrap();
    config.http2 = true;
    config.clients = clients;
    config.connections = connections;
    config.duration = None;
    config.requests = Some(requests);
    config.timeout = Duration::from_secs(10);
    config
}

fn go(config: LoadConfig) -> Result<chokepoint_result::LoadReport, LoadError> {
    start(config, CancellationToken::new())?.finish()
}

#[test]
fn refused_streams_are_their_own_failure_kind() {
    let server = server(Behaviour {
        refuse_every: Some(4),
        ..PLAIN
    });
    let report = go(h2_config(&server.url, 1, 1, 100)).unwrap();
    assert_eq!(report.requests, 100);
    assert_eq!(report.ok, 75);
    assert_eq!(report.errors.get(error_kind::REFUSED_STREAM), Some(&25));
    assert_eq!(report.errors.len(), 1, "{:?}", report.errors);
    assert_eq!(server.seen.streams.load(SeqCst), 100);
}

#[test]
fn an_error_goaway_fails_its_stream_and_the_next_opens_a_new_connection() {
    let server = server(Behaviour {
        goaway_after: Some(10),
        ..PLAIN
    });
    let report = go(h2_config(&server.url, 1, 1, 33)).unwrap();
    assert_eq!(report.ok, 30, "{:?}", report.errors);
    assert_eq!(
        report.errors.get(error_kind::GOAWAY),
        Some(&3),
        "{:?}",
        report.errors
    );
    let h2 = report.http2.expect("an HTTP/2 run has HTTP/2 figures");
    assert_eq!(h2.goaways, 3);
    assert_eq!(h2.per_connection[0].opened, 3);
    assert_eq!(report.connections_opened, 3);
    // The preflight's connection, and three for the run.
    assert_eq!(server.seen.connections.load(SeqCst), 4);
}

#[test]
fn streams_are_spread_over_the_connections_and_counted_in_flight() {
    let server = server(Behaviour {
        delay: Duration::from_millis(50),
        ..PLAIN
    });
    let report = go(h2_config(&server.url, 8, 2, 80)).unwrap();
    assert_eq!((report.requests, report.ok), (80, 80));
    let h2 = report.http2.unwrap();
    assert_eq!((h2.protocol.as_str(), h2.connections), ("h2c", 2));
    assert_eq!(h2.server_max_concurrent_streams, None, "no limit was set");
    assert_eq!(h2.per_connection.len(), 2);
    let per_connection: u64 = h2.per_connection.iter().map(|c| c.requests).sum();
    assert_eq!(per_connection, 80, "{h2:?}");
    for connection in &h2.per_connection {
        // Each client takes the run's next request when its last one ended: the split between
        // the connections is near 40/40, not exactly.
        assert!(connection.requests > 0, "{h2:?}");
        assert_eq!(connection.max_streams_in_flight, 4, "{h2:?}");
        assert!(
            connection.mean_streams_in_flight > 0.0 && connection.mean_streams_in_flight <= 4.0,
            "{h2:?}"
        );
    }
    assert_eq!(h2.max_streams_in_flight, 4);
    // Server-side: two connections besides the preflight's, four streams open on each.
    let mut max_open = server.seen.max_open.lock().unwrap().clone();
    max_open.sort();
    assert_eq!(max_open, vec![0, 4, 4], "the preflight opened no stream");
}

#[test]
fn the_servers_stream_limit_is_read_and_never_exceeded() {
    let server = server(Behaviour {
        max_streams: Some(2),
        delay: Duration::from_millis(20),
        ..PLAIN
    });
    let report = go(h2_config(&server.url, 6, 1, 60)).unwrap();
    assert_eq!(report.ok, 60, "{:?}", report.errors);
    let h2 = report.http2.unwrap();
    assert_eq!(h2.server_max_concurrent_streams, Some(2));
    // The client's six streams were all sent; four at a time waited inside the client.
    assert_eq!(h2.max_streams_in_flight, 6);
    let max_open = server.seen.max_open.lock().unwrap().clone();
    assert_eq!(max_open.iter().max(), Some(&2), "{max_open:?}");
}

#[test]
fn a_server_that_does_not_speak_http2_is_refused_before_any_request() {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = listener.local_addr().unwrap();
    let http1 = std::thread::spawn(move || {
        use std::io::{Read, Write};
        let (mut stream, _) = listener.accept().unwrap();
        let mut buffer = [0u8; 1024];
        let _ = stream.read(&mut buffer);
        let _ = stream.write_all(b"HTTP/1.1 400 Bad Request\r\ncontent-length: 0\r\n\r\n");
    });
    let error = go(h2_config(&format!("http://{addr}/"), 2, 1, 10)).unwrap_err();
    let message = error.to_string();
    assert!(
        matches!(error, LoadError::Config(_)) && message.contains("does not speak HTTP/2"),
        "{message}"
    );
    assert!(
        message.contains("--http2") && !message.contains('\n'),
        "{message}"
    );
    http1.join().unwrap();
}
