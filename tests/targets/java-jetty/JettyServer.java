/*
 * java-jetty: a Jetty 12 server at its defaults (new Server(), one ServerConnector, nothing
 * sized), whose handler makes a blocking HttpURLConnection GET of the downstream. The handler
 * extends Handler.Abstract, which Jetty runs as blocking work on its thread pool. Built after the
 * catalogue's Jetty entry, to test it (issue 22).
 *
 * new Server() makes a QueuedThreadPool of at most 200 threads, named qtp<hash>-N. The
 * connector's acceptor and selector threads come from the same pool, for as long as it runs:
 * the threads left for requests are 200 less those. The hidden limit: about 200 calls at once,
 * the rest queued in the pool's job queue (unbounded), holding no thread.
 *
 * With --network-connection-limit N (built after the rule that reads a target's accept path from
 * its connections, crates/diagnose/src/place/connections.rs, to test it): a Jetty 12.1
 * NetworkConnectionLimit of N on the server, Jetty's own cap on the network connections it
 * accepts at once; past N its connectors stop accepting, so new connections wait in the
 * kernel's listen queue and kept-alive clients past N are never answered (kind
 * connection-limit, N).
 *
 * Usage: java -cp 'JARS/*' JettyServer.java --port 0 --downstream URL [--network-connection-limit N]
 *   JARS: jetty-server 12.1.14 and its dependencies (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/jetty with this
 *   folder's pom.xml).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.NetworkConnectionLimit;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;

public class JettyServer {
    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        int connectionLimit = 0;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = portOf(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                case "--network-connection-limit": connectionLimit = countOf(args[i + 1]); break;
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
        Server server = new Server();
        ServerConnector connector = new ServerConnector(server);
        connector.setHost("127.0.0.1");
        connector.setPort(port);
        server.addConnector(connector);
        if (connectionLimit > 0) {
            server.addBean(new NetworkConnectionLimit(connectionLimit, server));
        }
        server.setHandler(new Handler.Abstract() {
            @Override
            public boolean handle(Request request, Response response, Callback callback) {
                String body;
                try {
                    body = blockingGet(target);
                } catch (IOException e) {
                    response.setStatus(502);
                    body = "downstream failed: " + e;
                }
                response.write(true, ByteBuffer.wrap(body.getBytes(StandardCharsets.UTF_8)), callback);
                return true;
            }
        });
        try {
            server.start();
        } catch (Exception e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        System.out.println("listening on 127.0.0.1:" + connector.getLocalPort());
        System.out.flush();
        server.join();
    }

    /** The downstream's body, read on the calling thread: the blocking call. */
    static String blockingGet(String target) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) URI.create(target).toURL().openConnection();
        connection.setConnectTimeout(5_000);
        connection.setReadTimeout(30_000);
        try (InputStream in = connection.getInputStream()) {
            return new String(in.readAllBytes(), StandardCharsets.UTF_8);
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

    static int countOf(String value) {
        try {
            int n = Integer.parseInt(value);
            if (n >= 1) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage("--network-connection-limit " + value + " is not a count (1 or more)");
        return 0;
    }

    static void usage(String what) {
        System.err.println("JettyServer: " + what + " (usage: --port N --downstream URL [--network-connection-limit N])");
        System.exit(2);
    }
}
