/**
 * Micrometer meters for Bulkhead compartments: {@link io.bulkhead.micrometer.BulkheadMetrics}, and
 * {@link io.bulkhead.micrometer.ResourceMetrics} for the resource behind one; {@link
 * io.bulkhead.micrometer.BulkheadTracing}, queue time in Micrometer Tracing's spans.
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // micrometer-core has no module-info yet
module io.bulkhead.micrometer {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.insight; // ResourceMetrics takes a ResourceView
  requires transitive micrometer.core;
  requires static transitive micrometer.tracing; // BulkheadTracing only: the application's tracing

  exports io.bulkhead.micrometer;
}
