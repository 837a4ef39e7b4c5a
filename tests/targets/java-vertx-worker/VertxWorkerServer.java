/*
 * java-vertx-worker: a Vert.x 5 HTTP server at Vert.x's defaults whose handler calls the
 * downstream with a blocking client (java.net.HttpURLConnection) inside
 * vertx.executeBlocking(...), as a Vert.x service does around a JDBC driver or any other
 * blocking library. Built after the catalogue's Vert.x worker pool entry, to test it live.
 *
 * The blocking calls run on Vert.x's worker pool, 20 threads named `vert.x-worker-thread-N`
 * (VertxOptions.DEFAULT_WORKER_POOL_SIZE); the event loop hands a request to the pool and is
 * free again, and requests past the 20th wait in the pool's queue, holding no thread. The hidden
 * limit is those 20 workers: 20 calls in flight, whatever the clients. The calls are unordered
 * (`executeBlocking(callable, false)`): the one-argument form is ordered, and runs the blocking
 * calls of one context one at a time, every request of this server being on one context.
 *
 * Usage: java -cp 'JARS/*' VertxWorkerServer.java --port 0 --downstream URL
 *   JARS: vertx-core 5.0.7 and its dependencies (Netty 4.2, jackson-core; Maven Central:
 *   scripts/install-test-deps.sh copies the closure of pom.xml to
 *   ~/.cache/chokepoint-bench/vertx).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URL;

public class VertxWorkerServer {
    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                default:
                    System.err.println("VertxWorkerServer: unknown argument " + args[i]
                            + " (usage: --port N --downstream URL)");
                    System.exit(2);
            }
        }
        if (downstream == null) {
            System.err.println("VertxWorkerServer: --downstream URL is needed");
            System.exit(2);
        }
        URL url = new URL(downstream);
        // The defaults: 20 worker threads, 2 × cores event loops.
        Vertx vertx = Vertx.vertx();
        HttpServer server = vertx.createHttpServer()
                .requestHandler(request -> handle(vertx, request, url))
                .listen(port, "127.0.0.1")
                .toCompletionStage().toCompletableFuture().get();
        System.out.println("listening on 127.0.0.1:" + server.actualPort());
        System.out.flush();
    }

    /** The call, on a worker thread; the answer is sent from the event loop when it is done. */
    static void handle(Vertx vertx, HttpServerRequest request, URL url) {
        vertx.executeBlocking(() -> call(url), false).onComplete(done -> {
            if (done.succeeded()) {
                request.response().end(done.result());
            } else {
                request.response().setStatusCode(502).end("downstream: " + done.cause() + "\n");
            }
        });
    }

    /** One blocking GET of the downstream; the worker thread waits in the socket's read. */
    static String call(URL url) throws IOException {
        HttpURLConnection connection = (HttpURLConnection) url.openConnection();
        connection.setConnectTimeout(10_000);
        connection.setReadTimeout(30_000);
        try (InputStream body = connection.getInputStream()) {
            int status = connection.getResponseCode();
            byte[] bytes = body.readAllBytes();
            return "downstream " + status + ", " + bytes.length + " bytes\n";
        }
    }
}
