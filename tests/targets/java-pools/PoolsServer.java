/*
 * java-pools: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these) (JDK only), with two routes whose
 * blocking work runs on pools the JDK sizes by default.
 *
 * com.sun.net.httpserver.HttpServer answers on its one dispatcher thread and never blocks it:
 * each request is handed to a pool, whose thread makes a blocking HTTP GET to --downstream
 * (HttpURLConnection, kept-alive connections), burns --work-us microseconds of its own CPU
 * time, and answers. Nothing else queues or limits.
 *
 *   /cached  Executors.newCachedThreadPool(): a new thread whenever none is idle. It never
 *            queues: every request in flight holds a thread (pool-1-thread-N), so the pool
 *            grows with the clients until the CPU work of all those threads is the limit,
 *            and keeps growing past it (RxJava's Schedulers.io(), Akka's blocking { }).
 *   /common  ForkJoinPool.commonPool(): cores - 1 threads (at least 1), the pool behind
 *            parallel streams and CompletableFuture.supplyAsync; a blocked worker is not
 *            replaced, so the limit is its parallelism.
 *
 * Usage: java PoolsServer.java --port 0 --downstream URL [--work-us 2000]
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ForkJoinPool;

public class PoolsServer {
    static final ThreadMXBean CPU = ManagementFactory.getThreadMXBean();
    static volatile long sink;

    /** Burns `us` microseconds of this thread's CPU time (its own clock, not the wall's). */
    static void work(long us) {
        long until = CPU.getCurrentThreadCpuTime() + us * 1000;
        long x = 88172645463325252L;
        do {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        } while (CPU.getCurrentThreadCpuTime() < until);
        sink += x;
    }

    static void callDownstream(URL downstream) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) downstream.openConnection();
        connection.setConnectTimeout(5000);
        connection.setReadTimeout(30000);
        try (InputStream body = connection.getInputStream()) {
            body.readAllBytes();
        }
    }

    static void answer(HttpExchange exchange, int status, String text) {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        try (OutputStream out = exchange.getResponseBody()) {
            exchange.sendResponseHeaders(status, body.length);
            out.write(body);
        } catch (IOException e) {
            // the client went away
        } finally {
            exchange.close();
        }
    }

    /** The blocking work of one request, run on `pool`; the dispatcher returns at once. */
    static void serveOn(ExecutorService pool, HttpExchange exchange, URL downstream, long workUs) {
        try (InputStream in = exchange.getRequestBody()) {
            in.readAllBytes();
        } catch (IOException e) {
            exchange.close();
            return;
        }
        pool.execute(() -> {
            try {
                callDownstream(downstream);
                work(workUs);
                answer(exchange, 200, "ok\n");
            } catch (IOException e) {
                answer(exchange, 502, "downstream: " + e.getMessage() + "\n");
            }
        });
    }

    static int intArg(String flag, String value) {
        try {
            int n = Integer.parseInt(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            System.err.println("PoolsServer: " + flag + " must be a non-negative number, got " + value);
            System.exit(2);
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstreamArg = null;
        long workUs = 2000;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                System.err.println("PoolsServer: " + flag + " needs a value");
                System.exit(2);
            }
            String value = args[++i];
            switch (flag) {
                case "--port" -> port = intArg(flag, value);
                case "--downstream" -> downstreamArg = value;
                case "--work-us" -> workUs = intArg(flag, value);
                default -> {
                    System.err.println("PoolsServer: unknown flag " + flag
                            + " (use --port, --downstream, --work-us)");
                    System.exit(2);
                }
            }
        }
        if (downstreamArg == null) {
            System.err.println("PoolsServer: --downstream URL is required (the service it calls)");
            System.exit(2);
        }
        URL downstream;
        try {
            downstream = URI.create(downstreamArg).toURL();
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("PoolsServer: --downstream " + downstreamArg + " is not a URL");
            System.exit(2);
            return;
        }
        // Keep a kept-alive connection per thread to the downstream (the JDK keeps 5 by
        // default and closes the rest, which would fill TIME_WAIT at a few hundred clients).
        System.setProperty("http.maxConnections", "2048");
        System.setProperty("sun.net.httpserver.nodelay", "true");
        final long work = workUs;
        final URL target = downstream;
        ExecutorService cached = Executors.newCachedThreadPool();
        ExecutorService common = ForkJoinPool.commonPool();
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.createContext("/cached", exchange -> serveOn(cached, exchange, target, work));
        server.createContext("/common", exchange -> serveOn(common, exchange, target, work));
        server.createContext("/", exchange -> answer(exchange, 404, "try /cached or /common\n"));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }
}
