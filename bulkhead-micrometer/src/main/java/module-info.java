/**
 * Micrometer meters for Bulkhead compartments: {@link io.bulkhead.micrometer.BulkheadMetrics}.
 */
@SuppressWarnings({"requires-automatic", "requires-transitive-automatic"}) // micrometer-core has no module-info yet
module io.bulkhead.micrometer {
  requires static org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive micrometer.core;

  exports io.bulkhead.micrometer;
}
