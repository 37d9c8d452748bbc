/**
 * Per-workload database connection pools that draw on one budget per database.
 *
 * <p>{@link io.bulkhead.jdbc.DatabasePools} opens one HikariCP pool per workload ("checkout",
 * "reports"), each behind a compartment ({@link io.bulkhead.Bulkhead}) whose limit is the pool's
 * size, so a full pool turns a caller away at once or after a short wait with {@link
 * io.bulkhead.BulkheadFullException} instead of queueing it behind a slow workload. The pools'
 * sizes must fit one {@link io.bulkhead.Budget}, checked at start-up against what the PostgreSQL
 * server really allows ({@link io.bulkhead.jdbc.ServerLimit}). Each pool is a plain {@link
 * javax.sql.DataSource} ({@link io.bulkhead.jdbc.WorkloadPool}) and reports its numbers as {@link
 * io.bulkhead.jdbc.PoolStats}.
 */
@NullMarked
package io.bulkhead.jdbc;

import org.jspecify.annotations.NullMarked;
