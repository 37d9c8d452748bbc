/**
 * Bulkhead for JDBC: per-workload HikariCP pools that draw on one budget per database ({@link
 * io.bulkhead.jdbc.DatabasePools}), and their connection gauges for Micrometer ({@link
 * io.bulkhead.jdbc.micrometer.DatabasePoolMetrics}).
 *
 * <p>The JDBC driver is the application's: this module names none. Micrometer is optional ({@code
 * requires static}): only {@code io.bulkhead.jdbc.micrometer} uses it, and an application that
 * binds those gauges has Micrometer already.
 */
@SuppressWarnings({
  "requires-automatic",
  "requires-transitive-automatic"
}) // micrometer-core has no module-info yet
module io.bulkhead.jdbc {
  requires static transitive org.jspecify;
  requires transitive io.bulkhead.core;
  requires transitive java.sql; // WorkloadPool is a DataSource
  requires transitive com.zaxxer
      .hikari; // DatabasePools.Builder.hikari takes a HikariConfig customizer
  requires static transitive micrometer.core; // DatabasePoolMetrics is a MeterBinder

  exports io.bulkhead.jdbc;
  exports io.bulkhead.jdbc.micrometer;
}
