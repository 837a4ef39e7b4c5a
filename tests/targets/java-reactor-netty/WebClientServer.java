/*
 * java-reactor-netty: a Reactor Netty HTTP server (the server under Spring WebFlux) whose handler
 * calls the downstream through Reactor Netty's HttpClient at its defaults, HttpClient.create(),
 * as WebFlux's WebClient does: its connections come from the shared ConnectionProvider, 500 per
 * remote host, 1000 more acquires pending, 45 s to acquire one. Built after the catalogue's
 * Reactor Netty entry, to test it (issue 22).
 *
 * Nothing here holds a thread while it waits: the server's and the client's I/O run on the
 * reactor-http-nio-N event loops, and a call past the 500th waits in the pool's pending queue.
 * The hidden limit: 500 calls in flight to the downstream, whatever the clients.
 *
 * Usage: java -cp 'JARS/*' WebClientServer.java --port 0 --downstream URL
 *   JARS: reactor-netty-http 1.2.16 and its dependencies (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/reactor-netty with
 *   this folder's pom.xml).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import reactor.core.publisher.Mono;
import reactor.netty.DisposableServer;
import reactor.netty.http.client.HttpClient;
import reactor.netty.http.server.HttpServer;

public class WebClientServer {
    public static void main(String[] args) {
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
        // The defaults: the shared pool of HttpClient.create(), 500 connections per remote host.
        HttpClient client = HttpClient.create();
        DisposableServer server;
        try {
            server = listen(port, client, downstream);
        } catch (RuntimeException e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        System.out.println("listening on 127.0.0.1:" + server.port());
        System.out.flush();
        server.onDispose().block();
    }

    /** The server: each request calls the downstream through `client` and answers its body. */
    static DisposableServer listen(int port, HttpClient client, String target) {
        return HttpServer.create()
                .host("127.0.0.1")
                .port(port)
                .handle((request, response) -> client.get().uri(target)
                        .responseContent().aggregate().asString()
                        .flatMap(body -> response.sendString(Mono.just(body)).then())
                        .onErrorResume(e -> response.status(502)
                                .sendString(Mono.just("downstream failed: " + e)).then()))
                .bindNow();
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
        System.err.println("WebClientServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }
}
