package io.bulkhead.jetty;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import java.util.Objects;
import java.util.concurrent.Executor;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A Jetty 12 handler that sends each request through the compartment its {@link RouteTable} names
 * for the path in context, and answers a full compartment with a fast {@code 503}.
 *
 * <pre>{@code
 * RouteTable routes = RouteTable.builder()
 *     .route("/reports/**", reports)  // at most reports' limit in flight
 *     .route("/**", server)           // every other request shares the server's limit
 *     .bypass("/health")              // never queued: a saturated server still answers its probe
 *     .build();
 * BulkheadHandler bulkheads = BulkheadHandler.of(routes);  // bulkheads.setHandler(application)
 * server.setHandler(bulkheads);
 * }</pre>
 *
 * <p><b>Waiting holds no thread.</b> A request whose compartment is full waits in its queue (see
 * {@link Bulkhead#submit}) and, once a slot is handed to it, runs on the context's executor. The
 * slot is held until the wrapped handler completes the request's {@link Callback}, however long
 * after {@code handle} returns. A refused request (queue full, or {@code maxWait} passed) never
 * reaches the wrapped handler: the client gets the {@link Rejection} ({@code 503}, {@code
 * Retry-After}, and the {@link RejectionBody}, plain text by default).
 *
 * <p><b>A client that leaves frees its place.</b> A waiting request whose client closes its
 * connection or resets its HTTP/2 stream, or which Jetty fails, leaves the queue at once; for
 * HTTP/1.x, which Jetty does not read while a handler holds a request, the handler watches waiting
 * sockets on a thread of its own. When the client of an admitted request without a body leaves, the
 * connection is closed and the request's {@linkplain Request#addFailureListener failure listeners}
 * are called: a handler waiting on something slow should cancel it there.
 *
 * <p>Thread-safe. A compartment bounds requests, not connections: cap those on the connector.
 */
public final class BulkheadHandler extends Handler.Wrapper {

  private final RouteTable routes;
  private final RejectionBody rejectionBody;
  private volatile DisconnectWatcher watcher;

  private BulkheadHandler(RouteTable routes, RejectionBody rejectionBody) {
    this.routes = Objects.requireNonNull(routes, "routes");
    this.rejectionBody = Objects.requireNonNull(rejectionBody, "rejectionBody");
  }

  /** A handler with these routes and the plain-text {@code 503}, wrapping no handler yet. */
  public static BulkheadHandler of(RouteTable routes) {
    return of(routes, RejectionBody.plainText());
  }

  /** A handler with these routes whose {@code 503} says {@code rejectionBody}. */
  public static BulkheadHandler of(RouteTable routes, RejectionBody rejectionBody) {
    return new BulkheadHandler(routes, rejectionBody);
  }

  /** The routes requests take. */
  public RouteTable routes() {
    return routes;
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    Handler next = getHandler();
    if (next != null
        && routes.route(Request.getPathInContext(request)) instanceof Route.Through through) {
      new ProtectedExchange(
              through.bulkhead(), next, request, response, callback, watcher, rejectionBody)
          .begin();
      return true;
    }
    return super.handle(request, response, callback);
  }

  @Override
  protected void doStart() throws Exception {
    // The watcher's thread starts only when a request first has to wait.
    Executor executor = getServer() != null ? getServer().getThreadPool() : Runnable::run;
    watcher = new DisconnectWatcher("bulkhead-jetty-disconnects", executor);
    super.doStart();
  }

  @Override
  protected void doStop() throws Exception {
    DisconnectWatcher w = watcher;
    watcher = null;
    if (w != null) {
      w.close();
    }
    super.doStop();
  }

  /** How many readable waiting sockets the disconnect watcher has judged; for tests. */
  long watcherVerdicts() {
    DisconnectWatcher w = watcher;
    return w == null ? 0 : w.verdicts();
  }

  /** Whether the disconnect watcher's thread is running; for tests. */
  boolean isWatching() {
    DisconnectWatcher w = watcher;
    return w != null && w.isRunning();
  }

  @Override
  public String toString() {
    return "BulkheadHandler" + routes;
  }
}
