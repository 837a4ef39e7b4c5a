/*
 * java-scala-global: a service whose requests make a blocking HttpURLConnection GET of the
 * downstream in a future on Scala's global ExecutionContext (ExecutionContext.Implicits.global,
 * the one a Scala service gets by `import scala.concurrent.ExecutionContext.Implicits.global`),
 * written in Java against scala-library 2.13 so that it needs no Scala compiler:
 * CompletableFuture.supplyAsync(call, ExecutionContext.global()) is Future { call } on it. The
 * HTTP side is the JDK's HttpServer on a cached pool, whose threads wait for the future. Built
 * after the catalogue's entry for the global context, to test it (issue 22); held out: no rule
 * was written on it.
 *
 * The global context at its defaults (scala-library 2.13, ExecutionContextImpl): a fork-join
 * pool of min(max(minThreads 1, numThreads "x1"), maxThreads "x1") threads, so one per core,
 * named scala-execution-context-global-N. A call that blocks without `blocking { }` holds one.
 * The system properties -Dscala.concurrent.context.numThreads and maxThreads change it (both:
 * maxThreads caps numThreads).
 *
 * Usage: java [-Dscala.concurrent.context.numThreads=N -Dscala.concurrent.context.maxThreads=N]
 *          -cp 'JARS/*' ScalaGlobalServer.java --port 0 --downstream URL
 *   JARS: scala-library 2.13.18 (Maven Central; scripts/install-test-deps.sh copies it into
 *   ~/.cache/chokepoint-bench/scala).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.Executor;
import java.util.concurrent.Executors;
import scala.concurrent.ExecutionContext;

public class ScalaGlobalServer {
    public static void main(String[] args) throws IOException {
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
        String target = downstream;
        Executor global = ExecutionContext.global();
        HttpServer server;
        try {
            server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        } catch (IOException e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        server.setExecutor(Executors.newCachedThreadPool());
        server.createContext("/", exchange -> {
            byte[] body;
            int status = 200;
            try {
                body = CompletableFuture.supplyAsync(() -> blockingGet(target), global)
                        .join().getBytes(StandardCharsets.UTF_8);
            } catch (RuntimeException e) {
                status = 502;
                body = ("downstream failed: " + e).getBytes(StandardCharsets.UTF_8);
            }
            exchange.sendResponseHeaders(status, body.length);
            try (OutputStream out = exchange.getResponseBody()) {
                out.write(body);
            }
        });
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    /** The downstream's body, read on the calling thread: the blocking call. */
    static String blockingGet(String target) {
        try {
            HttpURLConnection connection =
                    (HttpURLConnection) URI.create(target).toURL().openConnection();
            connection.setConnectTimeout(5_000);
            connection.setReadTimeout(30_000);
            try (InputStream in = connection.getInputStream()) {
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            }
        } catch (IOException e) {
            throw new java.io.UncheckedIOException(e);
        }
    }

    static boolean isHttpUrl(String value) {
        try {
            URI uri = new URI(value);
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
        System.err.println("ScalaGlobalServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }
}
