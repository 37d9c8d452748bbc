package io.bulkhead.spring;

import java.util.Collection;
import java.util.List;
import org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType;
import org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints;
import org.springframework.context.ApplicationContext;
import org.springframework.util.ClassUtils;

/**
 * The root paths of the Actuator endpoints the application's own web server answers: the base path
 * ({@code /actuator}), or each endpoint's path when the base path is {@code /}. None without
 * Actuator, and none when the endpoints have a server of their own ({@code management.server.port})
 * or none at all: the edge of this server never sees them then.
 */
final class ManagementPaths {

  private static final String ACTUATOR =
      "org.springframework.boot.actuate.endpoint.web.PathMappedEndpoints";
  private static final String PORT_TYPE =
      "org.springframework.boot.actuate.autoconfigure.web.server.ManagementPortType";

  private ManagementPaths() {}

  /**
   * The roots, each after {@code prefix} (the DispatcherServlet's path in Spring MVC, {@code ""} in
   * WebFlux).
   */
  static List<String> of(ApplicationContext context, String prefix) {
    ClassLoader loader = context.getClassLoader();
    if (!ClassUtils.isPresent(ACTUATOR, loader) || !ClassUtils.isPresent(PORT_TYPE, loader)) {
      return List.of();
    }
    return Actuator.roots(context, prefix);
  }

  /** Loaded only when Actuator is on the class path. */
  private static final class Actuator {
    static List<String> roots(ApplicationContext context, String prefix) {
      if (ManagementPortType.get(context.getEnvironment()) != ManagementPortType.SAME) {
        return List.of();
      }
      PathMappedEndpoints endpoints =
          context.getBeanProvider(PathMappedEndpoints.class).getIfAvailable();
      if (endpoints == null) {
        return List.of();
      }
      String base = endpoints.getBasePath();
      Collection<String> roots = base.isEmpty() ? endpoints.getAllRootPaths() : List.of(base);
      return roots.stream().map(root -> prefix + root).toList();
    }
  }
}
