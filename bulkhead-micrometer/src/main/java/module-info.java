/**
 * Micrometer meters for Bulkhead compartments: {@link io.bulkhead.micrometer.BulkheadMetrics}, and
 * {@link io.bulkhead.micrometer.ResourceMetrics} for the resource behind one.
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // micrometer-core has no module-info yet
module io.bulkhead.micrometer {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires transitive micrometer.core;

  exports io.bulkhead.micrometer;
}
