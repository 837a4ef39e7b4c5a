/*
 * java-jdk-httpclient: a JDK HTTP server whose handlers call the downstream through the JDK's
 * own java.net.http.HttpClient at its defaults (HttpClient.newHttpClient(), send()). Built after
 * the catalogue was read for it (issue 22): at HTTP/1.1 that client caps nothing. It opens a
 * connection whenever none is idle: jdk.internal.net.http.ConnectionPool holds idle ones only,
 * and jdk.httpclient.connectionPoolSize (MAX_POOL_SIZE, 0: "unbounded") bounds how many it
 * keeps idle, closing the oldest when a returned one would pass it, never how many are open
 * (openjdk/jdk@d7cadc9ad27e9cf2053d1f6dc314d040e963a91a,
 * src/java.net.http/share/classes/jdk/internal/net/http/ConnectionPool.java, returnToPool).
 * Its default executor is a cached pool.
 *
 * So the hidden limit is the service's own: the handlers run on a fixed pool of 12 threads named
 * `http-exec-N`, each parked in HttpClient.send on a future while the client's
 * `HttpClient-1-SelectorManager` thread does the I/O. 12 calls in flight, whatever the clients;
 * raising a client setting would change nothing.
 *
 * Usage: java JdkClientServer.java --port 0 --downstream URL
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class JdkClientServer {
    static final int THREADS = 12;

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = portOf(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                default: usage("unknown argument " + args[i]);
            }
        }
        if (downstream == null) {
            usage("--downstream URL is needed");
        }
        URI target = httpUri(downstream);
        HttpClient client = HttpClient.newHttpClient();
        AtomicInteger serial = new AtomicInteger();
        ExecutorService handlers = Executors.newFixedThreadPool(THREADS, runnable -> {
            Thread thread = new Thread(runnable, "http-exec-" + serial.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        } catch (java.io.IOException e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        server.setExecutor(handlers);
        server.createContext("/", exchange -> handle(exchange, client, target));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    static URI httpUri(String value) {
        try {
            URI uri = new URI(value);
            if (("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                    && uri.getHost() != null) {
                return uri;
            }
        } catch (java.net.URISyntaxException e) {
            // Said below.
        }
        usage("--downstream must be an http:// or https:// URL, not " + value);
        return null;
    }

    static int portOf(String value) {
        try {
            int port = Integer.parseInt(value);
            if (port >= 0 && port <= 65535) {
                return port;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage("--port " + value + " is not a port (0 to 65535; 0 picks a free one)");
        return 0;
    }

    static void usage(String what) {
        System.err.println("JdkClientServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }

    static void handle(HttpExchange exchange, HttpClient client, URI downstream) {
        int status = 200;
        String body;
        try {
            HttpRequest request = HttpRequest.newBuilder(downstream).GET().build();
            body = client.send(request, HttpResponse.BodyHandlers.ofString()).body();
        } catch (Exception e) {
            status = 502;
            body = "downstream failed: " + e;
        }
        try {
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, bytes.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(bytes);
            }
        } catch (Exception e) {
            // The client went away: nothing to answer.
        } finally {
            exchange.close();
        }
    }
}
