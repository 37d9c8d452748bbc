/**
 * Bulkhead at the edge of a Jakarta Servlet 6 container (Tomcat 11, Jetty 12 ee10, any other):
 * {@link io.bulkhead.servlet.BulkheadFilter} puts routes into compartments, waits for a slot
 * without holding a container thread, and answers a full compartment with {@code 503} and {@code
 * Retry-After}.
 */
module io.bulkhead.servlet {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  // Not `requires static`: BulkheadFilter implements jakarta.servlet.Filter and RejectionBody takes
  // an
  // HttpServletResponse, so the API is part of this module's own API and must be readable wherever
  // the filter is. The container provides it at run time (the Maven scope is `provided`); this
  // module never ships a copy.
  requires transitive jakarta.servlet;

  exports io.bulkhead.servlet;
}
