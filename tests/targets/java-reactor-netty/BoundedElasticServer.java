/*
 * java-reactor-netty's BoundedElasticServer: a Reactor Netty HTTP server (the server under Spring
 * WebFlux) whose handler makes a blocking call the way Reactor's docs say to wrap one:
 * Mono.fromCallable(call).subscribeOn(Schedulers.boundedElastic()). The call is a plain
 * HttpURLConnection GET of the downstream. Built after the catalogue's boundedElastic entry, to
 * test it (issue 22).
 *
 * Schedulers.boundedElastic() at its defaults: at most 10 × the JVM's available processors
 * threads (named boundedElastic-N, made on demand), and 100,000 tasks queued beyond them
 * (reactor-core's Schedulers.DEFAULT_BOUNDED_ELASTIC_SIZE and _QUEUESIZE). The hidden limit: 10 ×
 * cores calls at once (20 on 2 cores), the rest queued, holding no thread. The server's event
 * loops wait for nothing. Reactor Netty's jar is open in the JVM, and its shared connection pool
 * (500 per host) is not the limit: the calls do not go through it.
 *
 * With --on-event-loop the call is made without subscribeOn, as code that forgot it does: on the
 * server's event loop that read the request (reactor-http-epoll-N, max(cores, 4) of them,
 * LoopResources' DEFAULT_IO_WORKER_COUNT), each connection bound to one loop. A loop blocked in
 * a call serves none of its other connections: the hidden limit is the loops, 4 on 2 cores.
 *
 * Usage: java -cp 'JARS/*' BoundedElasticServer.java --port 0 --downstream URL [--on-event-loop]
 *   JARS: as WebClientServer.java's (reactor-netty-http 1.2.16 and its dependencies, reactor-core
 *   among them).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import reactor.core.publisher.Mono;
import reactor.core.scheduler.Schedulers;
import reactor.netty.DisposableServer;
import reactor.netty.http.server.HttpServer;

public class BoundedElasticServer {
    public static void main(String[] args) {
        int port = 0;
        String downstream = null;
        boolean onEventLoop = false;
        for (int i = 0; i < args.length; i += 2) {
            if (args[i].equals("--on-event-loop")) {
                onEventLoop = true;
                i -= 1;
                continue;
            }
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
        boolean blockTheLoop = onEventLoop;
        DisposableServer server;
        try {
            server = HttpServer.create()
                    .host("127.0.0.1")
                    .port(port)
                    .handle((request, response) -> onScheduler(
                                    Mono.fromCallable(() -> blockingGet(target)), blockTheLoop)
                            .flatMap(body -> response.sendString(Mono.just(body)).then())
                            .onErrorResume(e -> response.status(502)
                                    .sendString(Mono.just("downstream failed: " + e)).then()))
                    .bindNow();
        } catch (RuntimeException e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        System.out.println("listening on 127.0.0.1:" + server.port());
        System.out.flush();
        server.onDispose().block();
    }

    /** `call` on boundedElastic, or where it is subscribed (the event loop) when `onLoop`. */
    static Mono<String> onScheduler(Mono<String> call, boolean onLoop) {
        return onLoop ? call : call.subscribeOn(Schedulers.boundedElastic());
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

    static void usage(String what) {
        System.err.println("BoundedElasticServer: " + what + " (usage: --port N --downstream URL [--on-event-loop])");
        System.exit(2);
    }
}
