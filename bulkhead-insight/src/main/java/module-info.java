/**
 * Bulkhead insight: what state each running compartment is in, what limit its traffic needs, and a
 * JSON snapshot of both for an endpoint or a dashboard; see {@link io.bulkhead.insight.Insight}. It
 * reads compartments and changes none; it depends on {@code io.bulkhead.core} alone.
 */
module io.bulkhead.insight {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core; // the API takes and returns core's types

  exports io.bulkhead.insight;
}
