package io.bulkhead.httpclient;

import io.bulkhead.Bulkhead;
import io.bulkhead.internal.Urls;
import java.net.URI;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import org.jspecify.annotations.Nullable;

/**
 * Which compartment an outgoing request enters, by its URL: the table the OkHttp and Apache
 * HttpClient 5 edges take. Each route is a {@link BaseUrl} (a base URL such as {@code
 * https://llm.internal:8443/v1}, or a host alone); the most specific one that matches wins (the
 * longest base path, then the order of the calls), and a request that matches none is not guarded.
 *
 * <pre>{@code
 * UpstreamRoutes routes = UpstreamRoutes.builder()
 *     .route("https://llm.internal/v1", llm)     // that base path and below it
 *     .route("billing.internal", billing)        // any scheme, port and path on that host
 *     .build();
 * }</pre>
 *
 * <p>Immutable and thread-safe.
 */
public final class UpstreamRoutes {

  /** A route: a base URL (null: every request) and its compartment. */
  public record Route(@Nullable BaseUrl upstream, Bulkhead compartment) {

    /** Checks the compartment. */
    public Route {
      Objects.requireNonNull(compartment, "compartment");
    }
  }

  private final List<Route> routes; // most specific first; a catch-all alone

  private UpstreamRoutes(List<Route> routes) {
    this.routes = List.copyOf(routes);
  }

  /** A table that puts every request into {@code compartment}: one client, one upstream. */
  public static UpstreamRoutes of(Bulkhead compartment) {
    return new UpstreamRoutes(List.of(new Route(null, compartment)));
  }

  /** Starts an empty table. */
  public static Builder builder() {
    return new Builder();
  }

  /** The compartment of a request to {@code uri}; empty when the request is not guarded. */
  public Optional<Bulkhead> route(URI uri) {
    for (Route route : routes) {
      BaseUrl upstream = route.upstream();
      if (upstream == null || upstream.matches(uri)) {
        return Optional.of(route.compartment());
      }
    }
    return Optional.empty();
  }

  /** The routes, the most specific first: for sizing a client's connection pool. */
  public List<Route> routes() {
    return routes;
  }

  @Override
  public String toString() {
    return "UpstreamRoutes" + routes;
  }

  /**
   * Builds an {@link UpstreamRoutes}. {@link #route} checks its value and throws {@link
   * IllegalArgumentException} with one line naming it. Not thread-safe.
   */
  public static final class Builder {

    private final Map<BaseUrl, Route> routes = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Sends requests that match {@code upstream} (a base URL or a host) through {@code
     * compartment}.
     *
     * @throws IllegalArgumentException if {@code upstream} is not a base URL or host, or is already
     *     routed
     */
    public Builder route(String upstream, Bulkhead compartment) {
      Objects.requireNonNull(upstream, "upstream");
      Objects.requireNonNull(compartment, "compartment");
      BaseUrl url;
      try {
        url = BaseUrl.parse(upstream);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(
            "upstream '" + Urls.masked(upstream) + "' " + e.getMessage(), e);
      }
      Route other = routes.putIfAbsent(url, new Route(url, compartment));
      if (other != null) {
        throw new IllegalArgumentException(
            "upstream '"
                + Urls.masked(upstream)
                + "' is already routed to compartment '"
                + other.compartment().name()
                + "'");
      }
      return this;
    }

    /** Returns a table with the routes added so far. */
    public UpstreamRoutes build() {
      List<Route> sorted = new ArrayList<>(routes.values());
      sorted.sort((a, b) -> BaseUrl.MOST_SPECIFIC_FIRST.compare(a.upstream(), b.upstream()));
      return new UpstreamRoutes(sorted);
    }
  }
}
