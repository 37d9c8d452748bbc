package io.bulkhead.scenarios;

import java.net.URI;
import java.time.Duration;
import org.eclipse.jetty.http.pathmap.ServletPathSpec;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.handler.PathMappingsHandler;

/**
 * A loopback server with nothing but an {@link Observability}'s routes ({@code /dashboard},
 * {@code /bulkheads}, {@code /metrics}), for an experiment that has no app of its own to serve them
 * ({@code demo db --dashboard}). Closing stops it; the observability is the caller's to close.
 */
final class DashboardServer implements AutoCloseable {

  /** The page polls twice a second; a connection idle this long is a browser that went away. */
  private static final Duration IDLE_TIMEOUT = Duration.ofMinutes(1);

  private final Server server;
  private final int port;

  private DashboardServer(Server server, int port) {
    this.server = server;
    this.port = port;
  }

  /**
   * Serves {@code observability} on 127.0.0.1:{@code port} (0: any free port).
   *
   * @throws CliException if the port is in use (naming {@code --port})
   */
  static DashboardServer start(Observability observability, int port) {
    PathMappingsHandler paths = new PathMappingsHandler();
    observability.install((path, handler) -> paths.addMapping(new ServletPathSpec(path), handler));
    Server s = Servers.create("dashboard", port, IDLE_TIMEOUT);
    s.setHandler(paths);
    return new DashboardServer(s, Servers.start(s, "dashboard", "--port"));
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
