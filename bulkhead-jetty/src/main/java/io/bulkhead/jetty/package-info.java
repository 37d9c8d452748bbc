/**
 * Compartments at the HTTP edge: {@link io.bulkhead.jetty.BulkheadHandler}, a Jetty handler that
 * puts routes into compartments and answers a full one with {@code 503} and {@code Retry-After}.
 */
@NullMarked
package io.bulkhead.jetty;

import org.jspecify.annotations.NullMarked;
