package io.bulkhead.servlet;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import io.bulkhead.edge.RejectionBody;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
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
import java.util.Objects;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * A Servlet filter that sends each request through the compartment its {@link RouteTable} names for
 * the path in context (servlet path plus path info), and answers a full compartment with a fast
 * {@code 503} instead of a slow hang. It runs in any Jakarta Servlet 6 container.
 *
 * <pre>{@code
 * BulkheadFilter bulkheads =
 *     BulkheadFilter.of(RouteTable.builder().route("/chat/**", llm).bypass("/health").build());
 * FilterRegistration.Dynamic registration = servletContext.addFilter("bulkheads", bulkheads);
 * registration.setAsyncSupported(true);
 * registration.addMappingForUrlPatterns(
 *     EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
 * }</pre>
 *
 * <p><b>Waiting holds no thread.</b> A request that has to wait is put into async mode and
 * dispatched again once a slot is handed to it: map the filter for {@code REQUEST} and {@code
 * ASYNC}, and mark it and every filter before it {@code asyncSupported} (otherwise such a request
 * waits on the container's thread, and the filter logs that once). Put it early, so a refusal costs
 * little. While a request waits, its async timeout is the compartment's {@code maxWait} plus a
 * second, so the compartment's own answer comes first.
 *
 * <p>The slot is held until the chain returns or throws, or until the application's own async ends,
 * and is freed exactly once; {@link #destroy()} frees what requests still hold. A refused request
 * never reaches the servlet: the client gets the {@link Rejection} ({@code 503}, {@code
 * Retry-After} and the {@link RejectionBody}, plain text by default). A waiting request whose
 * HTTP/2 stream is reset leaves the queue; an HTTP/1.1 client that closes its connection is not
 * reported by the containers, so its request keeps its place until admitted or refused.
 *
 * <p>A request enters at most one compartment here, however many such filters it passes.
 */
public final class BulkheadFilter implements Filter {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.servlet");

  private final RouteTable routes;
  private final RejectionBody rejectionBody;
  private final AtomicBoolean warnedAboutBlockingWait = new AtomicBoolean();
  private final Set<ProtectedRequest> live = ConcurrentHashMap.newKeySet();

  private BulkheadFilter(RouteTable routes, RejectionBody rejectionBody) {
    this.routes = Objects.requireNonNull(routes, "routes");
    this.rejectionBody = Objects.requireNonNull(rejectionBody, "rejectionBody");
  }

  /** A filter with these routes and the plain-text {@code 503}. */
  public static BulkheadFilter of(RouteTable routes) {
    return of(routes, RejectionBody.plainText());
  }

  /** A filter with these routes whose {@code 503} says {@code rejectionBody}. */
  public static BulkheadFilter of(RouteTable routes, RejectionBody rejectionBody) {
    return new BulkheadFilter(routes, rejectionBody);
  }

  /** The routes requests take. */
  public RouteTable routes() {
    return routes;
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
    Route route =
        request.getDispatcherType() == DispatcherType.REQUEST
            ? routes.route(pathInContext(request))
            : Route.bypass(); // forwards, includes and error pages of requests we never routed
    if (!(route instanceof Route.Through through)) {
      chain.doFilter(request, response);
    } else if (request.isAsyncSupported()) {
      new ProtectedRequest(through.bulkhead(), request, response, rejectionBody, live).begin(chain);
    } else {
      waitOnThisThread(through.bulkhead(), request, response, chain);
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
    return "BulkheadFilter" + routes;
  }
}
