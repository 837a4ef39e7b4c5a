//! Thread pools of named OS threads: the fixed pools behind `/actors`, `/global` and
//! `/dispatcher`, and the thread-per-request spawner behind `/blocking`.
//!
//! A fixed pool's queue is unbounded (an actor's mailbox, a `ThreadPoolExecutor` over a
//! `LinkedBlockingQueue`): work beyond the pool's size waits for a free thread, so excess load
//! shows as latency, never as an error. Threads are named `<pool>-<n>` (`actor-pool-7`) so that
//! an observer reading /proc sees which pool is busy, as a thread dump would show it.
//!
//! Pool threads are detached: dropping a pool closes its queue, and each thread exits once its
//! current job returns. Nothing ever joins a thread that may be parked in a downstream read.
use std::io;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

/// One unit of work for a pool thread.
type Job = Box<dyn FnOnce() + Send + 'static>;

/// The pool was closed, or its job could not be started: the caller answers with an error.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PoolClosed;

/// A fixed number of named OS threads taking jobs from one unbounded queue.
pub struct FixedPool {
    name: String,
    size: usize,
    queue: mpsc::Sender<Job>,
}

impl FixedPool {
    /// Starts `size` threads named `<name>-1` ... `<name>-<size>`.
    pub fn new(name: &str, size: usize) -> io::Result<Self> {
        let (queue, jobs) = mpsc::channel::<Job>();
        let jobs = Arc::new(Mutex::new(jobs));
        for index in 1..=size {
            let jobs = Arc::clone(&jobs);
            thread::Builder::new()
                .name(format!("{name}-{index}"))
                .spawn(move || worker_loop(&jobs))?;
        }
        Ok(Self {
            name: name.to_string(),
            size,
            queue,
        })
    }

    /// The pool's name, the prefix of its threads' names.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// How many threads the pool has.
    pub fn size(&self) -> usize {
        self.size
    }

    /// Queues `work` and waits, without blocking the async runtime, for a pool thread to run it.
    pub async fn run<T, F>(&self, work: F) -> Result<T, PoolClosed>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let (answer, answered) = tokio::sync::oneshot::channel();
        self.queue
            .send(Box::new(move || {
                let _ = answer.send(work());
            }))
            .map_err(|_| PoolClosed)?;
        answered.await.map_err(|_| PoolClosed)
    }
}

fn worker_loop(jobs: &Mutex<mpsc::Receiver<Job>>) {
    loop {
        // The lock is held only while waiting for the next job, never while running one.
        let job = match jobs.lock() {
            Ok(receiver) => receiver.recv(),
            Err(_) => return,
        };
        match job {
            // A panicking job must not shrink the pool: the caller sees its answer dropped.
            Ok(job) => {
                let _ = catch_unwind(AssertUnwindSafe(job));
            }
            Err(_) => return, // the pool was dropped
        }
    }
}

/// Gives each job an OS thread of its own, named `<name>-<n>` (the elastic `blocking` construct:
/// no limit on threads, so whatever limit there is lies elsewhere).
pub struct ThreadPerJob {
    name: String,
    started: AtomicU64,
}

impl ThreadPerJob {
    /// A spawner whose threads are named `<name>-1`, `<name>-2`, ...
    pub fn new(name: &str) -> Self {
        Self {
            name: name.to_string(),
            started: AtomicU64::new(0),
        }
    }

    /// The prefix of the threads' names.
    pub fn name(&self) -> &str {
        &self.name
    }

    /// Runs `work` on a new thread and waits, without blocking the async runtime, for its result.
    pub async fn run<T, F>(&self, work: F) -> Result<T, PoolClosed>
    where
        T: Send + 'static,
        F: FnOnce() -> T + Send + 'static,
    {
        let index = self.started.fetch_add(1, Ordering::Relaxed) + 1;
        let (answer, answered) = tokio::sync::oneshot::channel();
        thread::Builder::new()
            .name(format!("{}-{index}", self.name))
            .spawn(move || {
                let _ = answer.send(work());
            })
            .map_err(|_| PoolClosed)?;
        answered.await.map_err(|_| PoolClosed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::sync::atomic::AtomicUsize;
    use std::time::Duration;

    #[tokio::test]
    async fn fixed_pool_runs_on_named_threads() {
        let pool = FixedPool::new("test-pool", 3).expect("pool starts");
        let name = pool
            .run(|| thread::current().name().map(str::to_string))
            .await
            .expect("job runs");
        let name = name.expect("pool threads are named");
        assert!(name.starts_with("test-pool-"), "thread name {name}");
    }

    #[tokio::test]
    async fn fixed_pool_never_runs_more_than_its_size_at_once() {
        let pool = Arc::new(FixedPool::new("cap-pool", 3).expect("pool starts"));
        let running = Arc::new(AtomicUsize::new(0));
        let most = Arc::new(AtomicUsize::new(0));
        let mut waiting = Vec::new();
        for _ in 0..12 {
            let (pool, running, most) = (pool.clone(), running.clone(), most.clone());
            waiting.push(tokio::spawn(async move {
                pool.run(move || {
                    let now = running.fetch_add(1, Ordering::SeqCst) + 1;
                    most.fetch_max(now, Ordering::SeqCst);
                    thread::sleep(Duration::from_millis(20));
                    running.fetch_sub(1, Ordering::SeqCst);
                })
                .await
            }));
        }
        for job in waiting {
            job.await.expect("task").expect("every queued job runs");
        }
        assert_eq!(most.load(Ordering::SeqCst), 3);
    }

    #[tokio::test]
    async fn a_panicking_job_keeps_the_pool_alive() {
        let pool = FixedPool::new("panic-pool", 1).expect("pool starts");
        let failed = pool.run(|| -> u32 { panic!("job fails") }).await;
        assert_eq!(failed, Err(PoolClosed));
        assert_eq!(pool.run(|| 7).await, Ok(7));
    }

    #[tokio::test]
    async fn thread_per_job_names_each_thread() {
        let spawner = ThreadPerJob::new("elastic-pool");
        let first = spawner.run(|| thread::current().name().map(str::to_string));
        let second = spawner.run(|| thread::current().name().map(str::to_string));
        let (first, second) = (first.await, second.await);
        assert_eq!(first, Ok(Some("elastic-pool-1".to_string())));
        assert_eq!(second, Ok(Some("elastic-pool-2".to_string())));
    }
}
