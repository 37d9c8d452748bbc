package io.bulkhead.jetty;

import io.bulkhead.Bulkhead;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.Executor;
import org.eclipse.jetty.http.pathmap.MatchedResource;
import org.eclipse.jetty.http.pathmap.PathMappings;
import org.eclipse.jetty.http.pathmap.PathSpec;
import org.eclipse.jetty.http.pathmap.ServletPathSpec;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * A Jetty 12 handler that sends each request through the compartment of its route, and answers a
 * full compartment with a fast {@code 503} instead of a slow hang.
 *
 * <pre>{@code
 * Bulkhead server = Bulkhead.builder("server").limit(50).unboundedQueue().unboundedWait().build();
 * Bulkhead reports = Bulkhead.builder("reports").limit(4).maxQueue(8)
 *     .maxWait(Duration.ofMillis(500)).build();
 *
 * BulkheadHandler bulkheads = BulkheadHandler.builder()
 *     .route("/reports/*", reports)   // reports can hold at most 4 requests in flight
 *     .route("/*", server)            // every other route shares the server's 50
 *     .bypass("/health")              // never queued, so a saturated server still answers its probe
 *     .build();
 * bulkheads.setHandler(application);
 * server.setHandler(bulkheads);
 * }</pre>
 *
 * <p><b>Routes.</b> Paths are servlet path specs matched against the path in context: an exact path
 * ({@code /login}), a prefix ({@code /api/*}), a suffix ({@code *.csv}) or the default ({@code /}).
 * The most specific spec wins, as in a servlet container: exact, then the longest prefix, then
 * suffix, then default; the order of the {@code route} calls does not matter. A request that
 * matches no route, or a {@link Builder#bypass bypassed} one, goes straight to the wrapped handler,
 * untouched.
 *
 * <p><b>Waiting holds no thread.</b> A request whose compartment is full waits in the compartment's
 * queue (see {@link Bulkhead#submit}) while Jetty's thread returns to the pool. When a slot is
 * handed to it, the wrapped handler runs on the context's executor. The slot is held until the
 * wrapped handler completes the request's {@link Callback}, however long after {@code handle}
 * returns that is, so an asynchronous handler holds its slot for exactly as long as it works on the
 * request.
 *
 * <p><b>Rejection.</b> If the compartment refuses the request (its queue is full, or the request
 * waited the compartment's {@code maxWait}), the wrapped handler is never called and the client
 * gets a {@link Rejection}: {@code 503}, {@code Retry-After} in whole seconds from {@link
 * io.bulkhead.BulkheadFullException#retryAfter()} (rounded up, at least 1), and a one-line
 * plain-text body naming the compartment, or the body of your {@link Builder#rejectionBody}.
 *
 * <p><b>A client that leaves frees its place.</b> If the client closes its connection, or Jetty
 * fails the request (an idle timeout, the server stopping, an HTTP/2 stream reset) while it waits,
 * the request leaves the queue at once and its Jetty callback is failed. For HTTP/1.x, where Jetty
 * itself does not read the connection while a handler holds a request, the handler watches each
 * waiting request's socket for end of stream with a selector of its own, on one thread started when
 * a request first waits and stopped with the handler. An admitted request without a body stays
 * watched while the wrapped handler works on it: if its client leaves, the handler closes the
 * connection and calls the failure listeners the wrapped handler added to the request. A handler
 * that waits on something slow (an upstream call) should listen ({@link
 * Request#addFailureListener}) and cancel that work, then complete the callback: the slot is freed
 * then, once. An admitted request with a body is not watched, because the wrapped handler may be
 * reading from its socket.
 *
 * <p><b>Limits the handler cannot set.</b> A compartment bounds the requests being handled, not the
 * connections that carry them: an idle or slowly sending client holds a connection and a file
 * descriptor without ever reaching this handler. Bound those on the connector, where Jetty can:
 *
 * <ul>
 *   <li>a connection cap below the process's open-file limit, {@code server.addBean(new
 *       NetworkConnectionLimit(512, connector))}: past it Jetty stops accepting, and new clients
 *       wait in the kernel's accept queue instead of failing with "Too many open files";
 *   <li>an idle timeout for connections between requests, {@code connector.setIdleTimeout(30_000)}
 *       (an idle keep-alive connection costs a descriptor), and a longer one while a request is
 *       handled, {@code httpConfiguration.setIdleTimeout(...)}, that outlasts your compartments'
 *       {@code maxWait} and your slowest dependency, so a request is not cut off while it waits;
 *   <li>a deadline on the request head as a whole, which Jetty lacks (its idle timeout restarts
 *       with every byte, so a client trickling its headers is never timed out): the demo app's
 *       {@code RequestHeadDeadline} closes a connection whose head takes over 10 s;
 *   <li>{@code httpConfiguration.setSendServerVersion(false)}, so answers, the 503s included, do
 *       not announce the Jetty version.
 * </ul>
 *
 * The README's "HTTP edge" section gives the values the demo uses and why.
 *
 * <p>This class is thread-safe; its routes are fixed when it is built.
 */
public final class BulkheadHandler extends Handler.Wrapper {

  private final PathMappings<Optional<Bulkhead>> routes;
  private final List<String> description;
  private final RejectionBody rejectionBody;
  private volatile DisconnectWatcher watcher;

  private BulkheadHandler(
      PathMappings<Optional<Bulkhead>> routes,
      List<String> description,
      RejectionBody rejectionBody) {
    this.routes = routes;
    this.description = description;
    this.rejectionBody = rejectionBody;
  }

  /** Starts building a handler with no routes. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the compartment a request to {@code pathInContext} goes through, or empty if it goes to
   * the wrapped handler untouched.
   */
  public Optional<Bulkhead> compartmentFor(String pathInContext) {
    Objects.requireNonNull(pathInContext, "pathInContext");
    MatchedResource<Optional<Bulkhead>> match = routes.getMatched(pathInContext);
    return match == null ? Optional.empty() : match.getResource();
  }

  @Override
  public boolean handle(Request request, Response response, Callback callback) throws Exception {
    Optional<Bulkhead> compartment = compartmentFor(Request.getPathInContext(request));
    Handler next = getHandler();
    if (compartment.isEmpty() || next == null) {
      return super.handle(request, response, callback);
    }
    new ProtectedExchange(
            compartment.get(), next, request, response, callback, watcher, rejectionBody)
        .begin();
    return true;
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
    return "BulkheadHandler" + description;
  }

  /**
   * Builds a {@link BulkheadHandler}. Each method checks its argument and throws {@link
   * IllegalArgumentException} naming the path spec; {@link #build()} copies the routes, so the
   * builder can be changed and reused.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private final List<PathSpec> specs = new ArrayList<>();
    private final List<Optional<Bulkhead>> targets = new ArrayList<>();
    private RejectionBody rejectionBody = RejectionBody.plainText();

    private Builder() {}

    /**
     * Says the {@code 503} of every route in your API's own format (see {@link RejectionBody}); the
     * default is one line of plain text. The status and {@code Retry-After} stay as they are.
     */
    public Builder rejectionBody(RejectionBody body) {
      this.rejectionBody = Objects.requireNonNull(body, "body");
      return this;
    }

    /**
     * Sends requests whose path matches {@code pathSpec} through {@code compartment}.
     *
     * @throws IllegalArgumentException if {@code pathSpec} is not a servlet path spec, or is
     *     already routed
     */
    public Builder route(String pathSpec, Bulkhead compartment) {
      Objects.requireNonNull(compartment, "compartment");
      return add(pathSpec, Optional.of(compartment));
    }

    /**
     * Sends requests whose path matches {@code pathSpec} straight to the wrapped handler, even when
     * a wider spec such as {@code /*} routes everything else through a compartment: for health
     * checks and metrics, which must answer while the server is saturated.
     *
     * @throws IllegalArgumentException if {@code pathSpec} is not a servlet path spec, or is
     *     already routed
     */
    public Builder bypass(String pathSpec) {
      return add(pathSpec, Optional.empty());
    }

    private Builder add(String pathSpec, Optional<Bulkhead> target) {
      Objects.requireNonNull(pathSpec, "pathSpec");
      PathSpec spec;
      try {
        spec = new ServletPathSpec(pathSpec);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "path spec '"
                + pathSpec
                + "' is not a servlet path spec"
                + " (an exact path like /login, a prefix like /api/*, a suffix like *.csv, or /): "
                + e.getMessage(),
            e);
      }
      if (pathSpec.isEmpty()) {
        throw new IllegalArgumentException(
            "path spec '' matches only the context root; use '/' for"
                + " every request or an exact path like /login");
      }
      if (specs.contains(spec)) {
        throw new IllegalArgumentException(
            "path spec '"
                + pathSpec
                + "' is already routed to "
                + describe(targets.get(specs.indexOf(spec))));
      }
      specs.add(spec);
      targets.add(target);
      return this;
    }

    /** Returns a new handler with these routes and no wrapped handler yet. */
    public BulkheadHandler build() {
      PathMappings<Optional<Bulkhead>> mappings = new PathMappings<>();
      List<String> description = new ArrayList<>();
      for (int i = 0; i < specs.size(); i++) {
        mappings.put(specs.get(i), targets.get(i));
        description.add(specs.get(i).getDeclaration() + " -> " + describe(targets.get(i)));
      }
      return new BulkheadHandler(mappings, List.copyOf(description), rejectionBody);
    }

    private static String describe(Optional<Bulkhead> target) {
      return target.map(b -> "bulkhead '" + b.name() + "'").orElse("bypass");
    }
  }
}
