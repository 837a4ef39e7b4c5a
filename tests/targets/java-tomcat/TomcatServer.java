/*
 * java-tomcat: embedded Apache Tomcat 11 (one NIO HTTP/1.1 connector, everything at its
 * defaults: maxThreads 200, acceptCount 100, maxKeepAliveRequests 100) whose one servlet makes a
 * blocking HttpURLConnection GET of the downstream. With --max-connections N the connector's
 * maxConnections is N (default 8192): past N connections its acceptor thread parks in
 * LimitLatch.countUpOrAwait and new connections wait in the kernel's listen queue.
 *
 * Built in session 21 to see what chokepoint says of a connection cap that re-queues its
 * clients (Tomcat closes a kept-alive connection after 100 requests, so the clients past N get
 * in by turns). It named the exec pool and maxThreads (default 200), a wrong knob; the rule that
 * reads the accept path in front of a pool with idle threads (crates/diagnose/src/place/mod.rs,
 * accept_path_in_front) was written after that, on this target: tuned here, not held out.
 *
 * Usage: java -cp 'JARS/*' TomcatServer.java --port 0 --downstream URL [--max-connections N]
 *   JARS: tomcat-embed-core 11.0.27 and tomcat-annotations-api (Maven Central;
 *   scripts/install-test-deps.sh copies them into ~/.cache/chokepoint-bench/tomcat).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import jakarta.servlet.http.HttpServlet;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import org.apache.catalina.Context;
import org.apache.catalina.connector.Connector;
import org.apache.catalina.startup.Tomcat;

public class TomcatServer {
    public static void main(String[] args) throws Exception {
        int port = 0;
        String downstream = null;
        int maxConnections = 0;
        for (int i = 0; i < args.length; i += 2) {
            if (i + 1 >= args.length) {
                usage("a value is missing after " + args[i]);
            }
            switch (args[i]) {
                case "--port": port = number(args[i], args[i + 1], 0); break;
                case "--downstream": downstream = args[i + 1]; break;
                case "--max-connections": maxConnections = number(args[i], args[i + 1], 1); break;
                default: usage("unknown argument " + args[i]);
            }
        }
        if (downstream == null || !downstream.startsWith("http")) {
            usage("--downstream http://HOST:PORT/ is needed");
        }
        String target = downstream;
        Tomcat tomcat = new Tomcat();
        tomcat.setBaseDir(Files.createTempDirectory("java-tomcat").toString());
        Connector connector = new Connector("HTTP/1.1");
        connector.setPort(port);
        connector.setProperty("address", "127.0.0.1");
        if (maxConnections > 0) {
            connector.setProperty("maxConnections", Integer.toString(maxConnections));
        }
        tomcat.setConnector(connector);
        Context context = tomcat.addContext("", null);
        Tomcat.addServlet(context, "call", new HttpServlet() {
            @Override
            protected void doGet(HttpServletRequest request, HttpServletResponse response)
                    throws IOException {
                String body;
                try {
                    body = blockingGet(target);
                } catch (IOException e) {
                    response.setStatus(502);
                    body = "downstream failed: " + e;
                }
                response.setContentType("text/plain");
                response.getOutputStream().write(body.getBytes(StandardCharsets.UTF_8));
            }
        });
        context.addServletMappingDecoded("/*", "call");
        tomcat.start();
        System.out.println("listening on 127.0.0.1:" + connector.getLocalPort());
        System.out.flush();
        tomcat.getServer().await();
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

    static int number(String flag, String value, int least) {
        try {
            int n = Integer.parseInt(value);
            if (n >= least && n <= 65535) {
                return n;
            }
        } catch (NumberFormatException e) {
            // Said below.
        }
        usage(flag + " " + value + " is not a number from " + least);
        return 0;
    }

    static void usage(String what) {
        System.err.println("TomcatServer: " + what
                + " (usage: --port N --downstream URL [--max-connections N])");
        System.exit(2);
    }
}
