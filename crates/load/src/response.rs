//! Reading an HTTP/1.1 response in place: the head parsed with httparse, the body (sized,
//! chunked, or up to the close) counted and skipped, the buffer grown only as far as needed.
use crate::failure::Failure;
use http::header;
use std::io::ErrorKind;
use std::mem::MaybeUninit;
use tokio::io::{AsyncRead, AsyncReadExt};

/// The most response-head bytes accepted (hyper's default is about as large).
pub(crate) const MAX_HEAD: usize = 64 * 1024;
/// How many headers a response may have.
const MAX_HEADERS: usize = 100;
/// The read buffer starts this small (10,000 idle clients must stay cheap) and doubles, up to
/// `MAX_BUFFER`, whenever a read fills it.
const FIRST_BUFFER: usize = 4 * 1024;
const MAX_BUFFER: usize = 256 * 1024;

/// Bytes read from the connection and not consumed yet: `data[start..end]`.
#[derive(Default)]
pub(crate) struct Inbox {
    data: Vec<u8>,
    start: usize,
    end: usize,
}

/// Why reading a response stopped.
pub(crate) enum ReadEnd {
    /// End of stream.
    Closed,
    Io(std::io::Error),
}

impl Inbox {
    pub(crate) fn clear(&mut self) {
        self.start = 0;
        self.end = 0;
    }

    pub(crate) fn pending(&self) -> &[u8] {
        &self.data[self.start..self.end]
    }

    pub(crate) fn consume(&mut self, n: usize) {
        self.start += n;
        if self.start == self.end {
            self.clear();
        }
    }

    /// Reads more bytes after the pending ones. The buffer grows only while a head, a chunk-size
    /// line or trailers (each bounded) fill it, and after full reads, up to `MAX_BUFFER`.
    pub(crate) async fn fill<S: AsyncRead + Unpin>(
        &mut self,
        stream: &mut S,
    ) -> Result<usize, ReadEnd> {
        if self.end == self.data.len() {
            if self.start > 0 {
                self.data.copy_within(self.start..self.end, 0);
                self.end -= self.start;
                self.start = 0;
            } else {
                let size = (self.data.len() * 2).max(FIRST_BUFFER);
                self.data.resize(size, 0);
            }
        }
        match stream.read(&mut self.data[self.end..]).await {
            Ok(0) => Err(ReadEnd::Closed),
            Ok(n) => {
                self.end += n;
                if self.end == self.data.len() && self.data.len() < MAX_BUFFER {
                    // A full read: a large response; read it in bigger pieces.
                    self.data.resize(self.data.len() * 2, 0);
                }
                Ok(n)
            }
            Err(e) => Err(ReadEnd::Io(e)),
        }
    }

    /// Consumes `n` bytes, reading (and discarding) what is not here yet.
    pub(crate) async fn skip<S: AsyncRead + Unpin>(
        &mut self,
        stream: &mut S,
        mut n: u64,
    ) -> Result<(), ReadEnd> {
        loop {
            let here = (self.end - self.start) as u64;
            if here >= n {
                self.consume(n as usize);
                return Ok(());
            }
            n -= here;
            self.clear();
            self.fill(stream).await?;
        }
    }
}

/// The framing of a response body.
pub(crate) enum Body {
    None,
    Length(u64),
    Chunked,
    UntilClose,
}

/// What the head of a response says.
pub(crate) struct Head {
    pub(crate) status: u16,
    pub(crate) length: usize,
    pub(crate) body: Body,
    pub(crate) keep_alive: bool,
}

/// Parses a response head at the start of `bytes`: `None` while it is incomplete.
pub(crate) fn parse_head(bytes: &[u8], head_request: bool) -> Result<Option<Head>, Failure> {
    if bytes.is_empty() {
        return Ok(None);
    }
    let mut headers = [const { MaybeUninit::<httparse::Header>::uninit() }; MAX_HEADERS];
    let mut response = httparse::Response::new(&mut []);
    let length = match httparse::ParserConfig::default().parse_response_with_uninit_headers(
        &mut response,
        bytes,
        &mut headers,
    ) {
        Ok(httparse::Status::Complete(length)) => length,
        Ok(httparse::Status::Partial) => return Ok(None),
        Err(_) => return Err(Failure::Protocol),
    };
    let status = response.code.unwrap_or(0);
    let mut keep_alive = response.version == Some(1);
    let mut content_length = None;
    let mut chunked = false;
    let mut transfer_encoding = false;
    for h in response.headers.iter() {
        let name = h.name.as_bytes();
        if name.eq_ignore_ascii_case(header::CONTENT_LENGTH.as_str().as_bytes()) {
            let parsed = std::str::from_utf8(h.value)
                .ok()
                .and_then(|v| v.trim().parse::<u64>().ok())
                .ok_or(Failure::Protocol)?;
            if content_length.is_some_and(|known| known != parsed) {
                return Err(Failure::Protocol);
            }
            content_length = Some(parsed);
        } else if name.eq_ignore_ascii_case(header::TRANSFER_ENCODING.as_str().as_bytes()) {
            transfer_encoding = true;
            // Chunked must be the last coding; only then is the body's end known.
            chunked = last_token(h.value).eq_ignore_ascii_case(b"chunked");
        } else if name.eq_ignore_ascii_case(header::CONNECTION.as_str().as_bytes()) {
            for token in h.value.split(|b| *b == b',') {
                let token = token.trim_ascii();
                if token.eq_ignore_ascii_case(b"close") {
                    keep_alive = false;
                } else if token.eq_ignore_ascii_case(b"keep-alive") {
                    keep_alive = true;
                }
            }
        }
    }
    let body = if head_request || (100..200).contains(&status) || status == 204 || status == 304 {
        Body::None
    } else if transfer_encoding {
        if chunked {
            Body::Chunked
        } else {
            Body::UntilClose
        }
    } else {
        match content_length {
            Some(0) => Body::None,
            Some(n) => Body::Length(n),
            None => Body::UntilClose,
        }
    };
    Ok(Some(Head {
        status,
        length,
        body,
        keep_alive: keep_alive && status != 101,
    }))
}

fn last_token(value: &[u8]) -> &[u8] {
    value
        .rsplit(|b| *b == b',')
        .next()
        .unwrap_or_default()
        .trim_ascii()
}

/// Reads a chunked body to its end (trailers included); returns the bytes it took.
pub(crate) async fn read_chunked<S: AsyncRead + Unpin>(
    stream: &mut S,
    inbox: &mut Inbox,
) -> Result<u64, Failure> {
    let failed = |end: ReadEnd| match end {
        ReadEnd::Closed => Failure::Reset,
        ReadEnd::Io(e) => classify(&e),
    };
    let mut received = 0u64;
    loop {
        let size = match httparse::parse_chunk_size(inbox.pending()) {
            Ok(httparse::Status::Complete((length, size))) => {
                inbox.consume(length);
                received += length as u64;
                size
            }
            Ok(httparse::Status::Partial) if inbox.pending().len() < 1024 => {
                inbox.fill(stream).await.map_err(failed)?;
                continue;
            }
            _ => return Err(Failure::Protocol),
        };
        if size == 0 {
            break;
        }
        inbox.skip(stream, size).await.map_err(failed)?;
        while inbox.pending().len() < 2 {
            inbox.fill(stream).await.map_err(failed)?;
        }
        if &inbox.pending()[..2] != b"\r\n" {
            return Err(Failure::Protocol);
        }
        inbox.consume(2);
        received += size + 2;
    }
    // Trailer lines up to the empty line.
    loop {
        match inbox.pending().windows(2).position(|w| w == b"\r\n") {
            Some(at) => {
                inbox.consume(at + 2);
                received += at as u64 + 2;
                if at == 0 {
                    return Ok(received);
                }
            }
            None if inbox.pending().len() >= MAX_HEAD => return Err(Failure::Protocol),
            None => {
                inbox.fill(stream).await.map_err(failed)?;
            }
        }
    }
}

/// The failure kind of an I/O error on an established connection.
pub(crate) fn classify(error: &std::io::Error) -> Failure {
    match error.kind() {
        ErrorKind::ConnectionReset
        | ErrorKind::ConnectionAborted
        | ErrorKind::BrokenPipe
        | ErrorKind::UnexpectedEof
        | ErrorKind::NotConnected => Failure::Reset,
        ErrorKind::TimedOut => Failure::RequestTimeout,
        ErrorKind::InvalidData => Failure::Protocol,
        _ => Failure::Other,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn head(bytes: &str) -> Head {
        parse_head(bytes.as_bytes(), false).unwrap().unwrap()
    }

    #[test]
    fn heads_say_how_the_body_ends_and_whether_to_keep_the_connection() {
        let h = head("HTTP/1.1 200 OK\r\nContent-Length: 3\r\n\r\nok\n");
        assert!(matches!(h.body, Body::Length(3)) && h.keep_alive && h.status == 200);
        assert_eq!(h.length, 38);
        let h = head("HTTP/1.1 503 X\r\ntransfer-encoding: gzip, chunked\r\n\r\n");
        assert!(matches!(h.body, Body::Chunked) && h.status == 503);
        let h = head("HTTP/1.1 200 OK\r\nConnection: close\r\n\r\n");
        assert!(matches!(h.body, Body::UntilClose) && !h.keep_alive);
        let h = head("HTTP/1.0 200 OK\r\nContent-Length: 0\r\n\r\n");
        assert!(matches!(h.body, Body::None) && !h.keep_alive);
        let h = head("HTTP/1.0 204 OK\r\nConnection: Keep-Alive\r\n\r\n");
        assert!(matches!(h.body, Body::None) && h.keep_alive);
        let head_only = parse_head(b"HTTP/1.1 200 OK\r\ncontent-length: 9\r\n\r\n", true);
        assert!(matches!(
            head_only,
            Ok(Some(Head {
                body: Body::None,
                ..
            }))
        ));
        assert!(matches!(
            parse_head(b"HTTP/1.1 200 OK\r\nconte", false),
            Ok(None)
        ));
        for bad in [
            "SSH-2.0-nonsense\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: x\r\n\r\n",
            "HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n",
        ] {
            assert!(
                matches!(parse_head(bad.as_bytes(), false), Err(Failure::Protocol)),
                "{bad}"
            );
        }
    }
}
