/**
 * Bulkhead at the edge of a Jakarta Servlet 6 container (Tomcat 11, Jetty 12 ee10, any other):
 * {@link io.bulkhead.servlet.BulkheadFilter} puts routes into compartments, waits for a slot
 * without holding a container thread, and answers a full compartment with {@code 503} and {@code
 * Retry-After}.
 */
module io.bulkhead.servlet {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.edge; // RouteTable and RejectionBody are in this module's API
  // Not `requires static`: BulkheadFilter implements jakarta.servlet.Filter, so the Servlet API is
  // part of this module's API. The container provides it (Maven scope provided); never shipped.
  requires transitive jakarta.servlet;

  exports io.bulkhead.servlet;
}
