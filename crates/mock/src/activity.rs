//! Whether a connection is busy or idle, and since when: the keep-alive timeout reads it, and
//! every request holds an [`ActivityGuard`] until its response is fully sent.
use std::sync::atomic::{AtomicU32, AtomicU64, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

/// A connection's requests in progress and the end of its last response.
#[derive(Debug)]
pub(crate) struct Activity {
    opened: Instant,
    active: AtomicU32,
    /// Nanoseconds after `opened` of the last response's end.
    last_activity_ns: AtomicU64,
}

impl Activity {
    pub fn new() -> Arc<Activity> {
        Arc::new(Activity {
            opened: Instant::now(),
            active: AtomicU32::new(0),
            last_activity_ns: AtomicU64::new(0),
        })
    }

    /// Marks a request in progress until the guard is dropped.
    pub fn begin(self: &Arc<Self>) -> ActivityGuard {
        self.active.fetch_add(1, Ordering::Relaxed);
        ActivityGuard(Arc::clone(self))
    }

    /// When the connection became idle; `None` while a request is in progress.
    pub fn idle_since(&self) -> Option<Instant> {
        if self.active.load(Ordering::Relaxed) > 0 {
            return None;
        }
        Some(self.opened + Duration::from_nanos(self.last_activity_ns.load(Ordering::Relaxed)))
    }
}

/// Marks a request in progress on its connection; dropping it marks the connection idle.
#[derive(Debug)]
pub(crate) struct ActivityGuard(Arc<Activity>);

impl Drop for ActivityGuard {
    fn drop(&mut self) {
        let ns = self.0.opened.elapsed().as_nanos() as u64;
        self.0.last_activity_ns.store(ns, Ordering::Relaxed);
        self.0.active.fetch_sub(1, Ordering::Relaxed);
    }
}
