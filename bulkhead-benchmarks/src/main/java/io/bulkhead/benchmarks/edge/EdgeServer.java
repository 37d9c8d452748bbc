package io.bulkhead.benchmarks.edge;

import io.bulkhead.Bulkhead;
import io.bulkhead.config.Quantities;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.jetty.BulkheadHandler;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.server.handler.QoSHandler;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.QueuedThreadPool;

/**
 * The server of the HTTP-edge benchmark (bulkhead-benchmarks/scripts/edge): one Jetty 12 server
 * with one trivial handler ({@code 200 ok}, at once on {@code /}, after {@code --work} on {@code
 * /slow}), behind nothing ({@code plain}), behind Jetty's own {@link QoSHandler} ({@code qos}) or
 * behind our {@link BulkheadHandler} ({@code bulkhead}), the two guards with the same limit, the
 * same queue and the same longest wait. Everything else (thread pool, connector, handler) is the
 * same in the three, so a difference in what a load tool measures is the guard's.
 *
 * <pre>
 * java -cp benchmarks.jar io.bulkhead.benchmarks.edge.EdgeServer plain|qos|bulkhead \
 *     --limit 64 --queue 0 --wait 1s --work 5ms --port-file FILE
 * </pre>
 *
 * <p>{@code /slow} answers after {@code --work} without holding a thread, like a handler waiting
 * for an asynchronous call: that is what lets ten times the limit in connections be ten times the
 * limit in requests being handled, which an answer in microseconds never is.
 *
 * <p>It listens on a free loopback port, writes the port to {@code --port-file} once it accepts,
 * and runs until it is killed.
 */
public final class EdgeServer {

  private EdgeServer() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      usage("name the variant: plain, qos or bulkhead");
    }
    String variant = args[0].toLowerCase(Locale.ROOT);
    int limit = 64;
    int queue = 64;
    Duration wait = Duration.ofSeconds(1);
    Duration work = Duration.ofMillis(5);
    Path portFile = null;
    for (int i = 1; i < args.length; i += 2) {
      if (i + 1 >= args.length) {
        usage(args[i] + " needs a value");
      }
      String value = args[i + 1];
      switch (args[i]) {
        case "--limit" -> limit = atLeast("--limit", value, 1);
        case "--queue" -> queue = atLeast("--queue", value, 0);
        case "--wait" -> wait = duration("--wait", value);
        case "--work" -> work = duration("--work", value);
        case "--port-file" -> portFile = Path.of(value);
        default -> usage("unknown option " + args[i]);
      }
    }
    if (portFile == null) {
      usage("--port-file is required");
    }
    Server server = server(variant, limit, queue, wait, work);
    server.start();
    int port = ((ServerConnector) server.getConnectors()[0]).getLocalPort();
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  try {
                    server.stop();
                  } catch (Exception ignored) {
                    // the process is ending either way
                  }
                },
                "edge-server-stop"));
    Files.writeString(portFile, Integer.toString(port), StandardCharsets.US_ASCII);
    server.join();
  }

  /** The server of {@code variant}, not started. */
  static Server server(String variant, int limit, int queue, Duration wait, Duration work) {
    // Jetty's defaults, named so that the three variants visibly share them.
    QueuedThreadPool threads = new QueuedThreadPool(200, 8);
    threads.setName("edge-" + variant);
    Server server = new Server(threads);
    HttpConfiguration http = new HttpConfiguration();
    http.setSendServerVersion(false);
    ServerConnector connector = new ServerConnector(server, 1, 1, new HttpConnectionFactory(http));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    // The overload run opens ten times the limit in connections at once.
    connector.setAcceptQueueSize(4096);
    server.addConnector(connector);
    server.setStopTimeout(0);
    Handler app = new Ok(work.toNanos());
    switch (variant) {
      case "plain" -> server.setHandler(app);
      case "qos" -> {
        QoSHandler qos = new QoSHandler(app);
        qos.setMaxRequestCount(limit);
        qos.setMaxSuspendedRequestCount(queue);
        qos.setMaxSuspend(wait);
        server.setHandler(qos);
      }
      case "bulkhead" -> {
        Bulkhead compartment =
            Bulkhead.builder("edge").limit(limit).maxQueue(queue).maxWait(wait).build();
        BulkheadHandler guard =
            BulkheadHandler.of(RouteTable.builder().route("/**", compartment).build());
        guard.setHandler(app);
        server.setHandler(guard);
      }
      default -> usage("variant '" + variant + "' is not plain, qos or bulkhead");
    }
    return server;
  }

  /**
   * The trivial application: {@code 200 ok}, at once, or on {@code /slow} after {@code workNanos}
   * on Jetty's scheduler. A blocking handler (Jetty's default), as most applications' are.
   */
  private static final class Ok extends Handler.Abstract {
    private final long workNanos;

    Ok(long workNanos) {
      this.workNanos = workNanos;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      if ("/slow".equals(Request.getPathInContext(request))) {
        request
            .getComponents()
            .getScheduler()
            .schedule(() -> answer(response, callback), workNanos, TimeUnit.NANOSECONDS);
      } else {
        answer(response, callback);
      }
      return true;
    }

    private static void answer(Response response, Callback callback) {
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
      Content.Sink.write(response, true, "ok\n", callback);
    }
  }

  private static Duration duration(String option, String value) {
    try {
      return Quantities.parseDuration(value);
    } catch (IllegalArgumentException e) {
      usage(option + ": " + e.getMessage());
      return Duration.ZERO;
    }
  }

  private static int atLeast(String option, String value, int least) {
    try {
      int n = Integer.parseInt(value);
      if (n >= least) {
        return n;
      }
    } catch (NumberFormatException ignored) {
      // reported below
    }
    usage(option + " must be a whole number of at least " + least + " but was '" + value + "'");
    return 0;
  }

  private static void usage(String problem) {
    System.err.println(
        "edge-server: "
            + problem
            + "; usage: EdgeServer plain|qos|bulkhead"
            + " [--limit N] [--queue N] [--wait DURATION] [--work DURATION] --port-file FILE");
    System.exit(2);
  }
}
