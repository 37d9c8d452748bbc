/**
 * Bulkhead configuration: budgets and compartments from a YAML file, sized with Little's law, and the
 * logic of the {@code check} and {@code size} commands.
 */
module io.bulkhead.config {
  requires static org.jspecify;
  requires transitive io.bulkhead.core;
  requires org.snakeyaml.engine;

  exports io.bulkhead.config;
}
