//! WireMock's faults played at the socket: a stub arms the connection's [`FaultSwitch`], and the
//! next write on the [`FaultyStream`] plays the fault instead (reset, close, or garbage).
use crate::mapping::Fault;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicU8, Ordering};
use std::sync::Arc;
use std::task::{Context, Poll};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;

/// A fault armed for a connection's next write (0: none).
#[derive(Debug, Default)]
pub(crate) struct FaultSwitch(AtomicU8);

impl FaultSwitch {
    /// Plays `fault` instead of the connection's next write.
    pub fn arm(&self, fault: Fault) {
        let code = match fault {
            Fault::ConnectionResetByPeer => 1,
            Fault::EmptyResponse => 2,
            Fault::MalformedResponseChunk => 3,
            Fault::RandomDataThenClose => 4,
        };
        self.0.store(code, Ordering::Relaxed);
    }

    /// Disarms the switch: whether a fault was armed (an HTTP/2 stream plays it as a reset).
    pub fn take(&self) -> bool {
        self.0.swap(0, Ordering::Relaxed) != 0
    }
}

/// The connection's socket, which plays a fault instead of the next write once one is armed.
pub(crate) struct FaultyStream {
    stream: TcpStream,
    fault: Arc<FaultSwitch>,
    /// Bytes of a garbage fault still to send, and how many were sent.
    garbage: Option<(Vec<u8>, usize)>,
    failed: bool,
}

/// WireMock's garbage.
const GARBAGE: &[u8] = b"lskdu018973t09sylgasjkfg1][]'./.sdlv";

impl FaultyStream {
    pub fn new(stream: TcpStream, fault: Arc<FaultSwitch>) -> FaultyStream {
        FaultyStream {
            stream,
            fault,
            garbage: None,
            failed: false,
        }
    }

    /// `None`: no fault armed, write normally. Otherwise what the write returns.
    fn poll_fault(&mut self, cx: &mut Context<'_>) -> Option<Poll<io::Result<usize>>> {
        if !self.failed && self.garbage.is_none() {
            if self.fault.0.load(Ordering::Relaxed) == 0 {
                return None;
            }
            match self.fault.0.swap(0, Ordering::Relaxed) {
                0 => return None,
                1 => {
                    let _ = self.stream.set_zero_linger();
                    self.failed = true;
                }
                2 => self.failed = true,
                3 => {
                    let mut bytes =
                        b"HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n".to_vec();
                    bytes.extend_from_slice(GARBAGE);
                    self.garbage = Some((bytes, 0));
                }
                _ => {
                    let mut bytes: Vec<u8> = (0..64).map(|_| rand::random::<u8>()).collect();
                    bytes[0] = b'\x7f'; // never a valid status line
                    self.garbage = Some((bytes, 0));
                }
            }
        }
        if let Some((bytes, sent)) = &mut self.garbage {
            while *sent < bytes.len() {
                match Pin::new(&mut self.stream).poll_write(cx, &bytes[*sent..]) {
                    Poll::Ready(Ok(n)) if n > 0 => *sent += n,
                    Poll::Pending => return Some(Poll::Pending),
                    _ => break,
                }
            }
            self.garbage = None;
            self.failed = true;
        }
        // An error makes hyper drop the connection, which closes (or, after SO_LINGER 0,
        // resets) the socket.
        Some(Poll::Ready(Err(io::Error::new(
            io::ErrorKind::ConnectionAborted,
            "fault played",
        ))))
    }
}

impl AsyncRead for FaultyStream {
    fn poll_read(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_read(cx, buf)
    }
}

impl AsyncWrite for FaultyStream {
    fn poll_write(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result;
        }
        Pin::new(&mut this.stream).poll_write(cx, buf)
    }

    fn poll_write_vectored(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result;
        }
        Pin::new(&mut this.stream).poll_write_vectored(cx, bufs)
    }

    fn is_write_vectored(&self) -> bool {
        self.stream.is_write_vectored()
    }

    fn poll_flush(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        let this = self.get_mut();
        if let Some(result) = this.poll_fault(cx) {
            return result.map(|r| r.map(|_| ()));
        }
        Pin::new(&mut this.stream).poll_flush(cx)
    }

    fn poll_shutdown(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.get_mut().stream).poll_shutdown(cx)
    }
}
