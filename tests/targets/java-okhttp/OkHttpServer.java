/*
 * java-okhttp: a JDK HTTP server whose handlers call the downstream through one OkHttp client at
 * its defaults, asynchronously (`enqueue`), as Retrofit's async calls and most Kotlin services
 * do. Built after the catalogue's OkHttp entry, to test it live.
 *
 * OkHttp's Dispatcher runs at most 5 asynchronous calls per host (64 in all); the rest wait in
 * its ready queue, holding no thread. The calls run on the Dispatcher's own threads, named
 * `OkHttp Dispatcher`; the handlers (a fixed pool of 20 threads named `http-exec-N`) wait for
 * their call's answer. The hidden limit is the Dispatcher's 5 per host: 5 calls in flight,
 * whatever the clients. (A synchronous `execute()` passes no such cap, and OkHttp's
 * ConnectionPool, 5 idle connections kept 5 minutes, caps nothing.)
 *
 * Usage: java -cp 'JARS/*' OkHttpServer.java --port 0 --downstream URL
 *   JARS: okhttp 4.12.0, okio-jvm 3.6.0, kotlin-stdlib 1.8.21 (Maven Central;
 *   scripts/install-test-deps.sh puts them in ~/.cache/chokepoint-bench/okhttp).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import okhttp3.Call;
import okhttp3.Callback;
import okhttp3.OkHttpClient;
import okhttp3.Request;
import okhttp3.Response;

import java.io.IOException;
import java.io.OutputStream;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class OkHttpServer {
    static final int THREADS = 20;

    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port": port = Integer.parseInt(args[i + 1]); break;
                case "--downstream": downstream = args[i + 1]; break;
                default:
                    System.err.println("OkHttpServer: unknown argument " + args[i]
                            + " (usage: --port N --downstream URL)");
                    System.exit(2);
            }
        }
        if (downstream == null) {
            System.err.println("OkHttpServer: --downstream URL is needed");
            System.exit(2);
        }
        // The defaults: Dispatcher(maxRequests = 64, maxRequestsPerHost = 5).
        OkHttpClient client = new OkHttpClient();
        Request request = new Request.Builder().url(downstream).build();
        AtomicInteger serial = new AtomicInteger();
        ExecutorService handlers = Executors.newFixedThreadPool(THREADS, runnable -> {
            Thread thread = new Thread(runnable, "http-exec-" + serial.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> handle(exchange, client, request));
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }

    /** The call, enqueued on the Dispatcher; the handler waits for its answer. */
    static String call(OkHttpClient client, Request request) throws Exception {
        CompletableFuture<String> answer = new CompletableFuture<>();
        client.newCall(request).enqueue(new Callback() {
            @Override
            public void onFailure(Call call, IOException e) {
                answer.completeExceptionally(e);
            }

            @Override
            public void onResponse(Call call, Response response) {
                try (response) {
                    answer.complete(response.body().string());
                } catch (IOException e) {
                    answer.completeExceptionally(e);
                }
            }
        });
        return answer.get();
    }

    static void handle(HttpExchange exchange, OkHttpClient client, Request request) {
        int status = 200;
        String body;
        try {
            body = call(client, request);
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
