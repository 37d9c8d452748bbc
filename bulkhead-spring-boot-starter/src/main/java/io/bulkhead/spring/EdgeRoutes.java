package io.bulkhead.spring;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;

/** Finds the compartment of a {@code paths} route in the registry the web edge enforces it with. */
final class EdgeRoutes {

  private EdgeRoutes() {}

  /**
   * The compartment {@code route} sends requests into.
   *
   * @throws BulkheadConfigurationException if the registry (an application's own bean) has no such
   *     compartment, or only a view that admits no calls
   */
  static Bulkhead compartment(BulkheadRegistry registry, EdgePath.Route route) {
    String name = route.compartment();
    return registry
        .bulkhead(name)
        .orElseThrow(
            () ->
                BulkheadConfigurationException.property(
                    BulkheadProperties.PREFIX + ".compartments." + name + ".paths",
                    route.path().pattern(),
                    "the BulkheadRegistry bean has no compartment '"
                        + name
                        + "' that admits calls"));
  }
}
