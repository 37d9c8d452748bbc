/**
 * Bulkhead for outgoing HTTP: {@link io.bulkhead.httpclient.UpstreamClient}, a per-dependency
 * client over {@code java.net.http} whose compartment caps the connections it opens; and what every
 * client edge shares ({@link io.bulkhead.httpclient.UpstreamRoutes}, {@link
 * io.bulkhead.httpclient.RetryAfter}, the typed refusal and busy answer). Core and the JDK only.
 */
module io.bulkhead.httpclient {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive java.net.http; // calls take and return java.net.http requests and responses

  exports io.bulkhead.httpclient;
}
