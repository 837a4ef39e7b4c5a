/*
 * java-httpclient4: a JDK HTTP server whose handlers call the downstream through Apache
 * HttpClient 4 at its defaults (HttpClients.createDefault(): a PoolingHttpClientConnectionManager
 * of 2 connections per route, 20 in all), the client under Spring 5's RestTemplate on
 * HttpComponentsClientHttpRequestFactory and countless services of the 2010s. Built after the
 * catalogue entry it tests (issue 22).
 *
 * The handlers run on a fixed pool of 20 threads named `http-exec-N`: 8 clients put 2 threads in
 * the call and 6 waiting in AbstractConnPool.getPoolEntryBlocking for a lease. The hidden limit
 * is the client's 2 connections per route: 2 calls in flight, whatever the clients.
 *
 * Usage: java -cp 'JARS/*' ClientPoolServer.java --port 0 --downstream URL
 *   JARS: httpclient 4.5.14, httpcore 4.4.16, commons-logging 1.2, commons-codec 1.11 (Maven
 *   Central; scripts/install-test-deps.sh puts them in ~/.cache/chokepoint-bench/httpclient4).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.apache.http.client.methods.HttpGet;
import org.apache.http.impl.client.CloseableHttpClient;
import org.apache.http.impl.client.HttpClients;
import org.apache.http.util.EntityUtils;

import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class ClientPoolServer {
    static final int THREADS = 20;

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
        if (!isHttpUrl(downstream)) {
            usage("--downstream must be an http:// or https:// URL, not " + downstream);
        }
        // The defaults: HttpClients.createDefault() pools 2 connections per route, 20 in all.
        CloseableHttpClient client = HttpClients.createDefault();
        String target = downstream;
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

    static boolean isHttpUrl(String value) {
        try {
            java.net.URI uri = new java.net.URI(value);
            return ("http".equals(uri.getScheme()) || "https".equals(uri.getScheme()))
                    && uri.getHost() != null;
        } catch (java.net.URISyntaxException e) {
            return false;
        }
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
        System.err.println("ClientPoolServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }

    static void handle(HttpExchange exchange, CloseableHttpClient client, String downstream) {
        int status = 200;
        String body;
        try {
            body = client.execute(new HttpGet(downstream),
                    response -> EntityUtils.toString(response.getEntity()));
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
