/**
 * Compartments for gRPC.
 *
 * <p>{@link io.bulkhead.grpc.BulkheadServerInterceptor} puts the calls a server receives into
 * compartments, by service or by method; {@link io.bulkhead.grpc.BulkheadClientInterceptor} puts
 * the calls a client makes through a channel. Both wait for a slot without holding a thread, and
 * both refuse with {@code UNAVAILABLE} and the retry hint in the {@code grpc-retry-pushback-ms}
 * trailer.
 */
@NullMarked
package io.bulkhead.grpc;

import org.jspecify.annotations.NullMarked;
