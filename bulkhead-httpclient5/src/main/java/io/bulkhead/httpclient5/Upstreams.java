package io.bulkhead.httpclient5;

import io.bulkhead.Bulkhead;
import io.bulkhead.httpclient.BaseUrl;
import io.bulkhead.httpclient.RetryAfter;
import io.bulkhead.httpclient.UpstreamRoutes;
import io.bulkhead.httpclient.UpstreamUnavailableException;
import java.net.URI;
import java.net.URISyntaxException;
import java.time.Instant;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import org.apache.hc.client5.http.HttpRoute;
import org.apache.hc.core5.http.Header;
import org.apache.hc.core5.http.HttpHost;
import org.apache.hc.core5.http.HttpRequest;
import org.apache.hc.core5.http.HttpResponse;
import org.apache.hc.core5.pool.ConnPoolControl;

/** What the classic and the async handler share: routing, the busy answer and the pool's sizes. */
final class Upstreams {

  private final UpstreamRoutes routes;

  Upstreams(UpstreamRoutes routes) {
    this.routes = routes;
  }

  UpstreamRoutes routes() {
    return routes;
  }

  /** The compartment of {@code request}, sent on {@code route}; empty when it is not guarded. */
  Optional<Bulkhead> route(HttpRequest request, HttpRoute route) {
    return routes.route(uriOf(request, route));
  }

  static URI uriOf(HttpRequest request, HttpRoute route) {
    try {
      URI uri = request.getUri();
      if (uri.isAbsolute()) {
        return uri;
      }
    } catch (URISyntaxException notAUri) {
      // the route's target and the request's path below
    }
    String path = request.getPath() == null ? "/" : request.getPath();
    return URI.create(route.getTargetHost().toURI() + path);
  }

  /** The answer as an exception if it says the upstream is busy (503, 429). */
  static Optional<UpstreamUnavailableException> busy(
      Bulkhead compartment, HttpRequest request, HttpRoute route, HttpResponse response) {
    if (!UpstreamUnavailableException.isBusy(response.getCode())) {
      return Optional.empty();
    }
    Header retryAfter = response.getFirstHeader(RetryAfter.HEADER);
    return UpstreamUnavailableException.ofAnswer(
        compartment.name(),
        request.getMethod(),
        uriOf(request, route).toString(),
        response.getCode(),
        retryAfter == null ? null : retryAfter.getValue(),
        Instant.now());
  }

  /**
   * Raises the pool's maxima where they are below the routes' limits: per route, the sum of the
   * limits of the compartments routed to its host; in total, the sum of every limit; a catch-all
   * route raises the default per route.
   */
  void agree(ConnPoolControl<HttpRoute> pool) {
    Map<HttpRoute, Integer> perRoute = new HashMap<>();
    Map<Bulkhead, Boolean> counted = new IdentityHashMap<>();
    long total = 0;
    for (UpstreamRoutes.Route route : routes.routes()) {
      int limit = route.compartment().config().limit();
      if (counted.put(route.compartment(), Boolean.TRUE) == null) {
        total += limit;
      }
      BaseUrl upstream = route.upstream();
      if (upstream == null) {
        pool.setDefaultMaxPerRoute(Math.max(pool.getDefaultMaxPerRoute(), limit));
        continue;
      }
      for (HttpRoute target : targets(upstream)) {
        perRoute.merge(target, limit, Integer::sum);
      }
    }
    perRoute.forEach(
        (route, max) -> pool.setMaxPerRoute(route, Math.max(pool.getMaxPerRoute(route), max)));
    pool.setMaxTotal((int) Math.max(pool.getMaxTotal(), Math.min(Integer.MAX_VALUE, total)));
  }

  /** The pool routes a base URL's requests take: both schemes for a host alone. */
  private static List<HttpRoute> targets(BaseUrl upstream) {
    String scheme = upstream.scheme();
    if (scheme == null) {
      if (upstream.port() != -1) {
        return List.of(
            target("http", upstream.host(), upstream.port()),
            target("https", upstream.host(), upstream.port()));
      }
      return List.of(target("http", upstream.host(), 80), target("https", upstream.host(), 443));
    }
    return List.of(target(scheme, upstream.host(), upstream.port()));
  }

  private static HttpRoute target(String scheme, String host, int port) {
    boolean secure = scheme.equals("https");
    return new HttpRoute(new HttpHost(scheme, host, port), null, secure);
  }
}
