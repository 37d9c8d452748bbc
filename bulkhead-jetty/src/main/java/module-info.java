/**
 * Bulkhead at the HTTP edge: {@link io.bulkhead.jetty.BulkheadHandler}, a Jetty 12 handler that
 * puts routes into compartments and answers a full one with {@code 503} and {@code Retry-After}.
 */
module io.bulkhead.jetty {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.edge; // RouteTable and RejectionBody are in this module's API
  // Jetty is the application's (Maven scope provided): whoever uses a Jetty Handler runs a Jetty
  // server already. Not static: the handler cannot load without Jetty, so a missing Jetty fails at
  // start-up, not at the first request. Transitive because the API takes and extends Jetty types.
  requires transitive org.eclipse.jetty.server;

  exports io.bulkhead.jetty;
}
