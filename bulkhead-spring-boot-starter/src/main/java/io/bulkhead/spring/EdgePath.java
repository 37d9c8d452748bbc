package io.bulkhead.spring;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * One entry of {@code bulkhead.compartments.<name>.paths}: an exact path ({@code /login}) or a path
 * and everything below it ({@code /chat/**}, {@code /**} for every request). These are the two
 * forms that mean the same in Spring's pattern syntax and in a servlet path spec, so a compartment
 * routes the same requests whether the servlet filter (MVC) or the {@code WebFilter} (WebFlux)
 * enforces it.
 *
 * @param path the exact path, or for a prefix the path before {@code /**} ({@code ""} for {@code
 *     /**})
 * @param prefix whether the pattern also matches every path below {@code path}
 * @param pattern the pattern as configured
 */
record EdgePath(String path, boolean prefix, String pattern) {

  private static final String ANY_BELOW = "/**";

  /** A configured pattern and the compartment whose requests it selects. */
  record Route(EdgePath path, String compartment) {}

  /**
   * Parses a configured pattern.
   *
   * @throws IllegalArgumentException saying what form a pattern takes
   */
  static EdgePath parse(String pattern) {
    if (pattern == null || !pattern.startsWith("/")) {
      throw new IllegalArgumentException("a path pattern starts with / (/login, /chat/**)");
    }
    boolean prefix = pattern.endsWith(ANY_BELOW);
    String path = prefix ? pattern.substring(0, pattern.length() - ANY_BELOW.length()) : pattern;
    if (path.contains("*") || path.contains("{") || path.contains("?")) {
      throw new IllegalArgumentException(
          "a path pattern is an exact path (/login) or a path followed"
              + " by /** for everything below it (/chat/**); wildcards elsewhere and {variables} are not"
              + " supported");
    }
    if (path.endsWith("/")) {
      throw new IllegalArgumentException(
          "a path pattern does not end with / (write /chat or"
              + " /chat/**, and /** for every request)");
    }
    return new EdgePath(path, prefix, pattern);
  }

  /**
   * The same pattern as a servlet path spec: {@code /chat/**} becomes {@code /chat/*} (which the
   * Servlet specification matches for {@code /chat} and every path below it), an exact path stays.
   */
  String servletPathSpec() {
    return prefix ? path + "/*" : path;
  }

  /** Whether a request to {@code requestPath} (its path within the application) matches. */
  boolean matches(String requestPath) {
    if (!prefix) {
      return requestPath.equals(path);
    }
    return requestPath.equals(path) || requestPath.startsWith(path + "/");
  }

  /**
   * The configured routes, each pattern checked, in the order of their compartments.
   *
   * @throws BulkheadConfigurationException naming the key and the value of the first pattern that
   *     is malformed or already routed to another compartment
   */
  static List<Route> routes(BulkheadProperties properties) {
    Map<String, String> seen = new LinkedHashMap<>();
    List<Route> routes = new ArrayList<>();
    properties
        .getCompartments()
        .forEach(
            (name, settings) -> {
              List<String> paths = settings.getPaths();
              for (int i = 0; i < paths.size(); i++) {
                String key =
                    BulkheadProperties.PREFIX + ".compartments." + name + ".paths[" + i + "]";
                String pattern = paths.get(i);
                EdgePath path;
                try {
                  path = parse(pattern);
                } catch (IllegalArgumentException e) {
                  throw BulkheadConfigurationException.property(key, pattern, e.getMessage());
                }
                String other = seen.putIfAbsent(path.servletPathSpec(), name);
                if (other != null) {
                  throw BulkheadConfigurationException.property(
                      key,
                      pattern,
                      "the path is already routed to compartment '"
                          + other
                          + "'; a request enters one"
                          + " compartment at the web edge");
                }
                routes.add(new Route(path, name));
              }
            });
    return List.copyOf(routes);
  }

  /**
   * The route of a request to {@code requestPath}, choosing as a servlet container does: an exact
   * path first, then the longest prefix.
   */
  static Optional<Route> select(List<Route> routes, String requestPath) {
    return routes.stream()
        .filter(route -> route.path().matches(requestPath))
        .max(
            Comparator.comparing((Route route) -> !route.path().prefix())
                .thenComparingInt(route -> route.path().path().length()));
  }
}
