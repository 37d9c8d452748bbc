package io.bulkhead.jdbc.micrometer;

import io.bulkhead.internal.MeterBindings;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolStats;
import io.bulkhead.jdbc.WorkloadPool;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.binder.MeterBinder;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.function.ToIntFunction;

/**
 * Micrometer gauges for the connection pools of one {@link DatabasePools}: the connections each
 * workload's HikariCP pool has handed out, has idle and has open, and the threads waiting inside it
 * for one (the constants below; docs/operations.md has the Prometheus names).
 *
 * <pre>{@code
 * BulkheadRegistry registry = BulkheadRegistry.create();
 * DatabasePools db = DatabasePools.builder("orders")...registry(registry).open();
 * BulkheadMetrics.of(registry).bindTo(meterRegistry);   // each pool's compartment
 * DatabasePoolMetrics.of(db).bindTo(meterRegistry);     // each pool's connections
 * }</pre>
 *
 * <p>Every pool gauge carries the tag {@code name} with the pool's qualified name ({@code
 * orders.checkout}), the name of the compartment in front of it, and {@value #BUDGET_TAG} with the
 * database's name, its budget's: {@code bulkhead_pool_connections_active / bulkhead_limit} is how
 * full a pool is. Per database, tagged {@value #BUDGET_TAG} only, {@value #BUDGET_CAPACITY},
 * {@value #BUDGET_ALLOCATED} and, when the server's limit was read, {@value
 * #DATABASE_MAX_CONNECTIONS} let a monitoring system add up every replica against one server. The
 * open connections are not called "total": Prometheus keeps {@code _total} for counters.
 *
 * <p>Each gauge reads {@link WorkloadPool#stats()} when the registry polls it, free on the
 * connection path; a closed pool reads zero. Close this binder when you close the pools, to remove
 * its gauges, and before binding pools that reuse the same qualified names (Micrometer knows a
 * meter by name and tags only). The pools' compartments are bound by {@code BulkheadMetrics} from a
 * registry given to {@link DatabasePools.Builder#registry}.
 *
 * <p>This class needs {@code micrometer-core}, an optional dependency of {@code bulkhead-jdbc}. It
 * is thread-safe.
 */
public final class DatabasePoolMetrics implements MeterBinder, AutoCloseable {

  /** Gauge: connections handed out and not yet returned. */
  public static final String CONNECTIONS_ACTIVE = "bulkhead.pool.connections.active";

  /** Gauge: open connections ready to be handed out. */
  public static final String CONNECTIONS_IDLE = "bulkhead.pool.connections.idle";

  /** Gauge: open connections, active and idle. */
  public static final String CONNECTIONS_OPEN = "bulkhead.pool.connections.open";

  /**
   * Gauge: threads inside HikariCP waiting for a connection (its {@code
   * threadsAwaitingConnection}).
   */
  public static final String THREADS_AWAITING = "bulkhead.pool.threads.awaiting";

  /** Gauge per database: the connections this process's pools may hold together. */
  public static final String BUDGET_CAPACITY = "bulkhead.budget.capacity";

  /** Gauge per database: the sum of this process's pool limits drawn from that budget. */
  public static final String BUDGET_ALLOCATED = "bulkhead.budget.allocated";

  /** Gauge per database: the server's {@code max_connections}, when it was read at start-up. */
  public static final String DATABASE_MAX_CONNECTIONS = "bulkhead.database.max.connections";

  /** The tag carrying the database's name, which is also its budget's name. */
  public static final String BUDGET_TAG = "budget";

  private final DatabasePools pools;
  private final MeterBindings<MeterRegistry, Meter> bindings;

  private DatabasePoolMetrics(DatabasePools pools) {
    this.pools = pools;
    this.bindings =
        new MeterBindings<>(
            "DatabasePoolMetrics of database '" + pools.name() + "'", MeterRegistry::remove);
  }

  /** Gauges for every pool of {@code pools}. */
  public static DatabasePoolMetrics of(DatabasePools pools) {
    return new DatabasePoolMetrics(Objects.requireNonNull(pools, "pools"));
  }

  /**
   * Registers the gauges in {@code meterRegistry}. May be called for several registries.
   *
   * @throws IllegalStateException if this binder was closed
   */
  @Override
  public void bindTo(MeterRegistry meterRegistry) {
    bindings.bind(meterRegistry, this::register);
  }

  private List<Meter> register(MeterRegistry meterRegistry) {
    List<Meter> meters = new ArrayList<>();
    meters.add(
        budgetGauge(
            meterRegistry,
            BUDGET_CAPACITY,
            p -> p.budget().capacity(),
            "Connections this process's pools may hold together"));
    meters.add(
        budgetGauge(
            meterRegistry,
            BUDGET_ALLOCATED,
            p -> p.budget().allocated(),
            "The sum of this process's pool limits on the database"));
    pools
        .serverLimit()
        .ifPresent(
            limit ->
                meters.add(
                    budgetGauge(
                        meterRegistry,
                        DATABASE_MAX_CONNECTIONS,
                        p -> limit.maxConnections(),
                        "The database server's max_connections, read at start-up")));
    for (WorkloadPool pool : pools.pools()) {
      meters.add(
          gauge(
              meterRegistry,
              pool,
              CONNECTIONS_ACTIVE,
              PoolStats::active,
              "Connections handed out and not yet returned"));
      meters.add(
          gauge(
              meterRegistry,
              pool,
              CONNECTIONS_IDLE,
              PoolStats::idle,
              "Open connections ready to be handed out"));
      meters.add(
          gauge(
              meterRegistry,
              pool,
              CONNECTIONS_OPEN,
              PoolStats::total,
              "Open connections, active and idle"));
      meters.add(
          gauge(
              meterRegistry,
              pool,
              THREADS_AWAITING,
              PoolStats::waiting,
              "Threads inside the pool waiting for a connection"));
    }
    return meters;
  }

  /** Removes every gauge this binder registered; a later {@link #bindTo} is refused. Idempotent. */
  @Override
  public void close() {
    bindings.close();
  }

  private Gauge gauge(
      MeterRegistry registry,
      WorkloadPool pool,
      String name,
      ToIntFunction<PoolStats> figure,
      String description) {
    return Gauge.builder(name, pool, p -> figure.applyAsInt(p.stats()))
        .description(description)
        .tag(MeterBindings.NAME_TAG, pool.qualifiedName())
        .tag(BUDGET_TAG, pools.name())
        .strongReference(true)
        .register(registry);
  }

  private Gauge budgetGauge(
      MeterRegistry registry,
      String name,
      ToIntFunction<DatabasePools> figure,
      String description) {
    return Gauge.builder(name, pools, figure::applyAsInt)
        .description(description)
        .tag(BUDGET_TAG, pools.name())
        .strongReference(true)
        .register(registry);
  }

  @Override
  public String toString() {
    return "DatabasePoolMetrics{" + pools.name() + "}";
  }
}
