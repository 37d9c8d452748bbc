package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.edge.Route;
import io.bulkhead.edge.RouteTable;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.springframework.http.server.PathContainer;
import org.springframework.web.util.pattern.PathPattern;
import org.springframework.web.util.pattern.PathPatternParser;

/**
 * The {@code paths} of every compartment as the {@link RouteTable} of the Spring edges, with
 * Spring's own path patterns ({@link PathPatternParser}, as in {@code @RequestMapping}): {@code
 * /slow/**} is {@code /slow} and everything below it, {@code /users/{id}} one segment below {@code
 * /users}. The most specific pattern wins ({@link PathPattern#SPECIFICITY_COMPARATOR}), as among
 * controller mappings; a path no pattern matches is bypassed.
 *
 * <p>The management endpoints this application's own server answers come first and are bypassed, so
 * health checks answer while a compartment routed by {@code /**} is full; a pattern that names them
 * ({@code /actuator/**}) fails start-up, unless {@code bulkhead.edge.include-management} lets them
 * in, with a warning. Immutable and thread-safe.
 */
final class EdgeRoutes implements RouteTable {

  private static final Log LOG = LogFactory.getLog(EdgeRoutes.class);

  /** A checked pattern. */
  record Parsed(EdgePath path, PathPattern pattern) {}

  private final PathPattern[] bypassed;
  private final PathPattern[] patterns; // most specific first
  private final Route[] routes;
  private final String description;

  private EdgeRoutes(List<PathPattern> bypassed, List<Parsed> parsed, Map<String, Route> routes) {
    List<Parsed> ordered = new ArrayList<>(parsed);
    ordered.sort(Comparator.comparing(Parsed::pattern, PathPattern.SPECIFICITY_COMPARATOR));
    this.bypassed = bypassed.toArray(PathPattern[]::new);
    this.patterns = ordered.stream().map(Parsed::pattern).toArray(PathPattern[]::new);
    this.routes =
        ordered.stream().map(p -> routes.get(p.path().compartment())).toArray(Route[]::new);
    List<String> described = new ArrayList<>();
    bypassed.forEach(p -> described.add(p.getPatternString() + " -> bypass (management)"));
    parsed.forEach(
        p -> described.add(p.path().pattern() + " -> " + routes.get(p.path().compartment())));
    this.description = described.toString();
  }

  /**
   * The routes of {@code paths}, their compartments taken from {@code registry}.
   *
   * @param management the management endpoints' root paths on this server ({@code /actuator})
   * @param includeManagement {@code bulkhead.edge.include-management}
   * @throws BulkheadConfigurationException for a malformed pattern, one routed twice, one that
   *     names a management path, or a compartment the registry does not hold
   */
  static EdgeRoutes of(
      BulkheadFile settings,
      BulkheadRegistry registry,
      List<String> management,
      boolean includeManagement) {
    List<Parsed> parsed = parse(EdgePath.all(settings));
    Map<String, Route> routes = new LinkedHashMap<>();
    for (Parsed p : parsed) {
      String name = p.path().compartment();
      if (!includeManagement) {
        for (String root : management) {
          if (names(p.path().pattern(), root)) {
            throw BulkheadConfigurationException.property(
                p.path().key(),
                p.path().pattern(),
                "the pattern covers the management endpoints under "
                    + root
                    + ", which must answer while compartments are full; set "
                    + BulkheadProperties.PREFIX
                    + ".edge.include-management=true to route them all the same");
          }
        }
      }
      routes.computeIfAbsent(
          name,
          n ->
              Route.through(
                  registry
                      .bulkhead(n)
                      .orElseThrow(
                          () ->
                              BulkheadConfigurationException.property(
                                  BulkheadProperties.PREFIX + ".compartments." + n + ".paths",
                                  p.path().pattern(),
                                  "the BulkheadRegistry bean has no compartment '"
                                      + n
                                      + "' that admits calls"))));
    }
    List<PathPattern> bypassed = new ArrayList<>();
    if (!includeManagement) {
      for (String root : management) {
        bypassed.add(PathPatternParser.defaultInstance.parse(root + "/**"));
      }
    } else if (!management.isEmpty() && !parsed.isEmpty()) {
      LOG.warn(
          BulkheadProperties.PREFIX
              + ".edge.include-management=true: requests to the management endpoints under "
              + String.join(", ", management)
              + " enter the compartments of the paths that cover them, and a full compartment"
              + " answers a health check with 503");
    }
    return new EdgeRoutes(bypassed, parsed, routes);
  }

  /**
   * Parses every pattern with Spring's parser.
   *
   * @throws BulkheadConfigurationException naming the key and the value of the first pattern that
   *     is malformed or already routed to another compartment
   */
  static List<Parsed> parse(List<EdgePath> paths) {
    Map<String, String> seen = new LinkedHashMap<>();
    List<Parsed> parsed = new ArrayList<>();
    for (EdgePath path : paths) {
      String pattern = path.pattern();
      if (pattern == null || !pattern.startsWith("/")) {
        throw BulkheadConfigurationException.property(
            path.key(), pattern, "a path pattern starts with / (/login, /chat/**, /users/{id})");
      }
      PathPattern parsedPattern;
      try {
        parsedPattern = PathPatternParser.defaultInstance.parse(pattern);
      } catch (IllegalArgumentException malformed) { // PatternParseException
        throw BulkheadConfigurationException.property(
            path.key(),
            pattern,
            "not a Spring path pattern: " + malformed.getMessage().replace('\n', ' '));
      }
      String other = seen.putIfAbsent(parsedPattern.getPatternString(), path.compartment());
      if (other != null) {
        throw BulkheadConfigurationException.property(
            path.key(),
            pattern,
            "the path is already routed to compartment '"
                + other
                + "'; a request enters one compartment at the web edge");
      }
      parsed.add(new Parsed(path, parsedPattern));
    }
    return List.copyOf(parsed);
  }

  /**
   * Whether {@code pattern} names {@code root} or a path below it: its segments before the first
   * wildcard or variable are {@code root}'s, or more. {@code /actuator/**} and {@code
   * /actuator/health} name {@code /actuator}; {@code /**} and {@code /{x}/health} do not.
   */
  static boolean names(String pattern, String root) {
    StringBuilder literal = new StringBuilder();
    for (String segment : pattern.substring(1).split("/", -1)) {
      if (segment.chars().anyMatch(c -> c == '*' || c == '?' || c == '{')) {
        break;
      }
      literal.append('/').append(segment);
    }
    String fixed = literal.toString();
    return fixed.equals(root) || fixed.startsWith(root + "/");
  }

  @Override
  public Route route(String path) {
    return route(PathContainer.parsePath(path));
  }

  /** The route of a request to {@code path}, its path within the application. */
  Route route(PathContainer path) {
    if (patterns.length == 0) {
      return Route.bypass();
    }
    for (PathPattern management : bypassed) {
      if (management.matches(path)) {
        return Route.bypass();
      }
    }
    for (int i = 0; i < patterns.length; i++) {
      if (patterns[i].matches(path)) {
        return routes[i];
      }
    }
    return Route.bypass();
  }

  /** Whether no pattern routes any request. */
  boolean isEmpty() {
    return patterns.length == 0;
  }

  @Override
  public String toString() {
    return description;
  }
}
