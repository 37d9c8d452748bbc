package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.httpclient.BaseUrl;
import java.net.URI;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;

/**
 * Finds the compartment an outgoing request enters; shared by the {@code RestClient} interceptor
 * and the {@code WebClient} filter, so both route a URL the same way.
 */
@FunctionalInterface
interface UpstreamRouter {

  /** The compartment of a request to {@code uri}; null when the request is not guarded. */
  io.bulkhead.@Nullable Bulkhead route(URI uri);

  /**
   * Routes to the compartment whose {@code upstream} matches the request, the longest base path
   * first; a request no upstream matches is not guarded. The compartment is looked up in {@code
   * registry} at each request, so one replaced there is the one used.
   */
  static UpstreamRouter byUpstream(
      BulkheadRegistry registry, List<CompartmentFactory.UpstreamRoute> routes) {
    List<CompartmentFactory.UpstreamRoute> byPathLength =
        routes.stream()
            .sorted(
                Comparator.comparing(
                    CompartmentFactory.UpstreamRoute::upstream, BaseUrl.MOST_SPECIFIC_FIRST))
            .toList();
    return uri -> {
      for (CompartmentFactory.UpstreamRoute route : byPathLength) {
        if (route.upstream().matches(uri)) {
          return registry.bulkhead(route.compartment()).orElse(null);
        }
      }
      return null;
    };
  }
}
