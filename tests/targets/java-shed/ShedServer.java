/*
 * java-shed: a target of the tuning set (tests/targets/: chokepoint's rules were tuned on these) (JDK only).
 *
 * com.sun.net.httpserver.HttpServer on a large thread pool (256 threads). Each request tries to
 * take one of 30 permits of a Semaphore without waiting: with a permit it does the work (sleeps
 * 100 ms, or calls --downstream URL when given) and answers 200; without one it answers 503 at
 * once. The hidden limit is 30 successful requests in flight (kind error-bound): past 30 clients
 * the successful throughput stays flat and the excess requests get fast 503s.
 *
 * Usage: java ShedServer.java --port 0 [--downstream URL]
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;

public class ShedServer {
    static final int PERMITS = 30;
    static final int THREADS = 256;
    static final long WORK_MS = 100;

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        for (int i = 0; i < args.length; i++) {
            String flag = args[i];
            if ((flag.equals("--port") || flag.equals("--downstream")) && i + 1 >= args.length) {
                System.err.println("ShedServer: " + flag + " needs a value");
                System.exit(2);
            }
            switch (flag) {
                case "--port":
                    try {
                        port = Integer.parseInt(args[++i]);
                    } catch (NumberFormatException e) {
                        System.err.println("ShedServer: --port must be a number, got " + args[i]);
                        System.exit(2);
                    }
                    break;
                case "--downstream":
                    downstream = args[++i];
                    break;
                default:
                    System.err.println("ShedServer: unknown argument " + flag
                            + " (usage: --port N [--downstream URL])");
                    System.exit(2);
            }
        }

        Semaphore permits = new Semaphore(PERMITS);
        HttpClient client = downstream == null ? null
                : HttpClient.newBuilder().connectTimeout(Duration.ofSeconds(5)).build();
        URI downstreamUri = downstream == null ? null : URI.create(downstream);

        // Headers and body leave in separate writes: without TCP_NODELAY each response waits
        // ~40 ms for the client's delayed ACK, which is no part of the limit under test.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        ExecutorService pool = Executors.newFixedThreadPool(THREADS);
        server.setExecutor(pool);
        server.createContext("/", exchange -> {
            try (exchange) {
                drain(exchange.getRequestBody());
                if (!permits.tryAcquire()) {
                    respond(exchange, 503, "busy\n");
                    return;
                }
                // The permit covers the work only, so a client that sends its next request the
                // moment it has its answer finds the permit free again.
                String failure = null;
                try {
                    work(client, downstreamUri);
                } catch (Exception e) {
                    failure = "downstream: " + e + "\n";
                } finally {
                    permits.release();
                }
                if (failure == null) {
                    respond(exchange, 200, "ok\n");
                } else {
                    respond(exchange, 502, failure);
                }
            }
        });
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    static void work(HttpClient client, URI downstream) throws Exception {
        if (client == null) {
            Thread.sleep(WORK_MS);
            return;
        }
        HttpRequest request = HttpRequest.newBuilder(downstream).timeout(Duration.ofSeconds(30)).build();
        client.send(request, HttpResponse.BodyHandlers.discarding());
    }

    static void drain(InputStream body) throws IOException {
        byte[] buffer = new byte[4096];
        while (body.read(buffer) >= 0) {
            // discard
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
