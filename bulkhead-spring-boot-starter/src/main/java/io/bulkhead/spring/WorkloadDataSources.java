package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.DatabaseSpec;
import io.bulkhead.config.PoolSpec;
import io.bulkhead.internal.Urls;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolConfig;
import io.bulkhead.jdbc.WorkloadPool;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;
import java.util.function.Supplier;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.apache.commons.logging.Log;
import org.apache.commons.logging.LogFactory;
import org.jspecify.annotations.Nullable;

/*
 * Algorithm. The settings are checked and turned into a DatabasePools.Builder when the bean is made
 * (a wrong value stops start-up). start() opens the pools once; if the database does not answer, it
 * warns once and leaves them closed, and the first getConnection() on any of the database's
 * DataSources opens them, under the lock, then hands out a connection. While the database stays
 * down, each getConnection() tries once more and throws the SQLException saying why.
 *
 * Invariants. `pools` is null or the one open DatabasePools; it is written only under `lock`, and
 * once set it changes only to closed (close()). Builder.open() runs only under `lock` (the builder is
 * not thread-safe), so at most one opening is under way and a failed one leaves nothing open
 * (DatabasePools.open() closes what it opened).
 *
 * Races.
 *  - Two first callers at once: both see pools == null, both take the lock; the second finds pools set
 *    and uses it. Nothing opens twice.
 *  - close() (context shutdown) while a caller opens: close() takes the lock, so it either closes the
 *    pools the caller opened or runs first and sets `closed`, after which open() refuses.
 */

/**
 * The pools of one {@code bulkhead.datasources.<name>} database, opened at start-up if the database
 * answers and at first use otherwise, and one {@link DataSource} per workload over them.
 */
final class WorkloadDataSources implements AutoCloseable {

  private static final Log LOG = LogFactory.getLog(WorkloadDataSources.class);
  private static final String DATASOURCES = BulkheadProperties.PREFIX + ".datasources.";

  private final String name;
  private final String prefix;
  private final DatabaseSpec settings;
  private final DatabasePools.Builder builder;
  private final ReentrantLock lock = new ReentrantLock();
  private volatile @Nullable DatabasePools pools; // written under lock
  private boolean closed; // guarded by lock

  /**
   * Prepares the pools of {@code settings}, a database the settings model has checked.
   *
   * @throws BulkheadConfigurationException for the first setting bulkhead-jdbc refuses
   */
  WorkloadDataSources(DatabaseSpec settings, BulkheadRegistry registry) {
    this.name = settings.name();
    this.prefix = DATASOURCES + name + ".";
    this.settings = settings;
    this.builder = builder(registry);
  }

  private DatabasePools.Builder builder(BulkheadRegistry registry) {
    DatabasePools.Builder b = check(prefix + "name", name, () -> DatabasePools.builder(name));
    String url = settings.url();
    check(prefix + "url", Urls.masked(url), () -> b.jdbcUrl(url)); // named without its password
    settings.username().ifPresent(b::username);
    settings.password().ifPresent(b::password);
    int reserve = settings.reserve();
    check(prefix + "reserve", reserve, () -> b.reserve(reserve));
    if (settings.capacity().isPresent()) {
      int capacity = settings.capacity().getAsInt();
      check(prefix + "capacity", capacity, () -> b.capacity(capacity));
    }
    settings.pools().forEach(pool -> b.pool(poolConfig(pool)));
    return b.registry(registry);
  }

  private PoolConfig poolConfig(PoolSpec pool) {
    String poolPrefix = prefix + "pools." + pool.name() + ".";
    PoolConfig.Builder b =
        check(poolPrefix + "name", pool.name(), () -> PoolConfig.builder(pool.name()));
    check(poolPrefix + "limit", pool.limit(), () -> b.limit(pool.limit()));
    check(poolPrefix + "max-queue", pool.queue(), () -> b.queue(pool.queue()));
    pool.connectionTimeout()
        .ifPresent(
            timeout ->
                check(
                    poolPrefix + "connection-timeout",
                    timeout,
                    () -> b.connectionTimeout(timeout)));
    return check(poolPrefix + "max-wait", pool.queue(), b::build);
  }

  /**
   * Opens the pools if the database answers. One that does not is not a reason to stop the service
   * (its other work may not need the database): this warns, and the pools open at first use.
   *
   * @throws BulkheadConfigurationException if the database answers and the pools do not fit in what
   *     it allows
   */
  void start() {
    try {
      pools();
    } catch (SQLException e) {
      LOG.warn(
          "The service starts without its database: "
              + e.getMessage()
              + " (the pools open, and are checked against the server's limit, when a DataSource of "
              + prefix
              + "pools is first used)");
    }
  }

  /**
   * The open pools, opening them first if need be.
   *
   * @throws SQLException if the database cannot be reached or refuses the pools' connections
   * @throws BulkheadConfigurationException if the pools do not fit in what the server allows
   */
  DatabasePools pools() throws SQLException {
    DatabasePools open = pools;
    if (open != null) {
      return open;
    }
    lock.lock();
    try {
      if (pools == null) {
        if (closed) {
          throw new SQLException("the pools of database '" + name + "' are closed");
        }
        pools = openPools();
      }
      return pools;
    } finally {
      lock.unlock();
    }
  }

  private DatabasePools openPools() throws SQLException {
    try {
      return builder.open();
    } catch (SQLException e) {
      throw new SQLException(
          "the pools of "
              + prefix.substring(0, prefix.length() - 1)
              + " could not open: "
              + e.getMessage(),
          e.getSQLState(),
          e);
    } catch (IllegalArgumentException e) {
      throw refused(e);
    }
  }

  /** What the server's limit refused, with the setting to change. */
  private BulkheadConfigurationException refused(IllegalArgumentException e) {
    // The builder's method names, in the words of this configuration.
    String message =
        e.getMessage()
            .replace("reserve(int)", prefix + "reserve")
            .replace("capacity(int)", prefix + "capacity");
    if (message.startsWith("pools of database")) {
      Map<String, Integer> limits = new LinkedHashMap<>();
      settings.pools().forEach(pool -> limits.put(pool.name(), pool.limit()));
      return BulkheadConfigurationException.property(prefix + "pools", limits, message);
    }
    if (message.startsWith("the server of database")) {
      return BulkheadConfigurationException.property(
          prefix + "reserve", settings.reserve(), message);
    }
    if (settings.capacity().isEmpty()) {
      return BulkheadConfigurationException.missing(prefix + "capacity", message);
    }
    return BulkheadConfigurationException.property(
        prefix + "capacity", settings.capacity().getAsInt(), message);
  }

  /** A DataSource for {@code workload}'s pool. */
  DataSource dataSource(String workload) {
    return new Workload(workload);
  }

  @Override
  public void close() {
    lock.lock();
    try {
      closed = true;
      DatabasePools open = pools;
      if (open != null) {
        open.close();
      }
    } finally {
      lock.unlock();
    }
  }

  @Override
  public String toString() {
    DatabasePools open = pools;
    return open != null ? open.toString() : "DatabasePools{" + name + ", not open yet}";
  }

  /** Runs a bulkhead-jdbc factory or check, naming {@code key} and {@code value} if it refuses. */
  private static <T> T check(String key, @Nullable Object value, Supplier<T> factory) {
    try {
      return factory.get();
    } catch (IllegalArgumentException e) {
      throw BulkheadConfigurationException.property(key, value, e.getMessage());
    }
  }

  /**
   * One workload's DataSource: a connection comes from its {@link WorkloadPool}, through the pool's
   * compartment (a pool with all its connections in use refuses with {@link
   * io.bulkhead.BulkheadFullException}, or after max-wait).
   */
  private final class Workload implements DataSource {
    private final String workload;

    Workload(String workload) {
      this.workload = workload;
    }

    private WorkloadPool pool() throws SQLException {
      try {
        return pools().pool(workload);
      } catch (BulkheadConfigurationException e) {
        // The database answered only now, and its limit refuses the pools: too late to stop
        // start-up.
        throw new SQLException(e.getMessage(), e);
      }
    }

    @Override
    public Connection getConnection() throws SQLException {
      return pool().getConnection();
    }

    @Override
    public Connection getConnection(String username, String password) throws SQLException {
      return pool().getConnection(username, password);
    }

    @Override
    public @Nullable PrintWriter getLogWriter() throws SQLException {
      return pool().getLogWriter();
    }

    @Override
    public void setLogWriter(@Nullable PrintWriter out) throws SQLException {
      pool().setLogWriter(out);
    }

    @Override
    public void setLoginTimeout(int seconds) throws SQLException {
      pool().setLoginTimeout(seconds);
    }

    @Override
    public int getLoginTimeout() throws SQLException {
      return pool().getLoginTimeout();
    }

    @Override
    public Logger getParentLogger() throws SQLFeatureNotSupportedException {
      throw new SQLFeatureNotSupportedException(
          "pool '" + name + "." + workload + "' does not log through java.util.logging");
    }

    @Override
    public <T> T unwrap(Class<T> iface) throws SQLException {
      if (iface.isInstance(this)) {
        return iface.cast(this);
      }
      return pool().unwrap(iface);
    }

    @Override
    public boolean isWrapperFor(Class<?> iface) throws SQLException {
      return iface.isInstance(this) || pool().isWrapperFor(iface);
    }

    @Override
    public String toString() {
      return "DataSource " + name + "." + workload + " of " + WorkloadDataSources.this;
    }
  }
}
