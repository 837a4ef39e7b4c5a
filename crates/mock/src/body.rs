//! A response body that keeps the request counted in flight until its last byte is sent:
//! whole, or dribbled in chunks on a timer (`chunkedDribbleDelay`); over HTTP/2, optionally
//! followed by trailers (a gRPC stub's `grpc-status`).
use crate::activity::ActivityGuard;
use crate::inflight::RequestGuard;
use crate::mapping;
use bytes::Bytes;
use hyper::body::{Body, Frame, SizeHint};
use std::collections::VecDeque;
use std::convert::Infallible;
use std::future::Future;
use std::pin::Pin;
use std::task::{Context, Poll};
use std::time::Duration;

/// What a response body keeps alive until it is fully sent: the in-flight count and the
/// connection's activity mark.
#[derive(Debug)]
pub(crate) struct Hold {
    _request: Option<RequestGuard>,
    _activity: ActivityGuard,
}

impl Hold {
    pub fn new(request: Option<RequestGuard>, activity: ActivityGuard) -> Hold {
        Hold {
            _request: request,
            _activity: activity,
        }
    }
}

/// A response body: whole, or dribbled in chunks on a timer.
#[derive(Debug)]
pub(crate) struct MockBody {
    kind: BodyKind,
    hold: Option<Hold>,
    /// Sent after the last data frame (boxed: the common body has none).
    trailers: Option<Box<http::HeaderMap>>,
}

#[derive(Debug)]
enum BodyKind {
    Full(Option<Bytes>),
    Dribble {
        chunks: VecDeque<Bytes>,
        interval: Duration,
        sleep: Option<Pin<Box<tokio::time::Sleep>>>,
    },
}

impl MockBody {
    /// Keeps `hold` alive until the body is fully sent.
    pub fn hold(&mut self, hold: Hold) {
        self.hold = Some(hold);
    }

    pub fn full(bytes: Bytes, hold: Option<Hold>) -> MockBody {
        MockBody {
            kind: BodyKind::Full((!bytes.is_empty()).then_some(bytes)),
            hold,
            trailers: None,
        }
    }

    /// The whole body, if it is sent whole (`None` for a dribbled one).
    pub fn whole(&self) -> Option<Bytes> {
        match &self.kind {
            BodyKind::Full(bytes) => Some(bytes.clone().unwrap_or_default()),
            BodyKind::Dribble { .. } => None,
        }
    }

    /// Replaces a whole body's bytes and adds trailers after them.
    pub fn replace_whole(&mut self, bytes: Bytes, trailers: http::HeaderMap) {
        self.kind = BodyKind::Full((!bytes.is_empty()).then_some(bytes));
        self.trailers = Some(Box::new(trailers));
    }

    /// No body at all (a Trailers-Only gRPC answer: its status in the one HEADERS frame).
    pub fn clear(&mut self) {
        self.kind = BodyKind::Full(None);
        self.trailers = None;
    }

    /// The body in `chunks` equal pieces, one every `total / chunks`; the body ends `total`
    /// after the first piece was sent.
    pub fn dribble(bytes: Bytes, dribble: mapping::Dribble, hold: Option<Hold>) -> MockBody {
        let count = (dribble.chunks as usize).clamp(1, bytes.len().max(1));
        let size = bytes.len().div_ceil(count).max(1);
        let mut chunks = VecDeque::with_capacity(count);
        let mut offset = 0;
        while offset < bytes.len() {
            let end = (offset + size).min(bytes.len());
            chunks.push_back(bytes.slice(offset..end));
            offset = end;
        }
        MockBody {
            kind: BodyKind::Dribble {
                interval: dribble.total / count as u32,
                chunks,
                sleep: None,
            },
            hold,
            trailers: None,
        }
    }
}

impl Body for MockBody {
    type Data = Bytes;
    type Error = Infallible;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        let this = self.get_mut();
        let frame = match &mut this.kind {
            BodyKind::Full(bytes) => bytes.take().map(|b| Ok(Frame::data(b))),
            BodyKind::Dribble {
                chunks,
                interval,
                sleep,
            } => {
                if let Some(timer) = sleep {
                    if timer.as_mut().poll(cx).is_pending() {
                        return Poll::Pending;
                    }
                    *sleep = None;
                }
                match chunks.pop_front() {
                    Some(chunk) => {
                        *sleep = Some(Box::pin(tokio::time::sleep(*interval)));
                        Some(Ok(Frame::data(chunk)))
                    }
                    None => None,
                }
            }
        };
        if frame.is_none() {
            if let Some(trailers) = this.trailers.take() {
                return Poll::Ready(Some(Ok(Frame::trailers(*trailers))));
            }
            this.hold = None;
        }
        Poll::Ready(frame)
    }

    fn is_end_stream(&self) -> bool {
        if self.trailers.is_some() {
            return false;
        }
        match &self.kind {
            BodyKind::Full(bytes) => bytes.is_none(),
            BodyKind::Dribble { chunks, sleep, .. } => chunks.is_empty() && sleep.is_none(),
        }
    }

    fn size_hint(&self) -> SizeHint {
        match &self.kind {
            BodyKind::Full(bytes) => {
                SizeHint::with_exact(bytes.as_ref().map_or(0, |b| b.len()) as u64)
            }
            BodyKind::Dribble { .. } => SizeHint::default(),
        }
    }
}
