/*
 * java-netty: a plain Netty 4.1 HTTP server (ServerBootstrap, NioEventLoopGroup at its defaults,
 * HttpServerCodec) whose handler makes a blocking HttpURLConnection GET of the downstream in
 * channelRead, on the event loop, as a handler written without an executor group does. Built
 * after the catalogue's Netty entry, to test it (issue 22).
 *
 * new NioEventLoopGroup() makes 2 × cores event loops (MultithreadEventLoopGroup's
 * DEFAULT_EVENT_LOOP_THREADS, unless -Dio.netty.eventLoopThreads), named
 * nioEventLoopGroup-<group>-<n>; each accepted connection is bound to one loop, in turn. A loop
 * blocked in a call serves none of its other connections: the hidden limit is the loops, 4 on
 * 2 cores.
 *
 * Usage: java -cp 'JARS/*' NettyServer.java --port 0 --downstream URL
 *   JARS: java-reactor-netty's (netty 4.1.131 among them; scripts/install-test-deps.sh copies
 *   them into ~/.cache/chokepoint-bench/reactor-netty).
 * The first stdout line is "listening on 127.0.0.1:PORT".
 */
import io.netty.bootstrap.ServerBootstrap;
import io.netty.buffer.Unpooled;
import io.netty.channel.Channel;
import io.netty.channel.ChannelHandlerContext;
import io.netty.channel.ChannelInitializer;
import io.netty.channel.EventLoopGroup;
import io.netty.channel.SimpleChannelInboundHandler;
import io.netty.channel.nio.NioEventLoopGroup;
import io.netty.channel.socket.SocketChannel;
import io.netty.channel.socket.nio.NioServerSocketChannel;
import io.netty.handler.codec.http.DefaultFullHttpResponse;
import io.netty.handler.codec.http.FullHttpRequest;
import io.netty.handler.codec.http.FullHttpResponse;
import io.netty.handler.codec.http.HttpHeaderNames;
import io.netty.handler.codec.http.HttpObjectAggregator;
import io.netty.handler.codec.http.HttpResponseStatus;
import io.netty.handler.codec.http.HttpServerCodec;
import io.netty.handler.codec.http.HttpUtil;
import io.netty.handler.codec.http.HttpVersion;
import java.io.IOException;
import java.io.InputStream;
import java.net.HttpURLConnection;
import java.net.InetSocketAddress;
import java.net.URI;
import java.nio.charset.StandardCharsets;

public class NettyServer {
    public static void main(String[] args) throws InterruptedException {
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
        EventLoopGroup boss = new NioEventLoopGroup(1);
        EventLoopGroup workers = new NioEventLoopGroup();
        Channel channel;
        try {
            channel = new ServerBootstrap()
                    .group(boss, workers)
                    .channel(NioServerSocketChannel.class)
                    .childHandler(new ChannelInitializer<SocketChannel>() {
                        @Override
                        protected void initChannel(SocketChannel ch) {
                            ch.pipeline()
                                    .addLast(new HttpServerCodec())
                                    .addLast(new HttpObjectAggregator(65536))
                                    .addLast(new Call(target));
                        }
                    })
                    .bind("127.0.0.1", port)
                    .sync()
                    .channel();
        } catch (Exception e) {
            usage("cannot listen on 127.0.0.1:" + port + ": " + e.getMessage());
            return;
        }
        int bound = ((InetSocketAddress) channel.localAddress()).getPort();
        System.out.println("listening on 127.0.0.1:" + bound);
        System.out.flush();
        channel.closeFuture().sync();
    }

    /** Each request: the blocking call, on the loop that read it, then the answer. */
    static final class Call extends SimpleChannelInboundHandler<FullHttpRequest> {
        private final String target;

        Call(String target) {
            this.target = target;
        }

        @Override
        protected void channelRead0(ChannelHandlerContext ctx, FullHttpRequest request) {
            HttpResponseStatus status = HttpResponseStatus.OK;
            String body;
            try {
                body = blockingGet(target);
            } catch (IOException e) {
                status = HttpResponseStatus.BAD_GATEWAY;
                body = "downstream failed: " + e;
            }
            FullHttpResponse response = new DefaultFullHttpResponse(HttpVersion.HTTP_1_1, status,
                    Unpooled.copiedBuffer(body, StandardCharsets.UTF_8));
            response.headers().set(HttpHeaderNames.CONTENT_TYPE, "text/plain");
            HttpUtil.setContentLength(response, response.content().readableBytes());
            HttpUtil.setKeepAlive(response, HttpUtil.isKeepAlive(request));
            ctx.writeAndFlush(response);
        }
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
        System.err.println("NettyServer: " + what + " (usage: --port N --downstream URL)");
        System.exit(2);
    }
}
