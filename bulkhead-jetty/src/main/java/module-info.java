/**
 * Bulkhead at the HTTP edge: {@link io.bulkhead.jetty.BulkheadHandler}, a Jetty 12 handler that
 * puts routes into compartments and answers a full one with {@code 503} and {@code Retry-After}.
 */
module io.bulkhead.jetty {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  // Jetty is the application's: the handler is a Jetty Handler, so whoever uses it runs a Jetty
  // server
  // already, and the Maven scope is provided, so this module never brings a Jetty (or its version)
  // of
  // its own. Not static: the handler cannot load without Jetty, so a missing Jetty must fail at
  // start-up, not at the first request. Transitive only for readability, not for the jar: the API
  // takes and extends Jetty types (Handler, Request, Response, Callback), so a module that uses it
  // must read Jetty too, and javac flags an exported API whose types its users could not read.
  requires transitive org.eclipse.jetty.server;

  exports io.bulkhead.jetty;
}
