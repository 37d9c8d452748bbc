/**
 * Compartments at the HTTP edge: {@link io.bulkhead.http.BulkheadHandler}, a Jetty handler that puts
 * routes into compartments and answers a full one with {@code 503} and {@code Retry-After}, and
 * {@link io.bulkhead.http.UpstreamClient}, a per-dependency {@code java.net.http} client whose
 * compartment caps its connections.
 */
@NullMarked
package io.bulkhead.http;

import org.jspecify.annotations.NullMarked;
