/*
 * java-akka: java-pekko's service on Akka 2.6.20 (the last Apache-licensed Akka; Pekko forked
 * from it), built after the catalogue's Akka entry to test it live (session 24): its requests
 * make a blocking HttpURLConnection GET of the downstream inside a Future on the actor system's
 * default dispatcher, CompletableFuture.supplyAsync(call, system.dispatcher()), the blocking
 * Akka's docs warn against. The HTTP side is the JDK's HttpServer on a cached pool, whose
 * threads wait for the future.
 *
 * The default dispatcher at its defaults (reference.conf): a fork-join-executor of
 * ceil(cores × 1.0) threads, at least 8, at most 64, named <system>-akka.actor.default-dispatcher-N.
 * The hidden limit: 8 calls at once on up to 8 cores, the rest queued in the pool.
 *
 * With --dispatcher ID (and --config FILE) the calls run on that dispatcher instead, as in
 * java-pekko; not swept here.
 *
 * Usage: java -cp 'JARS/*' AkkaServer.java --port 0 --downstream URL [--config FILE --dispatcher ID]
 *   JARS: akka-actor_2.13 2.6.20 and its dependencies (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/akka with this
 *   folder's pom.xml).
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
import com.typesafe.config.Config;
import com.typesafe.config.ConfigFactory;
import java.util.concurrent.Executors;
import akka.actor.ActorSystem;

public class AkkaServer {
    public static void main(String[] args) throws IOException {
        int port = 0;
        String downstream = null;
        String configFile = null;
        String dispatcherId = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = portOf(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                case "--config": configFile = args[i + 1]; break;
                case "--dispatcher": dispatcherId = args[i + 1]; break;
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
        Config config = ConfigFactory.load();
        if (configFile != null) {
            java.io.File file = new java.io.File(configFile);
            if (!file.isFile()) {
                usage("--config " + configFile + " is not a file");
            }
            config = ConfigFactory.parseFile(file).withFallback(config).resolve();
        }
        if (dispatcherId != null && !config.hasPath(dispatcherId)) {
            usage("--dispatcher " + dispatcherId + " is not configured (add it with --config FILE)");
        }
        ActorSystem system = ActorSystem.create("svc", config);
        Executor calls = dispatcherId == null
                ? system.dispatcher()
                : system.dispatchers().lookup(dispatcherId);
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
                body = CompletableFuture.supplyAsync(() -> blockingGet(target), calls)
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
        System.err.println("AkkaServer: " + what + " (usage: --port N --downstream URL [--config FILE --dispatcher ID])");
        System.exit(2);
    }
}
