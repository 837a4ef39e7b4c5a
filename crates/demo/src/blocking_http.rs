//! A small blocking HTTP/1.1 GET client over `std::net::TcpStream`, with keep-alive
//! connections and an optional cap on calls at once.
//!
//! This is the blocking downstream client of the pool routes: the calling OS thread really parks
//! in a socket read for the whole downstream delay, as a thread does in a JDBC driver, a SOAP
//! connector or `HttpClient.send`. It is written by hand (about a hundred lines) rather than
//! taken from a crate because the demo needs two things a general client hides: the cap on
//! calls at once (seed 000's Camel pool of 25 connections: callers beyond it wait for a free
//! connection) and a read timeout on every socket, so that no thread stays parked forever after
//! the service stops. It understands `Content-Length`, chunked and close-delimited bodies.
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::{SocketAddr, TcpStream};
use std::sync::{Condvar, Mutex};
use std::time::Duration;

/// The largest downstream body read; the demo's downstream answers a few bytes.
const MAX_BODY_BYTES: usize = 16 * 1024 * 1024;
/// At most this many idle keep-alive connections are kept for reuse.
const MAX_IDLE: usize = 512;

/// A complete downstream response.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Response {
    /// The HTTP status code.
    pub status: u16,
    /// The body, de-chunked.
    pub body: Vec<u8>,
}

/// A blocking client for one downstream address.
pub struct BlockingClient {
    addr: SocketAddr,
    host_header: String,
    max_calls: Option<usize>,
    timeout: Duration,
    state: Mutex<ClientState>,
    slot_freed: Condvar,
}

#[derive(Default)]
struct ClientState {
    calls: usize,
    idle: Vec<BufReader<TcpStream>>,
}

impl BlockingClient {
    /// A client of `addr` (sent as the `Host` header `host_header`) allowing at most `max_calls`
    /// calls at once (`None`: no cap), with `timeout` on each connect, read and write.
    pub fn new(
        addr: SocketAddr,
        host_header: &str,
        max_calls: Option<usize>,
        timeout: Duration,
    ) -> Self {
        Self {
            addr,
            host_header: host_header.to_string(),
            max_calls,
            timeout,
            state: Mutex::new(ClientState::default()),
            slot_freed: Condvar::new(),
        }
    }

    /// The cap on calls at once, if any.
    pub fn max_calls(&self) -> Option<usize> {
        self.max_calls
    }

    /// GETs `path`, blocking the calling thread until the whole response has arrived (and first,
    /// when the cap is reached, until another call finishes).
    pub fn get(&self, path: &str) -> io::Result<Response> {
        let reused = self.acquire();
        let _slot = SlotGuard(self);
        let was_reused = reused.is_some();
        let mut connection = match reused {
            Some(connection) => connection,
            None => self.connect()?,
        };
        let outcome = match self.exchange(&mut connection, path) {
            // A kept-alive connection the server closed meanwhile: one retry on a fresh one.
            Err(err) if was_reused && is_stale_connection(&err) => {
                connection = self.connect()?;
                self.exchange(&mut connection, path)
            }
            other => other,
        };
        let (response, reusable) = outcome?;
        if reusable {
            self.release_idle(connection);
        }
        Ok(response)
    }

    /// Waits for a free slot, takes it, and returns an idle connection if there is one.
    fn acquire(&self) -> Option<BufReader<TcpStream>> {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if let Some(max) = self.max_calls {
            while state.calls >= max {
                state = self
                    .slot_freed
                    .wait(state)
                    .unwrap_or_else(|e| e.into_inner());
            }
        }
        state.calls += 1;
        state.idle.pop()
    }

    fn release_idle(&self, connection: BufReader<TcpStream>) {
        let mut state = self.state.lock().unwrap_or_else(|e| e.into_inner());
        if state.idle.len() < MAX_IDLE {
            state.idle.push(connection);
        }
    }

    fn connect(&self) -> io::Result<BufReader<TcpStream>> {
        let stream = TcpStream::connect_timeout(&self.addr, self.timeout)?;
        stream.set_read_timeout(Some(self.timeout))?;
        stream.set_write_timeout(Some(self.timeout))?;
        stream.set_nodelay(true)?;
        Ok(BufReader::new(stream))
    }

    /// Sends one GET and reads its response; says whether the connection can be reused.
    fn exchange(
        &self,
        connection: &mut BufReader<TcpStream>,
        path: &str,
    ) -> io::Result<(Response, bool)> {
        let request = format!(
            "GET {path} HTTP/1.1\r\nHost: {}\r\nUser-Agent: chokepoint-demo\r\nAccept: */*\r\n\r\n",
            self.host_header
        );
        connection.get_mut().write_all(request.as_bytes())?;
        read_response(connection)
    }
}

/// Frees the caller's slot however the call ends.
struct SlotGuard<'a>(&'a BlockingClient);

impl Drop for SlotGuard<'_> {
    fn drop(&mut self) {
        let mut state = self.0.state.lock().unwrap_or_else(|e| e.into_inner());
        state.calls -= 1;
        drop(state);
        self.0.slot_freed.notify_one();
    }
}

fn is_stale_connection(err: &io::Error) -> bool {
    matches!(
        err.kind(),
        io::ErrorKind::UnexpectedEof
            | io::ErrorKind::ConnectionReset
            | io::ErrorKind::ConnectionAborted
            | io::ErrorKind::BrokenPipe
    )
}

fn protocol_error(message: String) -> io::Error {
    io::Error::new(io::ErrorKind::InvalidData, message)
}

fn read_line(reader: &mut impl BufRead) -> io::Result<String> {
    let mut line = String::new();
    if reader.read_line(&mut line)? == 0 {
        return Err(io::Error::new(
            io::ErrorKind::UnexpectedEof,
            "the downstream closed the connection before answering",
        ));
    }
    Ok(line.trim_end_matches(['\r', '\n']).to_string())
}

/// Reads a status line, headers and body; the flag says whether the connection stays usable.
fn read_response(reader: &mut impl BufRead) -> io::Result<(Response, bool)> {
    let status_line = read_line(reader)?;
    let mut parts = status_line.split_whitespace();
    let version = parts.next().unwrap_or_default();
    let status = parts
        .next()
        .and_then(|code| code.parse::<u16>().ok())
        .filter(|_| version.starts_with("HTTP/1."))
        .ok_or_else(|| protocol_error(format!("not an HTTP/1.x status line: {status_line:?}")))?;
    let mut content_length = None;
    let mut chunked = false;
    let mut keep_alive = version == "HTTP/1.1";
    loop {
        let line = read_line(reader)?;
        if line.is_empty() {
            break;
        }
        let Some((name, value)) = line.split_once(':') else {
            return Err(protocol_error(format!("malformed header line: {line:?}")));
        };
        let value = value.trim();
        match name.trim().to_ascii_lowercase().as_str() {
            "content-length" => {
                let length = value
                    .parse::<usize>()
                    .ok()
                    .filter(|length| *length <= MAX_BODY_BYTES)
                    .ok_or_else(|| protocol_error(format!("bad Content-Length: {value:?}")))?;
                content_length = Some(length);
            }
            "transfer-encoding" => chunked = value.to_ascii_lowercase().contains("chunked"),
            "connection" => {
                let value = value.to_ascii_lowercase();
                if value.contains("close") {
                    keep_alive = false;
                } else if value.contains("keep-alive") {
                    keep_alive = true;
                }
            }
            _ => {}
        }
    }
    let no_body = status == 204 || status == 304 || (100..200).contains(&status);
    let body = if no_body {
        Vec::new()
    } else if chunked {
        read_chunked(reader)?
    } else if let Some(length) = content_length {
        let mut body = vec![0; length];
        reader.read_exact(&mut body)?;
        body
    } else {
        keep_alive = false; // the body ends when the server closes
        let mut body = Vec::new();
        reader.take(MAX_BODY_BYTES as u64).read_to_end(&mut body)?;
        body
    };
    Ok((Response { status, body }, keep_alive))
}

fn read_chunked(reader: &mut impl BufRead) -> io::Result<Vec<u8>> {
    let mut body = Vec::new();
    loop {
        let line = read_line(reader)?;
        let size_text = line.split(';').next().unwrap_or_default().trim();
        let size = usize::from_str_radix(size_text, 16)
            .map_err(|_| protocol_error(format!("bad chunk size: {line:?}")))?;
        if size == 0 {
            // Trailers, then the empty line.
            while !read_line(reader)?.is_empty() {}
            return Ok(body);
        }
        if body.len() + size > MAX_BODY_BYTES {
            return Err(protocol_error("downstream body too large".to_string()));
        }
        let start = body.len();
        body.resize(start + size, 0);
        reader.read_exact(&mut body[start..])?;
        read_line(reader)?; // the CRLF after the chunk
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::io::Cursor;
    use std::net::TcpListener;
    use std::sync::atomic::{AtomicUsize, Ordering};
    use std::sync::Arc;
    use std::thread;

    fn parse(raw: &str) -> io::Result<(Response, bool)> {
        read_response(&mut Cursor::new(raw.as_bytes().to_vec()))
    }

    #[test]
    fn reads_content_length_bodies() {
        let (response, reusable) =
            parse("HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nhello").expect("parses");
        assert_eq!(response.status, 200);
        assert_eq!(response.body, b"hello");
        assert!(reusable);
    }

    #[test]
    fn reads_chunked_bodies() {
        let raw = "HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2;x=y\r\nde\r\n0\r\n\r\n";
        let (response, reusable) = parse(raw).expect("parses");
        assert_eq!(response.status, 404);
        assert_eq!(response.body, b"abcde");
        assert!(reusable);
    }

    #[test]
    fn a_close_delimited_body_ends_the_connection() {
        let (response, reusable) = parse("HTTP/1.0 200 OK\r\n\r\nuntil close").expect("parses");
        assert_eq!(response.body, b"until close");
        assert!(!reusable);
        let (_, reusable) =
            parse("HTTP/1.1 200 OK\r\nConnection: close\r\nContent-Length: 0\r\n\r\n")
                .expect("parses");
        assert!(!reusable);
    }

    #[test]
    fn rejects_garbage() {
        assert!(parse("SSH-2.0-OpenSSH\r\n\r\n").is_err());
        assert!(parse("HTTP/1.1 200 OK\r\nContent-Length: x\r\n\r\n").is_err());
        assert!(parse("").is_err());
    }

    /// A server answering every request after `delay` on keep-alive connections, counting the
    /// most requests it held at once and the connections it accepted.
    fn delayed_server(delay: Duration) -> (SocketAddr, Arc<AtomicUsize>, Arc<AtomicUsize>) {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let addr = listener.local_addr().expect("addr");
        let (now, most, accepted) = (
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
            Arc::new(AtomicUsize::new(0)),
        );
        let (most_out, accepted_out) = (most.clone(), accepted.clone());
        thread::spawn(move || {
            for stream in listener.incoming().flatten() {
                accepted.fetch_add(1, Ordering::SeqCst);
                let (now, most) = (now.clone(), most.clone());
                thread::spawn(move || {
                    let mut reader = BufReader::new(stream);
                    while let Ok(first) = read_line(&mut reader) {
                        if first.is_empty() {
                            continue;
                        }
                        while !matches!(read_line(&mut reader).as_deref(), Ok("") | Err(_)) {}
                        let inflight = now.fetch_add(1, Ordering::SeqCst) + 1;
                        most.fetch_max(inflight, Ordering::SeqCst);
                        thread::sleep(delay);
                        now.fetch_sub(1, Ordering::SeqCst);
                        let answer = "HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
                        if reader.get_mut().write_all(answer.as_bytes()).is_err() {
                            return;
                        }
                    }
                });
            }
        });
        (addr, most_out, accepted_out)
    }

    #[test]
    fn the_cap_limits_calls_at_once_and_connections_are_reused() {
        let (addr, most, accepted) = delayed_server(Duration::from_millis(30));
        let client = Arc::new(BlockingClient::new(
            addr,
            "test",
            Some(3),
            Duration::from_secs(10),
        ));
        let callers: Vec<_> = (0..8)
            .map(|_| {
                let client = client.clone();
                thread::spawn(move || {
                    for _ in 0..3 {
                        let response = client.get("/x").expect("call succeeds");
                        assert_eq!(response.body, b"ok");
                    }
                })
            })
            .collect();
        for caller in callers {
            caller.join().expect("caller thread");
        }
        assert_eq!(most.load(Ordering::SeqCst), 3, "most calls at once");
        assert!(
            accepted.load(Ordering::SeqCst) <= 3,
            "connections opened: {}",
            accepted.load(Ordering::SeqCst)
        );
    }
}
