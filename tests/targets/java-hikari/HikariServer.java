// java-hikari: a target of the tuning set, built AFTER the connection-pool place rule to test it
// against a database downstream.
//
// The JDK's HttpServer on a fixed pool of 30 handler threads ("handler-N"), each request taking
// one JDBC connection from HikariCP at its defaults (maximumPoolSize 10) and running
// `SELECT pg_sleep(d)` on PostgreSQL. Past 10 requests in flight the other handlers park inside
// HikariPool.getConnection, waiting for a connection; the handler pool (30) is not the knob.
// The hidden limit is 10 queries in flight: about 10 / d requests a second (100 at d = 0.1 s).
//
// Usage: java -cp 'JARS/*' HikariServer.java --port 0 --jdbc jdbc:postgresql://127.0.0.1:P/postgres?user=postgres [--sleep 0.1]
// The first stdout line is "listening on 127.0.0.1:PORT".
import com.sun.net.httpserver.HttpServer;
import com.zaxxer.hikari.HikariConfig;
import com.zaxxer.hikari.HikariDataSource;
import java.net.InetSocketAddress;
import java.nio.charset.StandardCharsets;
import java.sql.Connection;
import java.sql.PreparedStatement;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.atomic.AtomicInteger;

public class HikariServer {
    public static void main(String[] args) throws Exception {
        int port = 0;
        String jdbc = null;
        double sleep = 0.1;
        for (int i = 0; i + 1 < args.length; i += 2) {
            switch (args[i]) {
                case "--port" -> port = Integer.parseInt(args[i + 1]);
                case "--jdbc" -> jdbc = args[i + 1];
                case "--sleep" -> sleep = Double.parseDouble(args[i + 1]);
                default -> throw new IllegalArgumentException("unknown flag " + args[i]);
            }
        }
        if (jdbc == null) {
            throw new IllegalArgumentException("--jdbc URL is needed");
        }
        HikariConfig config = new HikariConfig(); // the defaults: maximumPoolSize 10
        config.setJdbcUrl(jdbc);
        HikariDataSource pool = new HikariDataSource(config);
        double seconds = sleep;

        AtomicInteger serial = new AtomicInteger();
        ExecutorService handlers = Executors.newFixedThreadPool(30, task -> {
            Thread thread = new Thread(task, "handler-" + serial.incrementAndGet());
            thread.setDaemon(true);
            return thread;
        });
        HttpServer server = HttpServer.create(new InetSocketAddress("127.0.0.1", port), 1024);
        server.setExecutor(handlers);
        server.createContext("/", exchange -> {
            int status = 200;
            String body = "slept\n";
            try (Connection connection = pool.getConnection();
                 PreparedStatement statement = connection.prepareStatement("SELECT pg_sleep(?)")) {
                statement.setDouble(1, seconds);
                statement.execute();
            } catch (Exception e) {
                status = 502;
                body = "database: " + e + "\n";
            }
            byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
            exchange.sendResponseHeaders(status, bytes.length);
            exchange.getResponseBody().write(bytes);
            exchange.close();
        });
        server.start();
        System.out.println("listening on 127.0.0.1:" + server.getAddress().getPort());
        System.out.flush();
    }
}
