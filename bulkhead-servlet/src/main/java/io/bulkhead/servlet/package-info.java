/**
 * Compartments at the edge of any Jakarta Servlet 6 container: {@link
 * io.bulkhead.servlet.BulkheadFilter} puts routes into compartments, waits for a slot without
 * holding a container thread, and answers a full compartment with {@code 503} and {@code
 * Retry-After}.
 */
@NullMarked
package io.bulkhead.servlet;

import org.jspecify.annotations.NullMarked;
