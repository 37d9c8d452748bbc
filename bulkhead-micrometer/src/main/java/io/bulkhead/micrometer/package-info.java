/**
 * Micrometer meters for compartments: {@link io.bulkhead.micrometer.BulkheadMetrics} binds one
 * compartment, or every compartment of a registry as it is added and removed.
 */
@NullMarked
package io.bulkhead.micrometer;

import org.jspecify.annotations.NullMarked;
