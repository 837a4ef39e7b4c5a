/*
 * Threads waiting in each way a thread dump tells apart, for the parser's test data
 * (jdk17-waits.txt): a monitor (BLOCKED), a ReentrantLock, a Semaphore, Thread.sleep, an idle
 * fixed pool, a busy loop, and HttpClient.send to a server that answers after 60 s.
 *
 *   java Waits.java & sleep 5; jcmd $! Thread.print > jdk17-waits.txt; kill $!
 */
import com.sun.net.httpserver.HttpServer;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;

public class Waits {
    static final Object MONITOR = new Object();
    static final ReentrantLock LOCK = new ReentrantLock();
    static final Semaphore PERMITS = new Semaphore(0);

    static ExecutorService pool(String name, int size) {
        AtomicInteger next = new AtomicInteger();
        ExecutorService pool = Executors.newFixedThreadPool(size, work -> {
            Thread thread = new Thread(work, name + "-" + next.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        return pool;
    }

    static void holdMonitor() throws InterruptedException {
        synchronized (MONITOR) {
            Thread.sleep(600_000);
        }
    }

    static void enterMonitor() {
        synchronized (MONITOR) {
            System.out.println("entered");
        }
    }

    static void takeLock() {
        LOCK.lock();
        LOCK.unlock();
    }

    static void takePermit() throws InterruptedException {
        PERMITS.acquire();
    }

    static long spin() {
        long x = 1;
        while (true) {
            x = x * 6364136223846793005L + 1442695040888963407L;
            if (x == 42) return x;
        }
    }

    static void callSlowServer(HttpClient client, String url) throws Exception {
        client.send(HttpRequest.newBuilder(URI.create(url)).build(), HttpResponse.BodyHandlers.discarding());
    }

    public static void main(String[] args) throws Exception {
        HttpServer slow = HttpServer.create(new InetSocketAddress("127.0.0.1", 0), 64);
        slow.setExecutor(Executors.newCachedThreadPool());
        slow.createContext("/", exchange -> {
            try { Thread.sleep(60_000); } catch (InterruptedException e) { }
            exchange.sendResponseHeaders(200, -1);
            exchange.close();
        });
        slow.start();
        String url = "http://127.0.0.1:" + slow.getAddress().getPort() + "/";
        HttpClient client = HttpClient.newHttpClient();

        pool("holder", 1).execute(() -> { try { holdMonitor(); } catch (InterruptedException e) { } });
        Thread.sleep(200);
        ExecutorService blocked = pool("monitor-waiter", 3);
        for (int i = 0; i < 3; i++) blocked.execute(Waits::enterMonitor);
        LOCK.lock();
        ExecutorService locks = pool("lock-waiter", 2);
        for (int i = 0; i < 2; i++) locks.execute(Waits::takeLock);
        ExecutorService permits = pool("permit-waiter", 2);
        for (int i = 0; i < 2; i++) permits.execute(() -> { try { takePermit(); } catch (InterruptedException e) { } });
        ExecutorService sleepers = pool("sleeper", 2);
        for (int i = 0; i < 2; i++) sleepers.execute(() -> { try { Thread.sleep(600_000); } catch (InterruptedException e) { } });
        ExecutorService idle = pool("idle-worker", 3);
        for (int i = 0; i < 3; i++) idle.execute(() -> { });
        pool("spinner", 1).execute(Waits::spin);
        ExecutorService callers = pool("caller", 2);
        for (int i = 0; i < 2; i++) callers.execute(() -> { try { callSlowServer(client, url); } catch (Exception e) { } });
        Thread.sleep(600_000);
    }
}
