/*
 * The JVM twin of `chokepoint demo-service`: the seeds' hidden limits on real java.util.concurrent
 * pools whose threads say their pool's name, so a thread dump (jstack, jcmd Thread.print) of it
 * looks like the seeds' dumps. JDK only; run it with Java's source launcher:
 *
 *   java examples/jvm/BlockingDemo.java --port 8081 --downstream http://127.0.0.1:9090
 *
 * Flags (same names and defaults as `chokepoint demo-service`): --port 8081 (0 picks a free one),
 * --downstream URL, --actors 20, --cpu-pool <cores>, --client-pool 25, --dispatcher 16,
 * --cpu-ms 10, --products PROD-001,PROD-002,PROD-003,PROD-004.
 * The first line on stdout is "listening on http://127.0.0.1:PORT".
 *
 * Routes (DESIGN.md "Demo scenarios"); each blocking route calls <downstream><its own path>:
 *   /actors        a blocking HttpURLConnection call on a fixed pool "actor-pool-N" (seed 000's
 *                  router of 20 actors): the pool thread sits in a socket read for the delay
 *   /global        the same on a fixed pool "cpu-pool-N" sized to the cores (seed 000, 002)
 *   /blocking      a cached pool "elastic-pool-N" (a thread per request), but the client allows
 *                  --client-pool calls at once (a Semaphore: seed 000's Camel pool of 25)
 *   /dispatcher    a fixed pool "blocking-dispatcher-N" of 16 (seed 002)
 *   /async         HttpClient.sendAsync: no thread waits (seed 004)
 *   /recommendations         /product/{id} for every id in parallel, async (latency = slowest)
 *   /recommendations-serial  the same calls one after another, async (latency = sum)
 *   /cpu           --cpu-ms of thread CPU time on a cached pool "cpu-work-N" (seed 003)
 *   /leaky         a new keep-alive connection per request on "leaky-client-N", left open (seed 001)
 *   GET /          the routes and their limits as JSON
 * Fixed pools queue without bound (LinkedBlockingQueue), so excess load is latency, not errors.
 * A failed downstream call answers 502 with a one-line body.
 */

import com.sun.net.httpserver.HttpExchange;
import com.sun.net.httpserver.HttpServer;
import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.ByteBuffer;
import java.nio.channels.SocketChannel;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Semaphore;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Supplier;

public final class BlockingDemo {
    /** Connect/request timeout of every downstream call, so no thread waits forever. */
    static final Duration DOWNSTREAM_TIMEOUT = Duration.ofSeconds(60);
    /** At most this many connections /leaky keeps open; the oldest is closed beyond it. */
    static final int MAX_LEAKED = 2000;

    final String downstream;
    final String downstreamHost;
    final int downstreamPort;
    final int actors, cpuPool, clientPool, dispatcher;
    final long cpuMs;
    final List<String> products;

    final ExecutorService actorPool, globalPool, dispatcherPool, elasticPool, cpuWork, leakyClients;
    final Semaphore clientSlots;
    final HttpClient client;
    final ArrayDeque<SocketChannel> leaked = new ArrayDeque<>();

    public static void main(String[] args) {
        // HttpURLConnection keeps at most this many idle connections per host for reuse (5 by
        // default, too few for pools of 20: the rest would reconnect on every call).
        System.setProperty("http.maxConnections", "1000");
        try {
            Settings settings = Settings.parse(args);
            BlockingDemo demo = new BlockingDemo(settings);
            HttpServer server = demo.listen(settings.port);
            System.out.println("listening on http://127.0.0.1:" + server.getAddress().getPort());
            System.out.flush();
        } catch (IllegalArgumentException e) {
            System.err.println("BlockingDemo: " + e.getMessage());
            System.exit(2);
        } catch (IOException e) {
            System.err.println("BlockingDemo: cannot listen: " + e.getMessage()
                    + " (is the port in use? pick another with --port)");
            System.exit(2);
        }
    }

    BlockingDemo(Settings s) {
        URI base = URI.create(s.downstream);
        if (!"http".equals(base.getScheme()) || base.getHost() == null) {
            throw new IllegalArgumentException("--downstream '" + s.downstream
                    + "' is not an http:// URL: give e.g. http://127.0.0.1:9090");
        }
        downstream = s.downstream.replaceAll("/+$", "");
        downstreamHost = base.getHost();
        downstreamPort = base.getPort() < 0 ? 80 : base.getPort();
        actors = s.actors;
        cpuPool = s.cpuPool;
        clientPool = s.clientPool;
        dispatcher = s.dispatcher;
        cpuMs = s.cpuMs;
        products = s.products;
        actorPool = Executors.newFixedThreadPool(actors, named("actor-pool"));
        globalPool = Executors.newFixedThreadPool(cpuPool, named("cpu-pool"));
        dispatcherPool = Executors.newFixedThreadPool(dispatcher, named("blocking-dispatcher"));
        elasticPool = Executors.newCachedThreadPool(named("elastic-pool"));
        cpuWork = Executors.newCachedThreadPool(named("cpu-work"));
        leakyClients = Executors.newCachedThreadPool(named("leaky-client"));
        clientSlots = new Semaphore(clientPool, true);
        client = HttpClient.newBuilder()
                .version(HttpClient.Version.HTTP_1_1)
                .connectTimeout(DOWNSTREAM_TIMEOUT)
                .build();
    }

    /** Threads named "<pool>-1", "<pool>-2", ...; daemons, so the JVM exits when main does. */
    static ThreadFactory named(String pool) {
        AtomicInteger next = new AtomicInteger();
        return work -> {
            Thread thread = new Thread(work, pool + "-" + next.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        };
    }

    HttpServer listen(int port) throws IOException {
        // Headers and body go out in separate writes: without TCP_NODELAY, Nagle's algorithm and
        // the client's delayed ACK would add ~40 ms to every answer.
        System.setProperty("sun.net.httpserver.nodelay", "true");
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        // Handlers only hand the exchange over to a route's pool (or answer at once), so they run
        // on the server's own dispatcher thread: one thread hand-off less per request.
        server.setExecutor(null);
        server.createContext("/", this::route);
        server.start();
        return server;
    }

    void route(HttpExchange exchange) {
        String path = exchange.getRequestURI().getPath();
        switch (path) {
            case "/" -> respond(exchange, 200, "application/json", routesJson(), null);
            case "/actors" -> actorPool.execute(() -> blockingCall(exchange, "/actors"));
            case "/global" -> globalPool.execute(() -> blockingCall(exchange, "/global"));
            case "/dispatcher" -> dispatcherPool.execute(() -> blockingCall(exchange, "/dispatcher"));
            case "/blocking" -> elasticPool.execute(() -> {
                try {
                    clientSlots.acquire();
                } catch (InterruptedException e) {
                    Thread.currentThread().interrupt();
                    respond(exchange, 503, "text/plain", "/blocking: interrupted", null);
                    return;
                }
                try {
                    blockingCall(exchange, "/blocking");
                } finally {
                    clientSlots.release();
                }
            });
            case "/async" -> asyncGet("/async").whenComplete((answer, error) ->
                    answer(exchange, "/async", answer, error));
            case "/recommendations" -> recommendations(exchange, true);
            case "/recommendations-serial" -> recommendations(exchange, false);
            case "/cpu" -> cpuWork.execute(() -> {
                long checksum = burnCpu(cpuMs);
                respond(exchange, 200, "application/json",
                        "{\"cpu_ms\":" + cpuMs + ",\"checksum\":" + checksum + "}", null);
            });
            case "/leaky" -> leakyClients.execute(() -> leakyCall(exchange));
            default -> respond(exchange, 404, "text/plain",
                    "no route " + path + ": GET / lists the routes", null);
        }
    }

    HttpRequest get(String path) {
        return HttpRequest.newBuilder(URI.create(downstream + path))
                .timeout(DOWNSTREAM_TIMEOUT)
                .GET()
                .build();
    }

    /**
     * The calling pool thread makes the downstream call itself and sits in a socket read for the
     * whole delay (HttpURLConnection: the thread parks in NioSocketImpl.read, as a SOAP or JDBC
     * client's thread does). Connections are kept alive and reused (http.maxConnections).
     */
    void blockingCall(HttpExchange exchange, String path) {
        String worker = Thread.currentThread().getName();
        HttpURLConnection connection = null;
        try {
            connection = (HttpURLConnection) URI.create(downstream + path).toURL().openConnection();
            connection.setConnectTimeout((int) DOWNSTREAM_TIMEOUT.toMillis());
            connection.setReadTimeout((int) DOWNSTREAM_TIMEOUT.toMillis());
            int status = connection.getResponseCode();
            InputStream body = status >= 400 ? connection.getErrorStream() : connection.getInputStream();
            byte[] bytes = body == null ? new byte[0] : body.readAllBytes();
            if (body != null) {
                body.close(); // returns the connection to the keep-alive cache
            }
            if (status < 200 || status > 299) {
                respond(exchange, 502, "text/plain", path + ": the downstream answered " + status, null);
            } else {
                respond(exchange, 200, "application/octet-stream", bytes, worker);
            }
        } catch (IOException | RuntimeException e) {
            if (connection != null) {
                connection.disconnect();
            }
            respond(exchange, 502, "text/plain", path + ": the downstream call failed: " + oneLine(e), null);
        }
    }

    CompletableFuture<HttpResponse<byte[]>> asyncGet(String path) {
        return client.sendAsync(get(path), HttpResponse.BodyHandlers.ofByteArray());
    }

    /** Answers with an async downstream call's outcome: its body, or 502. */
    void answer(HttpExchange exchange, String route, HttpResponse<byte[]> response, Throwable error) {
        if (error != null) {
            respond(exchange, 502, "text/plain",
                    route + ": the downstream call failed: " + oneLine(error), null);
        } else if (response.statusCode() < 200 || response.statusCode() > 299) {
            respond(exchange, 502, "text/plain",
                    route + ": the downstream answered " + response.statusCode(), null);
        } else {
            respond(exchange, 200, "application/octet-stream", response.body(), null);
        }
    }

    void recommendations(HttpExchange exchange, boolean parallel) {
        String route = parallel ? "/recommendations" : "/recommendations-serial";
        List<CompletableFuture<HttpResponse<byte[]>>> calls = new ArrayList<>();
        if (parallel) {
            for (String id : products) {
                calls.add(asyncGet("/product/" + id));
            }
        } else {
            // Each call starts when the previous one has answered, still without blocking a thread.
            CompletableFuture<HttpResponse<byte[]>> previous = CompletableFuture.completedFuture(null);
            for (String id : products) {
                CompletableFuture<HttpResponse<byte[]>> next = previous.thenCompose(ignored -> asyncGet("/product/" + id));
                calls.add(next);
                previous = next;
            }
        }
        CompletableFuture.allOf(calls.toArray(new CompletableFuture[0])).whenComplete((ignored, error) -> {
            if (error != null) {
                respond(exchange, 502, "text/plain", route + ": the downstream call failed: " + oneLine(error), null);
                return;
            }
            StringBuilder json = new StringBuilder("{\"recommendations\":[");
            for (int i = 0; i < calls.size(); i++) {
                HttpResponse<byte[]> response = calls.get(i).join();
                if (response.statusCode() < 200 || response.statusCode() > 299) {
                    respond(exchange, 502, "text/plain", route + ": the downstream answered "
                            + response.statusCode() + " for /product/" + products.get(i), null);
                    return;
                }
                String body = new String(response.body(), StandardCharsets.UTF_8).trim();
                json.append(i == 0 ? "" : ",");
                json.append(body.startsWith("{") || body.startsWith("[") ? body : quote(body));
            }
            respond(exchange, 200, "application/json", json.append("]}").toString(), null);
        });
    }

    /** Spins until this thread has used `ms` of CPU time (not wall time). */
    static long burnCpu(long ms) {
        ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        long start = threads.getCurrentThreadCpuTime();
        long budget = ms * 1_000_000L;
        long state = 0x9E3779B97F4A7C15L;
        while (true) {
            for (int i = 0; i < 20_000; i++) {
                state ^= state << 13;
                state ^= state >>> 7;
                state ^= state << 17;
            }
            long now = threads.getCurrentThreadCpuTime();
            if (now < 0 || now - start >= budget) {
                return state;
            }
        }
    }

    /** A new connection for each request, answered and then left open. */
    void leakyCall(HttpExchange exchange) {
        SocketChannel channel = null;
        try {
            channel = SocketChannel.open();
            channel.socket().connect(new InetSocketAddress(downstreamHost, downstreamPort),
                    (int) DOWNSTREAM_TIMEOUT.toMillis());
            channel.socket().setSoTimeout((int) DOWNSTREAM_TIMEOUT.toMillis());
            String prefix = URI.create(downstream).getRawPath();
            String request = "GET " + (prefix == null ? "" : prefix) + "/leaky HTTP/1.1\r\nHost: "
                    + downstreamHost + ":" + downstreamPort + "\r\nConnection: keep-alive\r\n\r\n";
            OutputStream out = channel.socket().getOutputStream();
            out.write(request.getBytes(StandardCharsets.US_ASCII));
            out.flush();
            int status = readResponse(new java.io.BufferedInputStream(channel.socket().getInputStream()));
            keep(channel);
            if (status < 200 || status > 299) {
                respond(exchange, 502, "text/plain", "/leaky: the downstream answered " + status, null);
            } else {
                respond(exchange, 200, "text/plain", "ok", null);
            }
        } catch (IOException | RuntimeException e) {
            closeQuietly(channel);
            respond(exchange, 502, "text/plain", "/leaky: the downstream call failed: " + oneLine(e), null);
        }
    }

    /** Reads a status line, headers and a Content-Length or chunked body; returns the status. */
    static int readResponse(InputStream in) throws IOException {
        String statusLine = readLine(in);
        String[] parts = statusLine.split(" ");
        if (parts.length < 2 || !parts[0].startsWith("HTTP/1.")) {
            throw new IOException("not an HTTP/1.x status line: " + statusLine);
        }
        int status = Integer.parseInt(parts[1]);
        long length = -1;
        boolean chunked = false;
        for (String line = readLine(in); !line.isEmpty(); line = readLine(in)) {
            String lower = line.toLowerCase(Locale.ROOT);
            if (lower.startsWith("content-length:")) {
                length = Long.parseLong(lower.substring(15).trim());
            } else if (lower.startsWith("transfer-encoding:") && lower.contains("chunked")) {
                chunked = true;
            }
        }
        if (chunked) {
            for (long size = Long.parseLong(readLine(in).split(";")[0].trim(), 16); size > 0;
                    size = Long.parseLong(readLine(in).split(";")[0].trim(), 16)) {
                skip(in, size);
                readLine(in);
            }
            while (!readLine(in).isEmpty()) { }
        } else if (length > 0) {
            skip(in, length);
        }
        return status;
    }

    static String readLine(InputStream in) throws IOException {
        ByteArrayOutputStream line = new ByteArrayOutputStream();
        for (int b = in.read(); b != '\n'; b = in.read()) {
            if (b < 0) {
                throw new IOException("the downstream closed the connection before answering");
            }
            if (b != '\r') {
                line.write(b);
            }
        }
        return line.toString(StandardCharsets.ISO_8859_1);
    }

    static void skip(InputStream in, long count) throws IOException {
        for (long left = count; left > 0; left--) {
            if (in.read() < 0) {
                throw new IOException("the downstream closed the connection mid-body");
            }
        }
    }

    /** Holds an answered connection open; drops the ones the downstream has closed meanwhile. */
    void keep(SocketChannel channel) throws IOException {
        channel.configureBlocking(false);
        synchronized (leaked) {
            ByteBuffer probe = ByteBuffer.allocate(256);
            for (Iterator<SocketChannel> held = leaked.iterator(); held.hasNext(); ) {
                SocketChannel open = held.next();
                try {
                    probe.clear();
                    if (open.read(probe) < 0) {
                        held.remove();
                        closeQuietly(open);
                    }
                } catch (IOException e) {
                    held.remove();
                    closeQuietly(open);
                }
            }
            while (leaked.size() >= MAX_LEAKED) {
                closeQuietly(leaked.pollFirst());
            }
            leaked.addLast(channel);
        }
    }

    static void closeQuietly(SocketChannel channel) {
        if (channel != null) {
            try {
                channel.close();
            } catch (IOException ignored) {
                // already closed
            }
        }
    }

    static void respond(HttpExchange exchange, int status, String type, String body, String worker) {
        respond(exchange, status, type, (body + (type.startsWith("text/") ? "\n" : ""))
                .getBytes(StandardCharsets.UTF_8), worker);
    }

    static void respond(HttpExchange exchange, int status, String type, byte[] body, String worker) {
        try (exchange) {
            exchange.getResponseHeaders().set("Content-Type", type);
            if (worker != null) {
                exchange.getResponseHeaders().set("X-Chokepoint-Worker", worker);
            }
            exchange.sendResponseHeaders(status, body.length == 0 ? -1 : body.length);
            if (body.length > 0) {
                exchange.getResponseBody().write(body);
            }
        } catch (IOException | RuntimeException e) {
            // The client went away; nothing to answer.
        }
    }

    static String oneLine(Throwable error) {
        Throwable cause = error;
        while (cause.getCause() != null && cause.getMessage() == null) {
            cause = cause.getCause();
        }
        String message = cause.getMessage() == null ? cause.getClass().getSimpleName() : cause.getMessage();
        return message.replace('\n', ' ').replace('\r', ' ');
    }

    static String quote(String text) {
        StringBuilder out = new StringBuilder("\"");
        for (char c : text.toCharArray()) {
            switch (c) {
                case '"' -> out.append("\\\"");
                case '\\' -> out.append("\\\\");
                default -> {
                    if (c < 0x20) {
                        out.append(String.format("\\u%04x", (int) c));
                    } else {
                        out.append(c);
                    }
                }
            }
        }
        return out.append('"').toString();
    }

    String routesJson() {
        StringBuilder ids = new StringBuilder("[");
        for (int i = 0; i < products.size(); i++) {
            ids.append(i == 0 ? "" : ",").append(quote("/product/" + products.get(i)));
        }
        String productPaths = ids.append("]").toString();
        return "{\"service\":\"BlockingDemo (JVM)\",\"downstream\":" + quote(downstream) + ",\"routes\":["
                + route("/actors", "actor-pool", actors, "blocking-pool", quote("/actors"), "000") + ","
                + route("/global", "cpu-pool", cpuPool, "blocking-pool", quote("/global"), "000, 002") + ","
                + route("/blocking", "elastic-pool", clientPool, "blocking-pool", quote("/blocking"), "000") + ","
                + route("/dispatcher", "blocking-dispatcher", dispatcher, "blocking-pool", quote("/dispatcher"), "002") + ","
                + route("/async", null, -1, "no-limit-found", quote("/async"), "004") + ","
                + route("/recommendations", null, -1, "no-limit-found", productPaths, "004") + ","
                + route("/recommendations-serial", null, -1, "no-limit-found", productPaths, "004") + ","
                + route("/cpu", "cpu-work", -1, "cpu-bound", "null", "003").replace("}", ",\"cpu_ms\":" + cpuMs + "}") + ","
                + route("/leaky", "leaky-client", -1, "connection-limit", quote("/leaky"), "001")
                + "]}";
    }

    static String route(String path, String pool, int limit, String kind, String downstreamPath, String seed) {
        return "{\"path\":" + quote(path) + ",\"pool\":" + (pool == null ? "null" : quote(pool))
                + ",\"limit\":" + (limit < 0 ? "null" : Integer.toString(limit))
                + ",\"expected_kind\":" + quote(kind) + ",\"downstream_path\":" + downstreamPath
                + ",\"seed\":" + quote(seed) + "}";
    }

    /** Command-line flags; bad input is an IllegalArgumentException with a one-line message. */
    static final class Settings {
        int port = 8081;
        String downstream = "http://127.0.0.1:9090";
        int actors = 20;
        int cpuPool = Runtime.getRuntime().availableProcessors();
        int clientPool = 25;
        int dispatcher = 16;
        long cpuMs = 10;
        List<String> products = List.of("PROD-001", "PROD-002", "PROD-003", "PROD-004");

        static Settings parse(String[] args) {
            Settings s = new Settings();
            for (int i = 0; i < args.length; i++) {
                String flag = args[i];
                if (flag.equals("--help") || flag.equals("-h")) {
                    System.out.println("usage: java BlockingDemo.java [--port 8081] [--downstream URL]"
                            + " [--actors 20] [--cpu-pool N] [--client-pool 25] [--dispatcher 16]"
                            + " [--cpu-ms 10] [--products ID,ID,...]");
                    System.exit(0);
                }
                Supplier<String> value = valueOf(args, i, flag);
                switch (flag) {
                    case "--port" -> s.port = number(flag, value.get(), 0, 65535);
                    case "--downstream" -> s.downstream = value.get();
                    case "--actors" -> s.actors = number(flag, value.get(), 1, 10000);
                    case "--cpu-pool" -> s.cpuPool = number(flag, value.get(), 1, 10000);
                    case "--client-pool" -> s.clientPool = number(flag, value.get(), 1, 10000);
                    case "--dispatcher" -> s.dispatcher = number(flag, value.get(), 1, 10000);
                    case "--cpu-ms" -> s.cpuMs = number(flag, value.get(), 1, 60000);
                    case "--products" -> {
                        s.products = List.of(value.get().split(","));
                        for (String id : s.products) {
                            if (!id.matches("[A-Za-z0-9._~-]+")) {
                                throw new IllegalArgumentException("--products: '" + id
                                        + "' is not usable in a URL: use letters, digits, '-', '_', '.'");
                            }
                        }
                    }
                    default -> throw new IllegalArgumentException("unknown flag '" + flag + "' (see --help)");
                }
                i++;
            }
            return s;
        }

        static Supplier<String> valueOf(String[] args, int i, String flag) {
            return () -> {
                if (i + 1 >= args.length) {
                    throw new IllegalArgumentException(flag + " needs a value");
                }
                return args[i + 1];
            };
        }

        static int number(String flag, String text, int min, int max) {
            try {
                int n = Integer.parseInt(text.trim());
                if (n < min || n > max) {
                    throw new IllegalArgumentException(flag + " " + text + " is out of range: give "
                            + min + " to " + max);
                }
                return n;
            } catch (NumberFormatException e) {
                throw new IllegalArgumentException(flag + " '" + text + "' is not a whole number");
            }
        }
    }
}
