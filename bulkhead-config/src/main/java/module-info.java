/**
 * Bulkhead configuration: budgets and compartments from a YAML file, validated and sized with
 * Little's law, and the one grammar of durations and rates that the file and command lines share.
 */
module io.bulkhead.config {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.insight; // BulkheadFile.advisor() is a SizingAdvisor
  requires org.snakeyaml.engine;

  exports io.bulkhead.config;
}
