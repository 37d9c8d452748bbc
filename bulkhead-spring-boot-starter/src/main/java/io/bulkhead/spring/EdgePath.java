package io.bulkhead.spring;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.CompartmentSpec;
import java.util.ArrayList;
import java.util.List;
import org.springframework.util.ClassUtils;

/**
 * One entry of {@code bulkhead.compartments.<name>.paths}: a Spring path pattern ({@code /login},
 * {@code /chat/**}, {@code /users/{id}}) and the compartment its requests enter at the web edge.
 * Listing them needs no web framework; {@link EdgeRoutes} parses and matches them.
 *
 * @param key the property that holds it, {@code bulkhead.compartments.llm.paths[0]}
 * @param pattern the pattern as configured
 * @param compartment the compartment's name
 */
record EdgePath(String key, String pattern, String compartment) {

  private static final String PARSER = "org.springframework.web.util.pattern.PathPatternParser";

  /** Every configured path, in the order of their compartments. */
  static List<EdgePath> all(BulkheadFile settings) {
    List<EdgePath> paths = new ArrayList<>();
    for (CompartmentSpec c : settings.compartments()) {
      List<String> patterns = c.paths();
      for (int i = 0; i < patterns.size(); i++) {
        String key = BulkheadProperties.PREFIX + "." + c.path() + ".paths[" + i + "]";
        paths.add(new EdgePath(key, patterns.get(i), c.name()));
      }
    }
    return List.copyOf(paths);
  }

  /**
   * Checks every pattern, whichever web stack enforces them, when the application has Spring's web
   * module (without it no edge runs).
   *
   * @throws BulkheadConfigurationException naming the key and the value of the first pattern that
   *     is malformed or routed to two compartments
   */
  static void check(BulkheadFile settings) {
    if (ClassUtils.isPresent(PARSER, EdgePath.class.getClassLoader())) {
      EdgeRoutes.parse(all(settings));
    }
  }
}
