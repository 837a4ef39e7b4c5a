/*
 * java-httpclient5: a JDK HTTP server whose handlers call the downstream through Apache
 * HttpClient 5 with its defaults (PoolingHttpClientConnectionManager: 5 connections per route,
 * 25 in all), as Spring's RestTemplate does on HttpComponentsClientHttpRequestFactory. Built
 * after the rule that keeps a thread pool's own setting from being named when its threads queue
 * for a resource (issue 22): it is the shape of the Spring Boot service whose finding named
 * Tomcat's maxThreads for a client pool of 5.
 *
 * The handlers run on a fixed pool of 20 threads named `http-exec-N`: 20 clients put 5 threads
 * in the call and 15 waiting to lease a connection. The hidden limit is the client's 5
 * connections per route: 5 calls in flight, whatever the clients.
 *
 * Usage: java -cp 'JARS/*' ClientPoolServer.java --port 0 --downstream URL
 *   JARS: httpclient5 5.3.1, httpcore5 5.2.4, httpcore5-h2 5.2.4, slf4j-api 1.7.36 (Maven
 *   Central; scripts/install-test-deps.sh puts them in ~/.cache/chokepoint-bench/httpclient5).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import org.apache.hc.client5.http.classic.methods.HttpGet;
import org.apache.hc.client5.http.impl.classic.CloseableHttpClient;
import org.apache.hc.client5.http.impl.classic.HttpClients;
import org.apache.hc.core5.http.io.entity.EntityUtils;

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
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                default:
                    System.err.println("ClientPoolServer: unknown argument " + args[i]
                            + " (usage: --port N --downstream URL)");
                    System.exit(2);
            }
        }
        if (downstream == null) {
            System.err.println("ClientPoolServer: --downstream URL is needed");
            System.exit(2);
        }
        // The defaults: HttpClients.createDefault() pools 5 connections per route, 25 in all.
        CloseableHttpClient client = HttpClients.createDefault();
        String target = downstream;
        AtomicInteger serial = new AtomicInteger();
        ExecutorService handlers = Executors.newFixedThreadPool(THREADS, runnable -> {
            Thread thread = new Thread(runnable, "http-exec-" + serial.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> handle(exchange, client, target));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
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
