/*
 * java-spring-async: a Spring Boot 3.5 application at its defaults whose requests make a blocking
 * HttpURLConnection GET of the downstream on the task executor Boot auto-configures, the one
 * @Async methods run on (the bean applicationTaskExecutor, injected as an AsyncTaskExecutor and
 * given the call: CompletableFuture.supplyAsync(call, executor)). The HTTP side is the JDK's
 * HttpServer on a cached pool, whose threads wait for the futures. Built after the catalogue's
 * Spring Boot applicationTaskExecutor entry, to test it (issue 22).
 *
 * The executor (TaskExecutionAutoConfiguration): a ThreadPoolTaskExecutor of
 * spring.task.execution.pool.core-size = 8 threads named task-N, its queue unbounded, so it never
 * grows past 8. The hidden limit: 8 calls at once, the rest queued.
 *
 * Not an @Async proxy: Spring Boot proxies with a CGLIB subclass, which the single-file launcher's
 * in-memory classes cannot take (ClassNotFoundException for the generated class); the executor is
 * the same bean either way.
 *
 * Usage: java -cp 'JARS/*' SpringAsyncServer.java --port 0 --downstream URL
 *   JARS: spring-boot-starter 3.5.7 and its dependencies (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/spring-async with
 *   this folder's pom.xml).
 * The first stdout line is "listening on 127.0.0.1:PORT" (Spring's banner and its logs below
 * ERROR are off).
 */
import com.sun.net.httpserver.HttpServer;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.Executors;
import org.springframework.boot.SpringApplication;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;
import org.springframework.core.task.AsyncTaskExecutor;

public class SpringAsyncServer {
    /** The application: auto-configuration alone (the task executor among it). */
    @Configuration(proxyBeanMethods = false)
    @EnableAutoConfiguration
    public static class App {}

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
        String target = downstream;
        SpringApplication application = new SpringApplication(App.class);
        application.setWebApplicationType(WebApplicationType.NONE);
        application.setDefaultProperties(Map.of(
                "spring.main.banner-mode", "off",
                "spring.main.log-startup-info", "false",
                "logging.level.root", "ERROR"));
        ConfigurableApplicationContext context = application.run();
        AsyncTaskExecutor calls = context.getBean("applicationTaskExecutor", AsyncTaskExecutor.class);
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
                body = CompletableFuture.supplyAsync(() -> blockingGet(target), calls).join().getBytes(StandardCharsets.UTF_8);
            } catch (CompletionException | IllegalStateException e) {
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
        System.err.println("SpringAsyncServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }
}
