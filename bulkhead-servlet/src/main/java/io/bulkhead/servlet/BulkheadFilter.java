package io.bulkhead.servlet;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import jakarta.servlet.DispatcherType;
import jakarta.servlet.Filter;
import jakarta.servlet.FilterChain;
import jakarta.servlet.ServletException;
import jakarta.servlet.ServletRequest;
import jakarta.servlet.ServletResponse;
import jakarta.servlet.http.HttpServletRequest;
import jakarta.servlet.http.HttpServletResponse;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A Servlet filter that sends each request through the compartment of its route, and answers a full
 * compartment with a fast {@code 503} instead of a slow hang. It runs in any Jakarta Servlet 6
 * container: Tomcat 11, Jetty 12 (ee10), Undertow, a Spring MVC application's embedded server.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20)
 *     .maxWait(Duration.ofSeconds(1)).build();
 * Bulkhead reports = Bulkhead.builder("reports").limit(4).maxQueue(8)
 *     .maxWait(Duration.ofMillis(500)).build();
 *
 * BulkheadFilter bulkheads = BulkheadFilter.builder()
 *     .route("/chat/*", llm)          // at most 10 chats in flight, 20 more waiting
 *     .route("/report/*", reports)
 *     .build();
 *
 * FilterRegistration.Dynamic registration = servletContext.addFilter("bulkheads", bulkheads);
 * registration.setAsyncSupported(true);
 * registration.addMappingForUrlPatterns(
 *     EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
 * }</pre>
 *
 * <p><b>Routes.</b> Paths are servlet path specs matched against the request's path in its context
 * (servlet path plus path info, decoded): an exact path ({@code /login}), a prefix ({@code
 * /api/*}), a suffix ({@code *.csv}) or the default ({@code /}). The most specific spec wins, as
 * when the container picks a servlet: exact, then the longest prefix, then the longest suffix, then
 * default; the order of the {@code route} calls does not matter. A request that matches no route,
 * or a {@link Builder#bypass bypassed} one, goes down the chain untouched: no compartment sees it.
 *
 * <p><b>Waiting holds no thread.</b> The filter asks the compartment with {@link Bulkhead#submit}.
 * A request admitted at once continues down the chain on the container's thread, as if the filter
 * were not there. A request that has to wait is put into async mode ({@code startAsync}) and the
 * container's thread goes back to its pool; when a slot is handed to it, the filter {@linkplain
 * jakarta.servlet.AsyncContext#dispatch() dispatches} the request again and, on that second pass,
 * continues down the chain holding the slot. Map the filter for the {@code REQUEST} and {@code
 * ASYNC} dispatcher types, and mark it and every filter before it {@code asyncSupported}; the
 * servlets behind it need async support only for async of their own, since a waiting request is
 * parked before it reaches them. If a filter before it does not support async, a request that has
 * to wait waits on the container's thread instead (still in order, still at most {@code maxWait});
 * the filter logs this once.
 *
 * <p><b>The slot is held until the response is done</b>: until the chain returns or throws, or, if
 * the application started async itself, until that async completes, fails or times out. It is freed
 * exactly once however the request ends. When the container stops and {@linkplain #destroy()
 * destroys} the filter, the requests it still holds give their slots back and the waiting ones
 * leave their queues, so a compartment that outlives the web application counts nothing it no
 * longer has.
 *
 * <p><b>Rejection.</b> If the compartment refuses the request (its queue is full, or the request
 * waited the compartment's {@code maxWait}), nothing behind the filter sees it and the client gets
 * a {@link Rejection}: {@code 503}, {@code Retry-After} in whole seconds from {@link
 * BulkheadFullException#retryAfter()} (rounded up, at least 1), and a one-line plain-text body
 * naming the compartment, or the body of your {@link Builder#rejectionBody}.
 *
 * <p><b>The async timeout.</b> While a request waits, its async timeout is the compartment's {@code
 * maxWait} plus a second, so the compartment's own 503, with its {@code Retry-After}, comes first.
 * With an unbounded {@code maxWait} the container's default async timeout applies (30 s on Tomcat
 * and Jetty); when it runs out the request leaves the queue, counts as cancelled, and gets a bare
 * {@code 503} without {@code Retry-After}.
 *
 * <p><b>A client that leaves while its request waits.</b> The request leaves the queue (it counts
 * as cancelled, and never reaches the servlet) when the container reports the failure to the
 * filter's {@link jakarta.servlet.AsyncListener}: {@code onError}, or {@code onComplete} when the
 * container completes a parked request itself. What a container notices about a parked request is
 * its own affair, and the Servlet API offers no way to look at the connection. On Tomcat 11 and
 * Jetty 12 ee10 (both checked by this module's tests):
 *
 * <ul>
 *   <li><b>HTTP/2:</b> a client that gives up on a request resets its stream, the container reports
 *       it, and the request leaves the queue at once; the connection's other streams carry on.
 *   <li><b>HTTP/1.1:</b> neither container reads the connection of a request parked in async mode,
 *       so a client that closes its connection while its request waits goes unnoticed. The request
 *       stays queued until it is admitted, and then runs, its answer going nowhere, or until the
 *       compartment refuses it at {@code maxWait}: it holds its place no longer than a request
 *       whose client stayed, and its slot is freed as usual. Keep {@code maxWait} short on routes
 *       whose clients give up early. On Jetty, {@code io.bulkhead.jetty.BulkheadHandler} (module
 *       {@code bulkhead-jetty}) watches the sockets of waiting requests itself and removes such a
 *       request at once.
 * </ul>
 *
 * <p>A request goes through at most one compartment at this edge: the filter marks each request it
 * routes with a request attribute, and a second {@code BulkheadFilter} in the same chain lets a
 * marked request pass. Give one filter all the routes.
 *
 * <p>This class is thread-safe; its routes are fixed when it is built. One instance may serve any
 * number of requests concurrently.
 */
public final class BulkheadFilter implements Filter {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.servlet");

  private final Routes routes;
  private final List<String> description;
  private final RejectionBody rejectionBody;
  private final AtomicBoolean warnedAboutBlockingWait = new AtomicBoolean();
  private final Set<ProtectedRequest> live = ConcurrentHashMap.newKeySet();

  private BulkheadFilter(Routes routes, List<String> description, RejectionBody rejectionBody) {
    this.routes = routes;
    this.description = description;
    this.rejectionBody = rejectionBody;
  }

  /** Starts building a filter with no routes. */
  public static Builder builder() {
    return new Builder();
  }

  /**
   * Returns the compartment a request to {@code pathInContext} goes through, or empty if it passes
   * untouched.
   */
  public Optional<Bulkhead> compartmentFor(String pathInContext) {
    Objects.requireNonNull(pathInContext, "pathInContext");
    return routes.target(pathInContext);
  }

  @Override
  public void doFilter(ServletRequest req, ServletResponse res, FilterChain chain)
      throws IOException, ServletException {
    if (!(req instanceof HttpServletRequest request)
        || !(res instanceof HttpServletResponse response)) {
      chain.doFilter(req, res);
      return;
    }
    if (request.getAttribute(ProtectedRequest.ATTRIBUTE) instanceof ProtectedRequest known) {
      known.resume(request, response, chain); // its admission's dispatch, or any later one
      return;
    }
    Optional<Bulkhead> compartment =
        request.getDispatcherType() == DispatcherType.REQUEST
            ? compartmentFor(pathInContext(request))
            : Optional.empty(); // forwards, includes and error pages of requests we never routed
    if (compartment.isEmpty()) {
      chain.doFilter(request, response);
    } else if (request.isAsyncSupported()) {
      new ProtectedRequest(compartment.get(), request, response, rejectionBody, live).begin(chain);
    } else {
      waitOnThisThread(compartment.get(), request, response, chain);
    }
  }

  /** The fallback when async is not allowed here: the same queue, waited on by this thread. */
  private void waitOnThisThread(
      Bulkhead compartment,
      HttpServletRequest request,
      HttpServletResponse response,
      FilterChain chain)
      throws IOException, ServletException {
    if (warnedAboutBlockingWait.compareAndSet(false, true)) {
      LOG.log(
          Level.WARNING,
          "a request to "
              + pathInContext(request)
              + " has no async support at"
              + " the bulkhead filter (mark it and every filter before it asyncSupported): requests in"
              + " bulkhead '"
              + compartment.name()
              + "' that have to wait hold a container thread while"
              + " they do");
    }
    Permit permit;
    try {
      permit = compartment.acquire();
    } catch (BulkheadFullException refused) {
      Rejection.send(response, refused, rejectionBody);
      return;
    }
    try (permit) {
      chain.doFilter(request, response);
    }
  }

  /**
   * Gives back every slot this filter's requests hold and withdraws every request still waiting. A
   * stopping container may drop a request it had been asked to dispatch, or never report the end of
   * an application's async request; without this, their compartments would count them for good.
   */
  @Override
  public void destroy() {
    for (ProtectedRequest request : live) {
      request.shutdown();
    }
  }

  private static String pathInContext(HttpServletRequest request) {
    String servletPath = request.getServletPath();
    String pathInfo = request.getPathInfo();
    return pathInfo == null ? servletPath : servletPath + pathInfo;
  }

  @Override
  public String toString() {
    return "BulkheadFilter" + description;
  }

  /**
   * Builds a {@link BulkheadFilter}. Each method checks its argument and throws {@link
   * IllegalArgumentException} naming the path spec; {@link #build()} copies the routes, so the
   * builder can be changed and reused.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private final List<Routes.Route> routes = new ArrayList<>();
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
     * Sends requests whose path matches {@code pathSpec} straight down the chain, even when a wider
     * spec such as {@code /*} routes everything else through a compartment: for health checks and
     * metrics, which must answer while the server is saturated.
     *
     * @throws IllegalArgumentException if {@code pathSpec} is not a servlet path spec, or is
     *     already routed
     */
    public Builder bypass(String pathSpec) {
      return add(pathSpec, Optional.empty());
    }

    private Builder add(String pathSpec, Optional<Bulkhead> target) {
      Objects.requireNonNull(pathSpec, "pathSpec");
      Routes.Spec spec = Routes.Spec.parse(pathSpec);
      for (Routes.Route existing : routes) {
        if (existing.spec().equals(spec)) {
          throw new IllegalArgumentException(
              "path spec '" + pathSpec + "' is already routed to " + describe(existing.target()));
        }
      }
      routes.add(new Routes.Route(spec, target));
      return this;
    }

    /** Returns a new filter with these routes. */
    public BulkheadFilter build() {
      List<String> description = new ArrayList<>();
      for (Routes.Route route : routes) {
        description.add(route.spec().declaration() + " -> " + describe(route.target()));
      }
      return new BulkheadFilter(new Routes(routes), List.copyOf(description), rejectionBody);
    }

    private static String describe(Optional<Bulkhead> target) {
      return target.map(b -> "bulkhead '" + b.name() + "'").orElse("bypass");
    }
  }
}
