/**
 * Micrometer meters for compartments: {@link io.bulkhead.micrometer.BulkheadMetrics} binds one
 * compartment, or every compartment of a registry as it is added and removed; {@link
 * io.bulkhead.micrometer.ResourceMetrics} adds gauges for the resource behind a compartment (a
 * connection pool, a worker process) from a {@link io.bulkhead.insight.ResourceView}.
 */
@NullMarked
package io.bulkhead.micrometer;

import org.jspecify.annotations.NullMarked;
