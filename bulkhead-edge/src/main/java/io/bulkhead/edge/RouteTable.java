package io.bulkhead.edge;

import io.bulkhead.Bulkhead;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Which {@link Route} a request takes, by the path of the request within the application (decoded,
 * without the query). An edge asks once per request; an implementation is immutable and
 * thread-safe.
 *
 * <p>{@link #builder()} makes the table Jetty and Servlet edges use:
 *
 * <pre>{@code
 * RouteTable routes = RouteTable.builder()
 *     .route("/chat/**", llm)        // /chat and everything below it
 *     .route("/**", server)          // every other request shares the server's limit
 *     .bypass("/health")             // never queued: a saturated server still answers its probe
 *     .build();
 * }</pre>
 *
 * <p>A pattern is an exact path ({@code /login}; {@code /} is the root only) or a path followed by
 * {@code /**} for it and everything below it ({@code /chat/**}; {@code /**} alone for every
 * request). The most specific pattern wins, whatever the order of the calls: an exact path, then
 * the longest prefix. A path no pattern matches is {@linkplain Route#bypass() bypassed}. The Spring
 * Boot starter implements this interface with Spring's own path patterns instead.
 */
@FunctionalInterface
public interface RouteTable {

  /** The route of a request to {@code path}; never null. */
  Route route(String path);

  /** Starts an empty table. */
  static Builder builder() {
    return new Builder();
  }

  /**
   * Builds a {@link RouteTable} of exact paths and {@code /**} prefixes. Each method checks its
   * pattern and throws {@link IllegalArgumentException} with one line naming it; {@link #build()}
   * copies the routes, so the builder can be changed and reused. Not thread-safe.
   */
  final class Builder {

    private final Map<String, Route> routes = new LinkedHashMap<>();

    private Builder() {}

    /**
     * Sends requests that match {@code pattern} through {@code bulkhead}.
     *
     * @throws IllegalArgumentException if {@code pattern} is malformed or already routed
     */
    public Builder route(String pattern, Bulkhead bulkhead) {
      Objects.requireNonNull(bulkhead, "bulkhead");
      return add(pattern, Route.through(bulkhead));
    }

    /**
     * Sends requests that match {@code pattern} straight to the application, even when a wider
     * pattern such as {@code /**} routes everything else through a compartment: for health checks
     * and metrics, which must answer while the server is saturated.
     *
     * @throws IllegalArgumentException if {@code pattern} is malformed or already routed
     */
    public Builder bypass(String pattern) {
      return add(pattern, Route.bypass());
    }

    private Builder add(String pattern, Route route) {
      EdgePattern.parse(pattern);
      Route other = routes.putIfAbsent(pattern, route);
      if (other != null) {
        throw new IllegalArgumentException(
            "path pattern '" + pattern + "' is already routed to " + other);
      }
      return this;
    }

    /** Returns a table with the routes added so far. */
    public RouteTable build() {
      return new PathRoutes(routes);
    }
  }
}
