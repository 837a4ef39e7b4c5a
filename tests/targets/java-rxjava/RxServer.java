/*
 * java-rxjava: a target of the tuning set, built after the catalogue's RxJava entries and the
 * growing-pool rule (session 24) to hold them out on the library seed 004's service uses:
 * RxJava 3's schedulers at their defaults.
 *
 * com.sun.net.httpserver.HttpServer answers on its one dispatcher thread, the way an event loop
 * (Micronaut's, Netty's) does: each request becomes
 *   Single.fromCallable(blocking call to --downstream, then --work-us of CPU)
 *         .subscribeOn(scheduler)
 * and the response is written when it completes; the dispatcher returns at once.
 *
 *   --scheduler io           Schedulers.io() (the default): a cached pool, a worker thread
 *                            (RxCachedThreadScheduler-N) whenever none is idle, idle ones kept
 *                            60 s. It never queues, so it grows a thread per request in flight
 *                            until the CPU work of all those threads stops it.
 *   --scheduler computation  Schedulers.computation(): a fixed pool of one thread per core
 *                            (RxComputationThreadPool-N; -Drx3.computation-threads=N sets it),
 *                            each with a queue of its own. A blocking call there holds its
 *                            thread, so the limit is that many calls at once.
 *
 * Usage: java [-Drx3.computation-threads=N] -cp "JARS/*" RxServer.java --port 0 --downstream URL
 *             [--scheduler io|computation] [--work-us 2000]
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import io.reactivex.rxjava3.core.Scheduler;
import io.reactivex.rxjava3.core.Single;
import io.reactivex.rxjava3.schedulers.Schedulers;

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

public class RxServer {
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

    static String callDownstream(URL downstream, long workUs) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) downstream.openConnection();
        connection.setConnectTimeout(5000);
        connection.setReadTimeout(30000);
        try (InputStream body = connection.getInputStream()) {
            body.readAllBytes();
        }
        work(workUs);
        return "ok\n";
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

    static void serve(HttpExchange exchange, Scheduler scheduler, URL downstream, long workUs) {
        try (InputStream in = exchange.getRequestBody()) {
            in.readAllBytes();
        } catch (IOException e) {
            exchange.close();
            return;
        }
        Single.fromCallable(() -> callDownstream(downstream, workUs))
                .subscribeOn(scheduler)
                .subscribe(
                        body -> answer(exchange, 200, body),
                        error -> answer(exchange, 502, "downstream: " + error.getMessage() + "\n"));
    }

    static long longArg(String flag, String value) {
        try {
            long n = Long.parseLong(value);
            if (n < 0) {
                throw new NumberFormatException();
            }
            return n;
        } catch (NumberFormatException e) {
            System.err.println("RxServer: " + flag + " must be a non-negative number, got " + value);
            System.exit(2);
            return 0;
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstreamArg = null;
        long workUs = 2000;
        Scheduler scheduler = Schedulers.io();
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if (i + 1 >= args.length) {
                System.err.println("RxServer: " + flag + " needs a value");
                System.exit(2);
            }
            String value = args[++i];
            switch (flag) {
                case "--port" -> port = (int) longArg(flag, value);
                case "--downstream" -> downstreamArg = value;
                case "--work-us" -> workUs = longArg(flag, value);
                case "--scheduler" -> {
                    switch (value) {
                        case "io" -> scheduler = Schedulers.io();
                        case "computation" -> scheduler = Schedulers.computation();
                        default -> {
                            System.err.println("RxServer: --scheduler must be io or computation, got " + value);
                            System.exit(2);
                        }
                    }
                }
                default -> {
                    System.err.println("RxServer: unknown flag " + flag
                            + " (use --port, --downstream, --scheduler, --work-us)");
                    System.exit(2);
                }
            }
        }
        if (downstreamArg == null) {
            System.err.println("RxServer: --downstream URL is required (the service it calls)");
            System.exit(2);
        }
        URL downstream;
        try {
            downstream = URI.create(downstreamArg).toURL();
        } catch (IllegalArgumentException | IOException e) {
            System.err.println("RxServer: --downstream " + downstreamArg + " is not a URL");
            System.exit(2);
            return;
        }
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        long work = workUs;
        Scheduler on = scheduler;
        server.createContext("/", exchange -> serve(exchange, on, downstream, work));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }
}
