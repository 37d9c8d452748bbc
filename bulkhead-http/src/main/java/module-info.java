/**
 * Bulkhead at the HTTP edge: {@link io.bulkhead.http.BulkheadHandler}, a Jetty 12 handler that puts
 * routes into compartments and answers a full one with {@code 503} and {@code Retry-After}, and
 * {@link io.bulkhead.http.UpstreamClient}, a per-dependency client over {@code java.net.http} whose
 * compartment caps the connections it opens.
 */
module io.bulkhead.http {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires transitive org.eclipse.jetty.server;
  requires transitive java.net.http;

  exports io.bulkhead.http;
}
