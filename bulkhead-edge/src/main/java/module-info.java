/**
 * What every HTTP edge of Bulkhead shares, without a framework: {@link io.bulkhead.edge.RouteTable}
 * (which compartment a path goes through), {@link io.bulkhead.edge.RejectionBody} (what a full
 * compartment's {@code 503} says) and {@link io.bulkhead.edge.HttpRejection} (the {@code 503} with
 * its {@code Retry-After}, as bytes). The Jetty, Servlet and Spring edges write it with their own
 * types.
 *
 * <p>The package is public API, not an export to the adapters only: an application passes the same
 * route table and body to whichever edge it runs, and an edge for another server (Netty, Vert.x,
 * Helidon) is a short file on top of it. {@code io.bulkhead.edge.internal} is what the Jetty and
 * Servlet edges share in their implementation, exported to them only.
 */
module io.bulkhead.edge {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;

  exports io.bulkhead.edge;
  // What the edges share in their implementation (submitting a request); not an API.
  exports io.bulkhead.edge.internal to
      io.bulkhead.jetty,
      io.bulkhead.servlet;
}
