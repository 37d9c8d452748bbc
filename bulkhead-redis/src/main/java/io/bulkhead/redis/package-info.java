/**
 * Fleet-wide compartments: {@link io.bulkhead.redis.RedisCompartments} connects to Redis and builds
 * {@link io.bulkhead.redis.FleetBulkhead}s, ordinary {@link io.bulkhead.Bulkhead}s whose limit
 * holds across every process that builds a compartment of the same name on the same Redis.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}.
 */
@NullMarked
package io.bulkhead.redis;

import org.jspecify.annotations.NullMarked;
