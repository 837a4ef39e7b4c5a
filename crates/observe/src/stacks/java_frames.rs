//! What a JVM thread was doing, read from its frames: the one reading shared by thread dumps
//! ([`super::jvm`]) and Flight Recorder recordings ([`super::jfr`]).
//!
//! A stack is read from its innermost frame outwards, up to the first frame of the service's
//! own code (a frame outside the JDK and outside the libraries in [`LIBRARY_PACKAGES`]). Each
//! frame of that runtime part is matched against [`RULES`]; the OUTERMOST match wins, because
//! the outer call says why the inner one waits: a thread parked in `LockSupport.park` under
//! `HttpClient.send` waits for a downstream answer, not for a lock; one parked under
//! `ThreadPoolExecutor.getTask` is an idle worker. Some rules only name the call (a JDBC
//! driver's `executeQuery` above a socket read) and keep what the inner rule found. Without a
//! rule, the thread's state decides: `BLOCKED` is a monitor ([`WaitKind::Lock`]), `RUNNABLE` is
//! [`WaitKind::Running`] (unless the thread has no Java frame: a JVM thread waiting for the
//! JVM's own work), anything else [`WaitKind::Other`].
//!
//! The frames kept are the blocking call (the outermost matched frame, by its public name:
//! `java.net.http.HttpClient.send` rather than `jdk.internal.net.http.HttpClientFacade.send`),
//! then the first frame of the service's code and the one after it when that is the service's
//! too and not generated (lambda bodies and `$$Lambda` classes are left out).
use chokepoint_result::WaitKind;

/// Packages that are the JDK itself: never the service's code.
const JDK_PACKAGES: &[&str] = &["java.", "javax.", "jdk.", "sun.", "com.sun."];

/// Libraries seen between a blocking call and the service's code (drivers, pools, clients,
/// frameworks): their frames are not the service's either, so the first frame of the service
/// is found past them.
pub const LIBRARY_PACKAGES: &[&str] = &[
    "akka.",
    "ch.qos.logback.",
    "com.datastax.",
    "com.fasterxml.",
    "com.google.common.",
    "com.mchange.",
    "com.microsoft.sqlserver.",
    "com.mongodb.",
    "com.mysql.",
    "com.zaxxer.hikari.",
    "feign.",
    "io.grpc.",
    "io.lettuce.",
    "io.micrometer.",
    "io.netty.",
    "io.opentelemetry.",
    "io.reactivex.",
    "io.undertow.",
    "io.vertx.",
    "jakarta.",
    "kotlin.",
    "kotlinx.",
    "net.bytebuddy.",
    "okhttp3.",
    "okio.",
    "oracle.jdbc.",
    "org.apache.",
    "org.eclipse.jetty.",
    "org.glassfish.",
    "org.hibernate.",
    "org.jboss.",
    "org.mariadb.",
    "org.postgresql.",
    "org.slf4j.",
    "org.springframework.",
    "reactor.",
    "redis.clients.",
    "retrofit2.",
    "rx.",
    "scala.",
    "software.amazon.awssdk.",
];

/// What a matched frame says.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Says {
    /// The thread does this, whatever an inner frame said.
    Kind(WaitKind),
    /// Names the call, keeping what an inner rule found (nothing, if none did).
    Names,
}

/// A frame pattern: `Class.method` (also matching a native variant with a digit appended,
/// `socketRead0`, `sleep0`), or every frame that starts with it when it ends in `.` or `$` (a
/// class's methods, a package, nested classes).
struct Rule {
    frame: &'static str,
    says: Says,
    /// The call's public name, when the frame is an implementation's.
    shown_as: Option<&'static str>,
}

const fn kind(frame: &'static str, kind: WaitKind) -> Rule {
    Rule {
        frame,
        says: Says::Kind(kind),
        shown_as: None,
    }
}

const fn shown(frame: &'static str, kind: WaitKind, shown_as: &'static str) -> Rule {
    Rule {
        frame,
        says: Says::Kind(kind),
        shown_as: Some(shown_as),
    }
}

const fn names(frame: &'static str) -> Rule {
    Rule {
        frame,
        says: Says::Names,
        shown_as: None,
    }
}

/// The known blocking calls (JDK 8 to 21 names), the outermost match winning.
const RULES: &[Rule] = {
    use WaitKind::*;
    &[
        // A socket read or connect: the service waits for another one's answer.
        kind("java.net.SocketInputStream.socketRead", Downstream),
        kind("java.net.SocketInputStream.read", Downstream),
        kind("java.net.Socket$SocketInputStream.read", Downstream),
        kind("sun.nio.ch.NioSocketImpl.read", Downstream),
        kind("sun.nio.ch.NioSocketImpl.timedRead", Downstream),
        kind("sun.nio.ch.NioSocketImpl.connect", Downstream),
        kind("sun.nio.ch.SocketChannelImpl.read", Downstream),
        kind("sun.nio.ch.SocketChannelImpl.connect", Downstream),
        kind("java.net.PlainSocketImpl.socketConnect", Downstream),
        kind(
            "sun.security.ssl.SSLSocketImpl$AppInputStream.read",
            Downstream,
        ),
        // HTTP clients: the JDK's, whose calling thread parks on a future while the
        // SelectorManager thread does the reads.
        shown(
            "jdk.internal.net.http.HttpClientFacade.send",
            Downstream,
            "java.net.http.HttpClient.send",
        ),
        shown(
            "jdk.internal.net.http.HttpClientImpl.send",
            Downstream,
            "java.net.http.HttpClient.send",
        ),
        kind(
            "jdk.internal.net.http.HttpClientImpl$SelectorManager.run",
            Downstream,
        ),
        names("java.net.HttpURLConnection."),
        names("sun.net.www.protocol.http.HttpURLConnection."),
        names("sun.net.www.protocol.https.HttpsURLConnectionImpl."),
        // Apache HttpClient 5 leasing a pooled connection: its thread waits on the lease's
        // future, a nested class of the pool (`StrictConnPool$1.get`). Not the connection
        // manager's nested classes: a thread in the call runs in one of them too
        // (`PoolingHttpClientConnectionManager$InternalConnectionEndpoint.execute`).
        shown(
            "org.apache.hc.core5.pool.StrictConnPool$",
            PoolAcquire,
            "org.apache.hc.core5.pool.StrictConnPool.lease",
        ),
        shown(
            "org.apache.hc.core5.pool.LaxConnPool$",
            PoolAcquire,
            "org.apache.hc.core5.pool.LaxConnPool.lease",
        ),
        names("org.apache.http.impl.client."),
        names("org.apache.hc.client5."),
        names("okhttp3.internal.connection."),
        names("okhttp3.RealCall."),
        names("okhttp3.internal.connection.RealCall."),
        names("org.springframework.web.client.RestTemplate."),
        // Database and cache drivers: their calls name the wait (a socket read inside).
        names("org.postgresql.jdbc."),
        names("com.mysql.cj.jdbc."),
        names("com.mysql.jdbc."),
        names("org.mariadb.jdbc."),
        names("oracle.jdbc.driver."),
        names("com.microsoft.sqlserver.jdbc."),
        names("redis.clients.jedis."),
        names("com.mongodb.internal.connection."),
        // Waiting for a free resource of a pool: a connection of a connection pool.
        kind("com.zaxxer.hikari.util.ConcurrentBag.borrow", PoolAcquire),
        kind(
            "com.zaxxer.hikari.pool.HikariPool.getConnection",
            PoolAcquire,
        ),
        kind(
            "org.apache.commons.pool2.impl.GenericObjectPool.borrowObject",
            PoolAcquire,
        ),
        kind(
            "org.apache.tomcat.jdbc.pool.ConnectionPool.borrowConnection",
            PoolAcquire,
        ),
        kind(
            "com.mchange.v2.resourcepool.BasicResourcePool.awaitAvailable",
            PoolAcquire,
        ),
        kind(
            "org.apache.http.pool.AbstractConnPool.getPoolEntryBlocking",
            PoolAcquire,
        ),
        kind("org.apache.hc.core5.pool.StrictConnPool.lease", PoolAcquire),
        // Locks and permits held by another thread.
        kind("java.util.concurrent.locks.ReentrantLock.", Lock),
        kind("java.util.concurrent.locks.ReentrantLock$Sync.lock", Lock),
        kind("java.util.concurrent.locks.ReentrantReadWriteLock$", Lock),
        kind("java.util.concurrent.locks.StampedLock.", Lock),
        kind("java.util.concurrent.Semaphore.acquire", Lock),
        kind("java.util.concurrent.Semaphore.tryAcquire", Lock),
        // Tomcat's acceptor waiting for a connection slot: its connector's maxConnections is full.
        kind(
            "org.apache.tomcat.util.threads.LimitLatch.countUpOrAwait",
            Lock,
        ),
        // Idle workers and event loops: waiting for work, not for a resource.
        kind("java.util.concurrent.ThreadPoolExecutor.getTask", Idle),
        kind("java.util.concurrent.LinkedBlockingQueue.take", Idle),
        kind("java.util.concurrent.LinkedBlockingQueue.poll", Idle),
        kind("java.util.concurrent.ArrayBlockingQueue.take", Idle),
        kind("java.util.concurrent.LinkedBlockingDeque.take", Idle),
        kind("java.util.concurrent.SynchronousQueue.take", Idle),
        kind("java.util.concurrent.SynchronousQueue.poll", Idle),
        kind("java.util.concurrent.LinkedTransferQueue.take", Idle),
        kind("java.util.concurrent.LinkedTransferQueue.poll", Idle),
        kind(
            "java.util.concurrent.ScheduledThreadPoolExecutor$DelayedWorkQueue.take",
            Idle,
        ),
        kind("java.util.concurrent.ForkJoinPool.awaitWork", Idle),
        kind("java.util.TimerThread.mainLoop", Idle),
        kind("java.lang.ref.Reference.waitForReferencePendingList", Idle),
        kind("java.lang.ref.ReferenceQueue.remove", Idle),
        kind("sun.nio.ch.SelectorImpl.select", Idle),
        kind("sun.nio.ch.SelectorImpl.lockAndDoSelect", Idle),
        kind("sun.nio.ch.ServerSocketChannelImpl.accept", Idle),
        kind("sun.nio.ch.NioSocketImpl.accept", Idle),
        kind("java.net.ServerSocket.accept", Idle),
        kind("java.net.PlainSocketImpl.socketAccept", Idle),
        kind("io.netty.channel.nio.NioEventLoop.select", Idle),
        kind("io.netty.channel.epoll.EpollEventLoop.epollWait", Idle),
        kind("org.apache.tomcat.util.threads.TaskQueue.", Idle),
        // Jetty's QueuedThreadPool: an idle thread polls its job queue, and a reserved one
        // waits on a semaphore of its own until a task is handed to it (`wakeup` releases it;
        // jetty-util 12.1.14, `ReservedThreadExecutor$ReservedThread.waitForTask`): idle, not
        // queued for a permit another thread holds.
        kind(
            "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll",
            Idle,
        ),
        kind(
            "org.eclipse.jetty.util.thread.ReservedThreadExecutor$ReservedThread.waitForTask",
            Idle,
        ),
        // Sleeping on a timer.
        kind("java.lang.Thread.sleep", Sleep),
        names("java.util.concurrent.TimeUnit.sleep"),
    ]
};

impl Rule {
    fn matches(&self, frame: &str) -> bool {
        if self.frame.ends_with('.') || self.frame.ends_with('$') {
            frame.starts_with(self.frame)
        } else {
            frame == self.frame
                || frame
                    .strip_prefix(self.frame)
                    .is_some_and(|rest| rest.starts_with(|c: char| c.is_ascii_digit()))
        }
    }
}

fn in_packages(frame: &str, packages: &[&str]) -> bool {
    packages.iter().any(|package| frame.starts_with(package))
}

/// Whether `frame` (`package.Class.method`) is the service's own code.
pub fn is_service_frame(frame: &str) -> bool {
    !in_packages(frame, JDK_PACKAGES) && !in_packages(frame, LIBRARY_PACKAGES)
}

/// Frames a compiler generated: a lambda's hidden class (`Demo$$Lambda$330/0x...run`) or a
/// lambda's body (`Demo.lambda$route$1`).
fn is_generated(frame: &str) -> bool {
    frame.contains("$$Lambda") || frame.contains(".lambda$")
}

/// What a thread with these frames (innermost first, `package.Class.method`) and this state
/// (`RUNNABLE`, `BLOCKED`, ...) was doing, and the frames that say where (see the module doc).
pub fn read_stack(state: &str, frames: &[String]) -> (WaitKind, Vec<String>) {
    let service_at = frames
        .iter()
        .position(|frame| is_service_frame(frame) && !frame.contains("$$Lambda"));
    let runtime_part = &frames[..service_at.unwrap_or(frames.len())];
    let mut found: Option<WaitKind> = None;
    let mut call: Option<String> = None;
    for frame in runtime_part {
        let Some(rule) = RULES.iter().find(|rule| rule.matches(frame)) else {
            continue;
        };
        match rule.says {
            Says::Kind(kind) => found = Some(kind),
            Says::Names if found.is_none() => continue,
            // A thread waiting to lease a pool's resource is told by the lease, not by the
            // client call around it: that call is the same for the threads the pool lets
            // through, and only the lease tells the queue from them (and the catalogue the pool).
            Says::Names if found == Some(WaitKind::PoolAcquire) => continue,
            Says::Names => {}
        }
        call = Some(rule.shown_as.map_or_else(|| frame.clone(), String::from));
    }
    let kind = found.unwrap_or(match state {
        "BLOCKED" => WaitKind::Lock,
        // A JVM thread with no Java frame (a compiler thread, the signal dispatcher) says
        // RUNNABLE while it waits for work of the JVM's own.
        "RUNNABLE" if !frames.is_empty() => WaitKind::Running,
        _ => WaitKind::Other,
    });
    let mut kept: Vec<String> = Vec::new();
    // Without a known call, where it was is its innermost frame (unless that is the service's).
    let call = call.or_else(|| runtime_part.first().cloned());
    kept.extend(call);
    if let Some(at) = service_at {
        kept.push(frames[at].clone());
        if let Some(next) = frames.get(at + 1) {
            if is_service_frame(next) && !is_generated(next) {
                kept.push(next.clone());
            }
        }
    }
    (kind, kept)
}

#[cfg(test)]
mod tests {
    use super::*;
    use WaitKind::*;

    fn read(state: &str, frames: &[&str]) -> (WaitKind, Vec<String>) {
        let frames: Vec<String> = frames.iter().map(|f| f.to_string()).collect();
        read_stack(state, &frames)
    }

    #[test]
    fn each_way_of_waiting_is_read_from_the_frames() {
        // (state, frames innermost first, what it was doing, the frames kept)
        let table: &[(&str, &[&str], WaitKind, &[&str])] = &[
            // Jetty 12.1's reserved thread waiting for a task on its own semaphore, and an idle
            // QueuedThreadPool thread (a jcmd dump of tests/targets/java-jetty), beside an
            // application's own semaphore, which is a lock.
            (
                "TIMED_WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.parkNanos",
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer.tryAcquireSharedNanos",
                    "java.util.concurrent.Semaphore.tryAcquire",
                    "org.eclipse.jetty.util.thread.ReservedThreadExecutor$ReservedThread.waitForTask",
                    "org.eclipse.jetty.util.thread.ReservedThreadExecutor$ReservedThread.run",
                    "org.eclipse.jetty.util.thread.QueuedThreadPool.runJob",
                ],
                Idle,
                &["org.eclipse.jetty.util.thread.ReservedThreadExecutor$ReservedThread.waitForTask"],
            ),
            (
                "TIMED_WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.parkNanos",
                    "org.eclipse.jetty.util.thread.AutoLock$WithCondition.awaitNanos",
                    "org.eclipse.jetty.util.BlockingArrayQueue.poll",
                    "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll",
                    "org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.run",
                ],
                Idle,
                &["org.eclipse.jetty.util.thread.QueuedThreadPool$Runner.idleJobPoll"],
            ),
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.park",
                    "java.util.concurrent.Semaphore.acquire",
                    "PermitServer.answer",
                ],
                Lock,
                &["java.util.concurrent.Semaphore.acquire", "PermitServer.answer"],
            ),
            // Apache HttpClient 5 waiting for one of its 5 connections per route (a jcmd dump of
            // tests/targets/java-httpclient5), and a thread of the same client in the call.
            (
                "TIMED_WAITING",
                &[
                    "java.lang.Object.wait",
                    "org.apache.hc.core5.concurrent.BasicFuture.get",
                    "org.apache.hc.core5.pool.StrictConnPool$1.get",
                    "org.apache.hc.core5.pool.StrictConnPool$1.get",
                    "org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager$3.get",
                    "org.apache.hc.client5.http.impl.classic.InternalExecRuntime.acquireEndpoint",
                    "org.apache.hc.client5.http.impl.classic.ConnectExec.execute",
                    "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute",
                    "ClientPoolServer.handle",
                    "ClientPoolServer.lambda$main$1",
                ],
                PoolAcquire,
                &["org.apache.hc.core5.pool.StrictConnPool.lease", "ClientPoolServer.handle"],
            ),
            (
                "RUNNABLE",
                &[
                    "sun.nio.ch.Net.poll",
                    "sun.nio.ch.NioSocketImpl.park",
                    "sun.nio.ch.NioSocketImpl.timedRead",
                    "java.net.Socket$SocketInputStream.read",
                    "org.apache.hc.core5.http.impl.io.SessionInputBufferImpl.fillBuffer",
                    "org.apache.hc.core5.http.impl.io.HttpRequestExecutor.execute",
                    "org.apache.hc.client5.http.impl.io.PoolingHttpClientConnectionManager$InternalConnectionEndpoint.execute",
                    "org.apache.hc.client5.http.impl.classic.InternalExecRuntime.execute",
                    "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute",
                    "ClientPoolServer.handle",
                ],
                Downstream,
                &[
                    "org.apache.hc.client5.http.impl.classic.CloseableHttpClient.execute",
                    "ClientPoolServer.handle",
                ],
            ),
            // Tomcat's acceptor with its connector's maxConnections full: parked in the latch.
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.park",
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquireSharedInterruptibly",
                    "org.apache.tomcat.util.threads.LimitLatch.countUpOrAwait",
                    "org.apache.tomcat.util.net.AbstractEndpoint.countUpOrAwaitConnection",
                    "org.apache.tomcat.util.net.Acceptor.run",
                    "java.lang.Thread.run",
                ],
                Lock,
                &["org.apache.tomcat.util.threads.LimitLatch.countUpOrAwait"],
            ),
            // HttpClient.send parks on a future: downstream, by the outer call.
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.park",
                    "java.util.concurrent.CompletableFuture$Signaller.block",
                    "java.util.concurrent.CompletableFuture.get",
                    "jdk.internal.net.http.HttpClientImpl.send",
                    "jdk.internal.net.http.HttpClientFacade.send",
                    "Shop.callDownstream",
                    "Shop.handle",
                    "java.lang.Thread.run",
                ],
                Downstream,
                &[
                    "java.net.http.HttpClient.send",
                    "Shop.callDownstream",
                    "Shop.handle",
                ],
            ),
            // The SelectorManager's select is where HttpClient's reads happen.
            (
                "RUNNABLE",
                &[
                    "sun.nio.ch.EPoll.wait",
                    "sun.nio.ch.SelectorImpl.select",
                    "jdk.internal.net.http.HttpClientImpl$SelectorManager.run",
                ],
                Downstream,
                &["jdk.internal.net.http.HttpClientImpl$SelectorManager.run"],
            ),
            // A socket read under HttpURLConnection, named by the call the service made; a
            // lambda's body is not kept.
            (
                "RUNNABLE",
                &[
                    "sun.nio.ch.Net.poll",
                    "sun.nio.ch.NioSocketImpl.timedRead",
                    "sun.nio.ch.NioSocketImpl.read",
                    "java.net.Socket$SocketInputStream.read",
                    "sun.net.www.protocol.http.HttpURLConnection.getInputStream",
                    "java.net.HttpURLConnection.getResponseCode",
                    "Demo.blockingCall",
                    "Demo.lambda$route$1",
                ],
                Downstream,
                &[
                    "java.net.HttpURLConnection.getResponseCode",
                    "Demo.blockingCall",
                ],
            ),
            // JDK 8's socket read in a JDBC driver, through a pool's proxy (a library).
            (
                "RUNNABLE",
                &[
                    "java.net.SocketInputStream.socketRead0",
                    "java.net.SocketInputStream.read",
                    "org.postgresql.core.VisibleBufferedInputStream.read",
                    "org.postgresql.jdbc.PgPreparedStatement.executeQuery",
                    "com.zaxxer.hikari.pool.HikariProxyPreparedStatement.executeQuery",
                    "com.acme.OrderRepository.find",
                    "org.springframework.aop.Proxy.invoke",
                ],
                Downstream,
                &[
                    "org.postgresql.jdbc.PgPreparedStatement.executeQuery",
                    "com.acme.OrderRepository.find",
                ],
            ),
            // HikariCP with no free connection.
            (
                "TIMED_WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.parkNanos",
                    "java.util.concurrent.SynchronousQueue.poll",
                    "com.zaxxer.hikari.util.ConcurrentBag.borrow",
                    "com.zaxxer.hikari.pool.HikariPool.getConnection",
                    "com.zaxxer.hikari.HikariDataSource.getConnection",
                    "com.acme.Orders.load",
                ],
                PoolAcquire,
                &[
                    "com.zaxxer.hikari.pool.HikariPool.getConnection",
                    "com.acme.Orders.load",
                ],
            ),
            // An idle pool worker: no service frame at all.
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.LockSupport.park",
                    "java.util.concurrent.LinkedBlockingQueue.take",
                    "java.util.concurrent.ThreadPoolExecutor.getTask",
                    "java.util.concurrent.ThreadPoolExecutor.runWorker",
                ],
                Idle,
                &["java.util.concurrent.ThreadPoolExecutor.getTask"],
            ),
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.ForkJoinPool.awaitWork",
                    "java.util.concurrent.ForkJoinPool.runWorker",
                ],
                Idle,
                &["java.util.concurrent.ForkJoinPool.awaitWork"],
            ),
            // A monitor: the service's synchronized method is where it waits.
            (
                "BLOCKED",
                &["Cache.get", "Cache.lambda$x$0", "java.lang.Thread.run"],
                Lock,
                &["Cache.get"],
            ),
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.locks.AbstractQueuedSynchronizer.acquire",
                    "java.util.concurrent.locks.ReentrantLock$Sync.lock",
                    "java.util.concurrent.locks.ReentrantLock.lock",
                    "Ledger.post",
                ],
                Lock,
                &[
                    "java.util.concurrent.locks.ReentrantLock.lock",
                    "Ledger.post",
                ],
            ),
            (
                "WAITING",
                &[
                    "jdk.internal.misc.Unsafe.park",
                    "java.util.concurrent.Semaphore.acquire",
                    "Gate.enter",
                ],
                Lock,
                &["java.util.concurrent.Semaphore.acquire", "Gate.enter"],
            ),
            // JDK 21's sleep is Thread.sleep0 under Thread.sleep.
            (
                "TIMED_WAITING",
                &[
                    "java.lang.Thread.sleep0",
                    "java.lang.Thread.sleep",
                    "Poller.run",
                ],
                Sleep,
                &["java.lang.Thread.sleep", "Poller.run"],
            ),
            // Running the service's code, and waiting in something unknown.
            (
                "RUNNABLE",
                &["Pricing.compute", "Pricing.quote", "java.lang.Thread.run"],
                Running,
                &["Pricing.compute", "Pricing.quote"],
            ),
            (
                "WAITING",
                &[
                    "java.lang.Object.wait",
                    "java.lang.Object.wait",
                    "Legacy.awaitSlot",
                ],
                Other,
                &["java.lang.Object.wait", "Legacy.awaitSlot"],
            ),
            // A JVM thread with no Java frames (C2 CompilerThread0) is not running code.
            ("RUNNABLE", &[], Other, &[]),
        ];
        for (state, frames, kind, kept) in table {
            assert_eq!(
                read(state, frames),
                (*kind, kept.iter().map(|f| f.to_string()).collect()),
                "{state} {frames:?}"
            );
        }
    }

    #[test]
    fn a_rule_on_a_method_does_not_match_a_longer_method_name() {
        let rule = kind("java.lang.Thread.sleep", Sleep);
        assert!(rule.matches("java.lang.Thread.sleep"));
        assert!(!rule.matches("java.lang.Thread.sleepless"));
        assert!(kind("java.util.concurrent.locks.ReentrantLock.", Lock)
            .matches("java.util.concurrent.locks.ReentrantLock.lockInterruptibly"));
    }
}
