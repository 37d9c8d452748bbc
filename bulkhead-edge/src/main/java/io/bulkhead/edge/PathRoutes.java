package io.bulkhead.edge;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;

/**
 * The {@link RouteTable} of {@link RouteTable#builder()}: exact paths in a hash map, prefixes
 * longest first. A lookup allocates nothing, as it runs for every request an edge sees.
 */
final class PathRoutes implements RouteTable {

  private final Map<String, Route> exact = new HashMap<>();
  private final EdgePattern[] prefixes; // longest first
  private final Route[] prefixRoutes;
  private final String description;

  PathRoutes(Map<String, Route> routes) {
    List<Map.Entry<EdgePattern, Route>> below = new ArrayList<>();
    List<String> described = new ArrayList<>();
    routes.forEach(
        (pattern, route) -> {
          EdgePattern parsed = EdgePattern.parse(pattern);
          if (parsed.prefix()) {
            below.add(Map.entry(parsed, route));
          } else {
            exact.put(parsed.path(), route);
          }
          described.add(pattern + " -> " + route);
        });
    below.sort(
        Comparator.comparingInt((Map.Entry<EdgePattern, Route> e) -> e.getKey().path().length())
            .reversed());
    this.prefixes = below.stream().map(Map.Entry::getKey).toArray(EdgePattern[]::new);
    this.prefixRoutes = below.stream().map(Map.Entry::getValue).toArray(Route[]::new);
    this.description = described.toString();
  }

  @Override
  public Route route(String path) {
    Objects.requireNonNull(path, "path");
    Route hit = exact.get(path);
    if (hit != null) {
      return hit;
    }
    for (int i = 0; i < prefixes.length; i++) {
      if (prefixes[i].matches(path)) {
        return prefixRoutes[i];
      }
    }
    return Route.bypass();
  }

  @Override
  public String toString() {
    return description;
  }
}
