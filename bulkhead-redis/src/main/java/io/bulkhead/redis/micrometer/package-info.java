/**
 * Micrometer meters for what a fleet compartment adds to a compartment: {@link
 * io.bulkhead.redis.micrometer.FleetMetrics}. Needs {@code micrometer-core}, an optional dependency
 * of {@code bulkhead-redis}; nothing else in the module refers to Micrometer.
 */
@NullMarked
package io.bulkhead.redis.micrometer;

import org.jspecify.annotations.NullMarked;
