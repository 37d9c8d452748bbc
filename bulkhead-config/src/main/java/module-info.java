/**
 * Bulkhead configuration: budgets and compartments from a YAML file, sized with Little's law, and the
 * logic of the {@code check} and {@code size} commands.
 */
module io.bulkhead.config {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires org.snakeyaml.engine;

  exports io.bulkhead.config;
}
