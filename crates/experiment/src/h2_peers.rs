//! After the steps, the downstream peers whose connections from the target carried several calls
//! at once are asked for their HTTP/2 SETTINGS, so that the diagnosis can read a stream cap the
//! mock cannot see (a proxy between the target and the mock: DESIGN.md, "A stream cap").
//!
//! Which peers ([`ask`]): those [`chokepoint_diagnose::multiplexed_peers`] names from the
//! finding and the steps' connections (fewer connections than calls in flight, at one count at
//! every plateau step: the calls multiplex, HTTP/2), and of those only a peer that is safe to
//! ask:
//! - on this machine's loopback, seen from this process: the target was read from this
//!   machine's `/proc` (not by an observer elsewhere) and shares this process's network
//!   namespace, so its 127.0.0.1 is ours;
//! - not on a port or run by a program known to speak something else that may multiplex calls
//!   on one connection (PostgreSQL, Redis, memcached, MongoDB, Cassandra, Kafka, AMQP...): an
//!   HTTP/2 preface makes such a server log an error.
//!
//! How ([`settings`]): one TCP connection, `h2`'s client handshake (the client preface and an
//! empty SETTINGS), one PING — the server's first frame is its SETTINGS (RFC 9113 §3.4), so once
//! the PING is answered its SETTINGS_MAX_CONCURRENT_STREAMS is known
//! (`h2::client::Connection::max_concurrent_send_streams`; none sent is unlimited, §6.5.2) —
//! then every handle dropped, on which `h2` sends GOAWAY(NO_ERROR) and closes. No request is
//! sent. First with prior knowledge (h2c); a peer that does not answer so is asked once more over
//! TLS with ALPN `h2` (`chokepoint_load::connect_h2_unverified`: its certificate is not checked,
//! since nothing is sent on the connection that a certificate would protect), as a proxy that
//! terminates TLS for its upstreams serves. Each attempt within [`ASK_TIMEOUT`].
use chokepoint_diagnose::Finding;
use chokepoint_result::{H2Answer, H2Peer, Step};
use std::net::SocketAddr;
use std::time::Duration;

/// The longest one peer is given to connect, answer the handshake and the PING, and close.
pub const ASK_TIMEOUT: Duration = Duration::from_secs(2);

/// Ports of servers that speak something else than HTTP and whose clients may multiplex calls
/// on one connection (pipelining, stream ids): never asked.
const OTHER_PROTOCOL_PORTS: [u16; 11] = [
    1433,  // SQL Server
    2181,  // ZooKeeper
    3306,  // MySQL
    4222,  // NATS
    5432,  // PostgreSQL
    5672,  // AMQP (RabbitMQ)
    6379,  // Redis, Valkey
    9042,  // Cassandra
    9092,  // Kafka
    11211, // memcached
    27017, // MongoDB
];

/// Programs (`comm`) of such servers: never asked, on whatever port.
const OTHER_PROTOCOL_PROGRAMS: [&str; 10] = [
    "postgres",
    "mysqld",
    "mariadbd",
    "redis-server",
    "valkey-server",
    "memcached",
    "mongod",
    "beam.smp",
    "nats-server",
    "zookeeper",
];

/// The peers to ask, asked: empty when the finding names no multiplexed peer or none is safe
/// to ask (see the module's doc). `roots` are the target's processes, `observed_here` whether
/// they were read from this machine's `/proc`.
pub fn ask(steps: &[Step], finding: &Finding, roots: &[i32], observed_here: bool) -> Vec<H2Peer> {
    let candidates = chokepoint_diagnose::multiplexed_peers(steps, finding);
    let here = observed_here && !roots.is_empty() && roots.iter().all(|&pid| in_our_netns(pid));
    if candidates.is_empty() || !here {
        return Vec::new();
    }
    let safe: Vec<(SocketAddr, Option<String>)> = candidates
        .into_iter()
        .filter(|addr| safe_to_ask(*addr, None))
        .map(|addr| (addr, program_listening_on(addr.port())))
        .filter(|(addr, program)| safe_to_ask(*addr, program.as_deref()))
        .collect();
    if safe.is_empty() {
        return Vec::new();
    }
    let Ok(runtime) = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
    else {
        return Vec::new();
    };
    safe.into_iter()
        .map(|(addr, program)| H2Peer {
            addr,
            program,
            answer: runtime.block_on(settings(addr, ASK_TIMEOUT)),
        })
        .collect()
}

/// Whether a peer at `addr`, run by `program` when known, may be sent an HTTP/2 preface: on
/// loopback, and on no port or program of a server known to speak something else.
fn safe_to_ask(addr: SocketAddr, program: Option<&str>) -> bool {
    addr.ip().is_loopback()
        && !OTHER_PROTOCOL_PORTS.contains(&addr.port())
        && program.is_none_or(|p| !OTHER_PROTOCOL_PROGRAMS.contains(&p))
}

/// Whether process `pid` is in this process's network namespace (its loopback is ours).
fn in_our_netns(pid: i32) -> bool {
    let theirs = std::fs::read_link(format!("/proc/{pid}/ns/net"));
    let ours = std::fs::read_link("/proc/self/ns/net");
    matches!((theirs, ours), (Ok(a), Ok(b)) if a == b)
}

/// The program (`comm`) of the topmost process listening on `port` here; `None` when none
/// this user may read.
fn program_listening_on(port: u16) -> Option<String> {
    let pid = *chokepoint_observe::listening_processes(port)
        .ok()?
        .first()?;
    let comm = std::fs::read_to_string(format!("/proc/{pid}/comm")).ok()?;
    Some(comm.trim().to_string())
}

/// What `addr` answers to an HTTP/2 handshake, with prior knowledge, else over TLS with ALPN
/// `h2`, each within `timeout`: its SETTINGS_MAX_CONCURRENT_STREAMS, or why it answered neither
/// as an HTTP/2 server.
pub async fn settings(addr: SocketAddr, timeout: Duration) -> H2Answer {
    let plain = within(timeout, async {
        let tcp = tokio::net::TcpStream::connect(addr)
            .await
            .map_err(|e| format!("cannot connect: {e}"))?;
        handshake_and_close(tcp).await
    })
    .await;
    let why_plain = match plain {
        Ok(max_concurrent_streams) => {
            return H2Answer::Settings {
                max_concurrent_streams,
            }
        }
        Err(why) => why,
    };
    let tls = within(timeout, async {
        handshake_and_close(chokepoint_load::connect_h2_unverified(addr).await?).await
    })
    .await;
    match tls {
        Ok(max_concurrent_streams) => H2Answer::Settings {
            max_concurrent_streams,
        },
        Err(why_tls) => H2Answer::NotH2 {
            why: format!("{why_plain}; over TLS: {why_tls}"),
        },
    }
}

/// `attempt`'s outcome, or a timeout's words after `timeout`.
async fn within<T>(
    timeout: Duration,
    attempt: impl std::future::Future<Output = Result<T, String>>,
) -> Result<T, String> {
    tokio::time::timeout(timeout, attempt)
        .await
        .unwrap_or_else(|_| Err(format!("no HTTP/2 answer within {timeout:?}")))
}

/// The handshake on `io`, one PING answered, the cap read, then GOAWAY and close.
async fn handshake_and_close<T>(io: T) -> Result<Option<u64>, String>
where
    T: tokio::io::AsyncRead + tokio::io::AsyncWrite + Unpin,
{
    let (send, mut connection) = h2::client::Builder::new()
        .enable_push(false)
        .handshake::<_, bytes::Bytes>(io)
        .await
        .map_err(|e| e.to_string())?;
    let mut ping = connection.ping_pong().ok_or("no PING handle")?;
    tokio::select! {
        ended = &mut connection => Err(match ended {
            Ok(()) => "it closed the connection".to_string(),
            Err(e) => e.to_string(),
        }),
        pong = ping.ping(h2::Ping::opaque()) => pong.map_err(|e| e.to_string()),
    }?;
    let streams = connection.max_concurrent_send_streams();
    // With no handle left, the connection sends GOAWAY(NO_ERROR) and closes.
    drop((send, ping));
    let _ = connection.await;
    Ok((streams != usize::MAX).then_some(streams as u64))
}

#[cfg(test)]
mod tests {
    use super::*;
    use chokepoint_mock::MockConfig;

    fn runtime() -> tokio::runtime::Runtime {
        tokio::runtime::Builder::new_current_thread()
            .enable_all()
            .build()
            .expect("a runtime")
    }

    #[test]
    fn only_loopback_peers_of_no_other_protocol_are_safe_to_ask() {
        let at = |ip: [u8; 4], port: u16| SocketAddr::from((ip, port));
        let table = [
            (at([127, 0, 0, 1], 8443), None, true),
            (at([127, 0, 0, 1], 8443), Some("nginx"), true),
            (
                SocketAddr::from(([0, 0, 0, 0, 0, 0, 0, 1], 50051)),
                Some("envoy"),
                true,
            ),
            (at([10, 0, 0, 5], 8443), None, false), // not this machine's loopback
            (at([127, 0, 0, 1], 6379), None, false), // Redis's port
            (at([127, 0, 0, 1], 5432), Some("postgres"), false),
            (at([127, 0, 0, 1], 7000), Some("redis-server"), false), // Redis elsewhere
        ];
        for (addr, program, safe) in table {
            assert_eq!(safe_to_ask(addr, program), safe, "{addr} {program:?}");
        }
    }

    #[test]
    fn a_capped_mock_answers_its_cap_and_an_uncapped_one_none() {
        for cap in [Some(8), None] {
            let mock = chokepoint_mock::start(
                "127.0.0.1:0".parse().expect("an address"),
                MockConfig {
                    max_concurrent_streams: cap,
                    ..MockConfig::default()
                },
            )
            .expect("the mock starts");
            let answer = runtime().block_on(settings(mock.addr(), ASK_TIMEOUT));
            assert_eq!(
                answer,
                H2Answer::Settings {
                    max_concurrent_streams: cap.map(u64::from)
                }
            );
        }
    }

    /// A peer that speaks HTTP/2 only over TLS (the mock's HTTPS port, ALPN `h2`) is asked
    /// there once prior knowledge fails: the cap it advertises.
    #[test]
    fn a_capped_mock_over_tls_answers_its_cap() {
        let cert = std::env::temp_dir().join(format!("cp-h2-peer-{}.pem", std::process::id()));
        let tls = chokepoint_mock::MockTls::self_signed(&cert).expect("a certificate");
        let mock = chokepoint_mock::start_with_https(
            "127.0.0.1:0".parse().expect("an address"),
            Some(("127.0.0.1:0".parse().expect("an address"), tls)),
            MockConfig {
                max_concurrent_streams: Some(8),
                ..MockConfig::default()
            },
        )
        .expect("the mock starts");
        let https: SocketAddr = mock
            .https_url()
            .expect("an HTTPS listener")
            .trim_start_matches("https://")
            .parse()
            .expect("its address");
        let answer = runtime().block_on(settings(https, ASK_TIMEOUT));
        let _ = std::fs::remove_file(&cert);
        assert_eq!(
            answer,
            H2Answer::Settings {
                max_concurrent_streams: Some(8)
            }
        );
    }

    /// The frame types a peer received on one connection, until it closed: a bare HTTP/2
    /// server written frame by frame (so that it sees every frame the probe sends), which
    /// advertises `cap` streams, acknowledges SETTINGS and answers PINGs.
    async fn frames_received(listener: tokio::net::TcpListener, cap: u32) -> Vec<u8> {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let (mut tcp, _) = listener.accept().await.expect("a connection");
        let mut preface = [0u8; 24];
        tcp.read_exact(&mut preface).await.expect("the preface");
        assert_eq!(&preface, b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n");
        let frame = |kind: u8, flags: u8, payload: &[u8]| {
            let mut f = (payload.len() as u32).to_be_bytes()[1..].to_vec();
            f.extend([kind, flags, 0, 0, 0, 0]);
            f.extend(payload);
            f
        };
        let mut settings = vec![0, 3];
        settings.extend(cap.to_be_bytes());
        tcp.write_all(&frame(4, 0, &settings))
            .await
            .expect("SETTINGS sent");
        let mut received = Vec::new();
        let mut header = [0u8; 9];
        while tcp.read_exact(&mut header).await.is_ok() {
            let length = u32::from_be_bytes([0, header[0], header[1], header[2]]) as usize;
            let (kind, flags) = (header[3], header[4]);
            let mut payload = vec![0u8; length];
            tcp.read_exact(&mut payload)
                .await
                .expect("a frame's payload");
            received.push(kind);
            let reply = match (kind, flags & 1) {
                (4, 0) => Some(frame(4, 1, &[])),      // SETTINGS: ACK
                (6, 0) => Some(frame(6, 1, &payload)), // PING: its ACK
                _ => None,
            };
            if let Some(reply) = reply {
                let _ = tcp.write_all(&reply).await;
            }
        }
        received
    }

    #[test]
    fn the_peer_gets_settings_a_ping_and_a_goaway_and_no_request() {
        let runtime = runtime();
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a listener");
        let addr = listener.local_addr().expect("its address");
        let server = runtime.spawn(frames_received(listener, 8));
        let answer = runtime.block_on(settings(addr, ASK_TIMEOUT));
        assert_eq!(
            answer,
            H2Answer::Settings {
                max_concurrent_streams: Some(8)
            }
        );
        let received = runtime.block_on(server).expect("the server's task");
        const HEADERS: u8 = 1;
        const GOAWAY: u8 = 7;
        assert!(
            !received.contains(&HEADERS),
            "a request was sent: {received:?}"
        );
        assert_eq!(received.last(), Some(&GOAWAY), "{received:?}");
    }

    #[test]
    fn a_peer_that_is_not_http2_is_told_as_such() {
        let runtime = runtime();
        // One that answers in HTTP/1.1 and closes; one that never answers.
        let listener = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a listener");
        let addr = listener.local_addr().expect("its address");
        runtime.spawn(async move {
            use tokio::io::AsyncWriteExt;
            let (mut tcp, _) = listener.accept().await.expect("a connection");
            let _ = tcp
                .write_all(b"HTTP/1.1 400 Bad Request\r\nConnection: close\r\n\r\n")
                .await;
        });
        let answer = runtime.block_on(settings(addr, ASK_TIMEOUT));
        assert!(matches!(answer, H2Answer::NotH2 { .. }), "{answer:?}");
        let silent = runtime
            .block_on(tokio::net::TcpListener::bind("127.0.0.1:0"))
            .expect("a listener");
        let addr = silent.local_addr().expect("its address");
        let answer = runtime.block_on(settings(addr, Duration::from_millis(300)));
        assert!(
            matches!(&answer, H2Answer::NotH2 { why } if why.contains("within")),
            "{answer:?}"
        );
        drop(silent);
    }
}
