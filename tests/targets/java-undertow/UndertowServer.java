/*
 * java-undertow: an Undertow 2.4 HTTP server at its defaults (Undertow.builder() with one HTTP
 * listener, nothing sized), whose handler makes a blocking HttpURLConnection GET of the
 * downstream inside a BlockingHandler, the way Undertow's docs say to run blocking work. Built
 * after the catalogue's Undertow entry, to test it (issue 22).
 *
 * Undertow.builder() at its defaults: max(cores, 2) I/O threads and 8 worker threads per I/O
 * thread (Undertow.java's Builder), the XNIO worker's task pool, named "XNIO-1 task-N". A
 * blocking handler holds a worker for its whole call: the hidden limit is 8 × max(cores, 2)
 * calls at once (16 on 2 cores), the rest queued in the task pool, holding no thread.
 *
 * With --connection-high-water N the listener's XNIO server stops accepting at N connections
 * (Options.CONNECTION_HIGH_WATER, low water N too: XNIO's NioTcpServer splits it between the I/O
 * threads and resumes accepting when a connection closes); the connections past N wait in the
 * listen queue while worker threads sit idle. Added after the accept-path rule (issue 22), to
 * hold it out.
 *
 * Usage: java -cp 'JARS/*' UndertowServer.java --port 0 --downstream URL [--connection-high-water N]
 *   JARS: undertow-core 2.4.4.Final and its dependencies (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/undertow with this
 *   folder's pom.xml).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import io.undertow.Undertow;
import io.undertow.server.HttpHandler;
import io.undertow.server.handlers.BlockingHandler;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import org.xnio.Options;

public class UndertowServer {
    public static void main(String[] args) {
        int port = 0;
        String downstream = null;
        int highWater = 0;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = portOf(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                case "--connection-high-water": highWater = countOf(args[i], args[i + 1]); break;
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
        HttpHandler call = exchange -> {
            String body;
            try {
                body = blockingGet(target);
            } catch (IOException e) {
                exchange.setStatusCode(502);
                body = "downstream failed: " + e;
            }
            exchange.getResponseSender().send(body);
        };
        Undertow.Builder builder = Undertow.builder()
                .addHttpListener(port, "127.0.0.1")
                .setHandler(new BlockingHandler(call));
        if (highWater > 0) {
            builder.setSocketOption(Options.CONNECTION_HIGH_WATER, highWater)
                    .setSocketOption(Options.CONNECTION_LOW_WATER, highWater);
        }
        Undertow server = builder.build();
        try {
            server.start();
        } catch (RuntimeException e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        InetSocketAddress bound = (InetSocketAddress) server.getListenerInfo().get(0).getAddress();
        System.out.println("listening on 127.0.0.1:" + bound.getPort());
        System.out.flush();
    }

    /** The downstream's body, read on the calling thread: the blocking call. */
    static String blockingGet(String target) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(target).toURL().openConnection();
        connection.setConnectTimeout(5_000);
        connection.setReadTimeout(30_000);
        try (InputStream in = connection.getInputStream()) {
            return new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8);
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

    static int countOf(String flag, String value) {
        try {
            int count = Integer.parseInt(value);
            if (count > 0) {
                return count;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage(flag + " " + value + " is not a count of connections (1 or more)");
        return 0;
    }

    static void usage(String what) {
        System.err.println("UndertowServer: " + what + " (usage: --port N --downstream URL [--connection-high-water N])");
        System.exit(2);
    }
}
