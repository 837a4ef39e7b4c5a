/*
 * java-thrash: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these) (JDK only).
 *
 * com.sun.net.httpserver.HttpServer on a large thread pool (512 threads, not the limit). Every
 * request takes one of 16 permits, holds it for 20 ms (a sleep standing for a call elsewhere)
 * plus about 0.3 ms of CPU work, and answers 200. The permit pool is the kind people write by
 * hand: a spinlock, a compare-and-set on a counter retried in a busy loop (`Thread.onSpinWait`),
 * never parking. Up to about 16 clients it is a pool of 16; past it, every waiter stays runnable
 * and burns CPU, the requests that hold a permit wait for the core behind the spinners, and
 * throughput FALLS as clients grow (thrashing: the USL's coherency cost, kappa). Run it pinned
 * to one core (`taskset -c 0 java ...`) so the spinners and the work share that core.
 *
 * Usage: java ThrashServer.java --port 0 [--permits 16] [--hold-ms 20] [--work 300000]
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class ThrashServer {
    static final int THREADS = 512;

    /**
     * A counting permit pool that never parks: a waiter retries a compare-and-set on the count
     * in a busy loop, so every waiter stays runnable and competes for the CPU
     * with the requests that hold a permit.
     */
    static final class SpinPermits {
        private final AtomicInteger permits;

        SpinPermits(int permits) {
            this.permits = new AtomicInteger(permits);
        }

        void acquire() {
            while (true) {
                int free = permits.get();
                if (free > 0 && permits.compareAndSet(free, free - 1)) {
                    return;
                }
                Thread.onSpinWait();
            }
        }

        void release() {
            permits.incrementAndGet();
        }
    }

    static int intArg(String flag, String value) {
        try {
            int n = Integer.parseInt(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            System.err.println("ThrashServer: " + flag + " must be a non-negative number, got " + value);
            System.exit(2);
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        int permits = 16;
        int holdMs = 20;
        int workRoundsArg = 300_000;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                System.err.println("ThrashServer: " + flag
                        + " needs a value (usage: --port N [--permits N] [--hold-ms N] [--work N])");
                System.exit(2);
            }
            String value = args[++i];
            switch (flag) {
                case "--port": port = intArg(flag, value); break;
                case "--permits": permits = Math.max(1, intArg(flag, value)); break;
                case "--hold-ms": holdMs = intArg(flag, value); break;
                case "--work": workRoundsArg = intArg(flag, value); break;
                default:
                    System.err.println("ThrashServer: unknown argument " + flag
                            + " (usage: --port N [--permits N] [--hold-ms N] [--work N])");
                    System.exit(2);
            }
        }

        SpinPermits pool = new SpinPermits(permits);
        final long hold = holdMs;
        final int workRounds = workRoundsArg;
        // Headers and body leave in separate writes: without TCP_NODELAY each response waits
        // ~40 ms for the client's delayed ACK, which is no part of the limit under test.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        ExecutorService threads = Executors.newFixedThreadPool(THREADS);
        server.setExecutor(threads);
        server.createContext("/", exchange -> {
            try (exchange) {
                drain(exchange.getRequestBody());
                pool.acquire();
                long checksum;
                try {
                    Thread.sleep(hold);
                    checksum = work(workRounds);
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    respond(exchange, 500, "interrupted\n");
                    return;
                } finally {
                    pool.release();
                }
                respond(exchange, 200, "ok " + (checksum & 1) + "\n");
            } catch (IOException e) {
                // The client went away (a load generator closing its connections): nothing to do.
            }
        });
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    /** A little CPU work while the permit is held; returns a value so it is not optimised away. */
    static long work(int rounds) {
        long x = 1;
        for (int i = 0; i < rounds; i++) {
            x = x * 6364136223846793005L + 1442695040888963407L;
        }
        return x;
    }

    static void drain(InputStream body) throws IOException {
        byte[] buffer = new byte[4096];
        while (body.read(buffer) != -1) {
        }
    }

    static void respond(HttpExchange exchange, int status, String text) throws IOException {
        byte[] body = text.getBytes(StandardCharsets.UTF_8);
        exchange.getResponseHeaders().set("Content-Type", "text/plain");
        exchange.sendResponseHeaders(status, body.length);
        try (OutputStream out = exchange.getResponseBody()) {
            out.write(body);
        }
    }
}
