/**
 * Micrometer gauges for per-workload connection pools: {@link
 * io.bulkhead.jdbc.micrometer.DatabasePoolMetrics}. Needs {@code micrometer-core}, an optional
 * dependency of {@code bulkhead-jdbc}; nothing else in the module refers to Micrometer.
 */
@NullMarked
package io.bulkhead.jdbc.micrometer;

import org.jspecify.annotations.NullMarked;
