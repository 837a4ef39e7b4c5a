/*
 * java-micronaut: a Micronaut 4 application at its defaults (Netty HTTP server) whose controller
 * makes a blocking HttpURLConnection GET of the downstream, moved off the event loop as
 * Micronaut's guide says to move blocking work: @ExecuteOn(TaskExecutors.BLOCKING). Seed 004's
 * framework. Built after the catalogue's Micronaut io-executor entry, to test it (issue 22).
 *
 * On Java 17 there are no virtual threads, so TaskExecutors.BLOCKING is the io executor
 * (IOExecutorServiceConfig.blocking), a cached pool (Executors.newCachedThreadPool) whose threads
 * are named io-executor-thread-N: it starts a thread whenever none is idle and never queues. The
 * hidden limit is none of its own: the calls in flight follow the clients until something else
 * stops them (the CPU, memory). --work-us N burns N microseconds of the thread's CPU after each
 * call (0 by default), as a service does with what it fetched. By hand (session 26, 100 ms
 * mock, `chokepoint load` after a 3 s warm-up, --work-us 0): 256 clients, the mock's mean 246 in
 * flight and 258 io-executor threads; 1024 clients, mean 560 (5,600 req/s of an ideal 10,240:
 * the 2 cores stopped it) and 998 threads.
 *
 * GET /loop makes the same call without @ExecuteOn. Micronaut 4 runs such a controller on the
 * Netty event loop that read the request (thread-selection MANUAL), and sizes its loops at one
 * per core (thread-core-ratio 1.0, 4.10): the hidden limit is then the cores, each loop holding
 * its connections while it waits. By hand (100 ms mock): the mock's 2 in flight (mean 1.95) at
 * 8, 16 and 32 clients on 2 cores, the two default-eventLoopGroup-2-N threads in a socket read.
 *
 * Compiled, not run from source: Micronaut's beans are written by its annotation processor, which
 * the single-file launcher does not run.
 *   javac -cp 'JARS/*' -processorpath JAR:JAR:... (every jar) -d CLASSES MicronautServer.java
 *   java -cp 'CLASSES:JARS/*' chokepoint.targets.MicronautServer --port 0 --downstream URL [--work-us N]
 *   JARS: micronaut-http-server-netty and micronaut-inject-java under micronaut-parent 4.10.8,
 *   with their dependencies (Maven Central; scripts/install-test-deps.sh copies them into
 *   ~/.cache/chokepoint-bench/micronaut with this folder's pom.xml).
 * The first stdout line is "listening on 127.0.0.1:PORT". Micronaut's beans cannot be in the
 * default package, hence this one.
 */
package chokepoint.targets;

import io.micronaut.context.ApplicationContext;
import io.micronaut.context.annotation.Value;
import io.micronaut.http.MediaType;
import io.micronaut.http.annotation.Controller;
import io.micronaut.http.annotation.Get;
import io.micronaut.runtime.server.EmbeddedServer;
import io.micronaut.scheduling.TaskExecutors;
import io.micronaut.scheduling.annotation.ExecuteOn;

import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.util.Map;

@Controller("/")
public class MicronautServer {
    private static final java.lang.management.ThreadMXBean CPU =
            java.lang.management.ManagementFactory.getThreadMXBean();
    static volatile long sink;

    private final URI downstream;
    private final long workUs;

    public MicronautServer(@Value("${chokepoint.downstream}") String downstream,
                           @Value("${chokepoint.work-us}") long workUs) {
        this.downstream = URI.create(downstream);
        this.workUs = workUs;
    }

    /** Burns `us` microseconds of this thread's CPU time (its own clock, not the wall's). */
    static void work(long us) {
        long until = CPU.getCurrentThreadCpuTime() + us * 1000;
        long x = 88172645463325252L;
        while (CPU.getCurrentThreadCpuTime() < until) {
            for (int i = 0; i < 10_000; i++) {
                x = x * 6364136223846793005L + 1442695040888963407L;
            }
        }
        sink += x;
    }

    @Get(produces = MediaType.TEXT_PLAIN)
    @ExecuteOn(TaskExecutors.BLOCKING)
    public String call() throws IOException {
        return callDownstream();
    }

    /** The same call without @ExecuteOn: Micronaut 4 runs it on the Netty event loop. */
    @Get(uri = "/loop", produces = MediaType.TEXT_PLAIN)
    public String callOnTheLoop() throws IOException {
        return callDownstream();
    }

    private String callDownstream() throws IOException {
        HttpURLConnection connection = (HttpURLConnection) downstream.toURL().openConnection();
        try (InputStream body = connection.getInputStream()) {
            body.readAllBytes();
        }
        work(workUs);
        return "ok\n";
    }

    public static void main(String[] args) {
        int port = 0;
        long workUs = 0;
        String downstream = null;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = (int) numberOf("--port", args[i + 1], 65535); break;
                case "--downstream": downstream = args[i + 1]; break;
                case "--work-us": workUs = numberOf("--work-us", args[i + 1], 10_000_000); break;
                default: usage("unknown argument " + args[i]);
            }
        }
        if (downstream == null) {
            usage("--downstream URL is needed");
        }
        if (!isHttpUrl(downstream)) {
            usage("--downstream must be an http:// or https:// URL, not " + downstream);
        }
        // Port 0 is Micronaut's -1: a free port chosen at start.
        EmbeddedServer server = null;
        try {
            server = ApplicationContext.run(EmbeddedServer.class, Map.of(
                    "micronaut.server.port", port == 0 ? -1 : port,
                    "micronaut.server.host", "127.0.0.1",
                    "chokepoint.downstream", downstream,
                    "chokepoint.work-us", workUs));
        } catch (RuntimeException e) {
            Throwable cause = e;
            while (cause.getCause() != null) {
                cause = cause.getCause();
            }
            usage("cannot listen on 127.0.0.1:" + port + ": " + cause.getMessage());
        }
        System.out.println("listening on 127.0.0.1:" + server.getPort());
        System.out.flush();
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

    /** `value` of `flag` as a whole number from 0 to `most`, or the usage and exit 2. */
    static long numberOf(String flag, String value, long most) {
        try {
            long number = Long.parseLong(value);
            if (number >= 0 && number <= most) {
                return number;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage(flag + " " + value + " is not a whole number from 0 to " + most);
        return 0;
    }

    static void usage(String what) {
        System.err.println("MicronautServer: " + what
                + " (usage: --port N --downstream URL [--work-us N])");
        System.exit(2);
    }
}
