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
// io.bulkhead.config.internal (the file's YAML reader, its printing of values) is not exported:
// it is no API. The demo's deployment check, on the class path, reads manifests with it.
}
