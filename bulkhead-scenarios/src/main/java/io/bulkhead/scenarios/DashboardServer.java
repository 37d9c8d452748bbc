package io.bulkhead.scenarios;

import java.net.URI;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.http.pathmap.ServletPathSpec;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.PathMappingsHandler;
import org.eclipse.jetty.util.Callback;

/**
 * A loopback server with nothing but an {@link Observability}'s routes ({@code /dashboard}, {@code
 * /bulkheads}, {@code /metrics}), for an experiment that has no app of its own to serve them
 * ({@code demo db --dashboard}). Closing stops it; the observability is the caller's to close.
 */
final class DashboardServer implements AutoCloseable {

  /** Every route answers at once: a request that waits this long without traffic is stuck. */
  private static final Duration HANDLING_IDLE_TIMEOUT = Duration.ofMinutes(1);

  private final Server server;
  private final int port;
  private final CountDownLatch asked;

  private DashboardServer(Server server, int port, CountDownLatch asked) {
    this.server = server;
    this.port = port;
    this.asked = asked;
  }

  /**
   * Serves {@code observability} on 127.0.0.1:{@code port} (0: any free port).
   *
   * @throws CliException if the port is in use (naming {@code --port})
   */
  static DashboardServer start(Observability observability, int port) {
    PathMappingsHandler paths = new PathMappingsHandler();
    List<String> admin = new ArrayList<>();
    observability.install(
        (path, handler) -> {
          paths.addMapping(new ServletPathSpec(path), handler);
          admin.add(path);
        });
    CountDownLatch asked = new CountDownLatch(1);
    Handler.Wrapper noticing =
        new Handler.Wrapper(paths) {
          @Override
          public boolean handle(Request request, Response response, Callback callback)
              throws Exception {
            if ("/bulkheads".equals(Request.getPathInContext(request))) {
              asked.countDown();
            }
            return super.handle(request, response, callback);
          }
        };
    Server s = Servers.create("dashboard", port, HANDLING_IDLE_TIMEOUT);
    EdgeGuard guard = new EdgeGuard(admin, Set.of());
    guard.setHandler(noticing);
    s.setHandler(guard);
    return new DashboardServer(s, Servers.start(s, "dashboard", "--port"), asked);
  }

  /**
   * Waits until something has asked {@code /bulkheads} (the page does as soon as it loads), at most
   * {@code limit}.
   *
   * @return whether it was asked in time
   */
  boolean awaitFirstLook(Duration limit) throws InterruptedException {
    return asked.await(limit.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** {@code http://127.0.0.1:port}. */
  URI uri() {
    return URI.create("http://127.0.0.1:" + port);
  }

  /** Waits until the server stops (another thread closes it) or this thread is interrupted. */
  void join() throws InterruptedException {
    server.join();
  }

  @Override
  public void close() {
    Servers.stopQuietly(server);
  }
}
