/**
 * Bulkhead for outgoing HTTP: {@link io.bulkhead.httpclient.UpstreamClient}, a per-dependency
 * client over {@code java.net.http} whose compartment caps the connections it opens. Core and the
 * JDK only.
 */
module io.bulkhead.httpclient {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive java.net.http; // calls take and return java.net.http requests and responses

  exports io.bulkhead.httpclient;
}
