package io.bulkhead.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Permit;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * One workload's connection pool: a {@link DataSource} whose connections come from its own HikariCP
 * pool, behind a compartment that bounds how many callers wait for one and for how long.
 *
 * <p>{@link #getConnection()} first takes a slot of the compartment ({@link #bulkhead()}), whose limit
 * is the pool's size. If every connection is in use and the queue is full, or the caller waited
 * {@link PoolConfig#maxWait()}, it throws {@link BulkheadFullException} at once, without joining
 * HikariCP's wait line. An admitted caller then takes a connection from HikariCP, which has one ready
 * for it unless it is opening or replacing connections (bounded by
 * {@link PoolConfig#connectionTimeout()}).
 *
 * <p>The slot is held until the connection is closed, and given back exactly once: when the
 * connection is closed (again and again, from any thread), aborted, or when HikariCP throws before
 * handing one over. Close the connection you were given (try-with-resources). A statement's
 * {@code getConnection()} returns that same connection; the connection that a {@code ResultSet}'s
 * statement reports is HikariCP's, so do not close that one.
 *
 * <p>Instances come from {@link DatabasePools}, which opens and closes them. This class is
 * thread-safe.
 */
public final class WorkloadPool implements DataSource {

  private final PoolConfig config;
  private final String qualifiedName;
  private final Bulkhead bulkhead;
  private final HikariDataSource hikari;

  WorkloadPool(PoolConfig config, String qualifiedName, Bulkhead bulkhead, HikariDataSource hikari) {
    this.config = config;
    this.qualifiedName = qualifiedName;
    this.bulkhead = bulkhead;
    this.hikari = hikari;
  }

  /** The workload's name, as in its {@link PoolConfig}. */
  public String name() {
    return config.name();
  }

  /**
   * The name of the compartment, of the HikariCP pool and (on PostgreSQL) of every connection's
   * {@code application_name}: {@code database.workload}, e.g. {@code orders.checkout}.
   */
  public String qualifiedName() {
    return qualifiedName;
  }

  /** The settings the pool was opened with. */
  public PoolConfig config() {
    return config;
  }

  /**
   * The compartment in front of the pool: add listeners to it, or read its stats. To change how many
   * connections the workload may hold, call {@link #resize(int)}, which changes the compartment and
   * the pool together; the compartment's own {@code setLimit} leaves the pool's size as it was.
   */
  public Bulkhead bulkhead() {
    return bulkhead;
  }

  /**
   * Changes how many connections the workload may hold, checked against the database's budget.
   * Growing admits more callers at once; HikariCP opens the new connections when they are first
   * needed or at its next housekeeping run (a caller admitted meanwhile waits for one, up to
   * {@link PoolConfig#connectionTimeout()}).
   * Shrinking admits fewer at once, and the pool's connections are replaced by the new number: idle
   * ones at once, ones in use when they are closed.
   *
   * @throws IllegalArgumentException if {@code size} is less than 1 or the budget has no room for it;
   *     nothing changes then
   */
  public void resize(int size) {
    int before = bulkhead.config().limit();
    bulkhead.setLimit(size); // checks the budget first, and throws before anything changes
    hikari.getHikariConfigMXBean().setMaximumPoolSize(size);
    hikari.getHikariConfigMXBean().setMinimumIdle(size);
    if (size < before) {
      // HikariCP keeps a fixed pool's surplus connections open until their maxLifetime; they would
      // still count against the server. Evict them all (idle ones now, busy ones when they come
      // back) and let HikariCP reopen the new size.
      hikari.getHikariPoolMXBean().softEvictConnections();
    }
  }

  /** A snapshot of the pool's and the compartment's numbers. */
  public PoolStats stats() {
    HikariPoolMXBean pool = hikari.getHikariPoolMXBean();
    if (pool == null || hikari.isClosed()) {
      BulkheadStats compartment = bulkhead.stats();
      return new PoolStats(config.name(), compartment.limit(), 0, 0, 0, 0, compartment);
    }
    BulkheadStats compartment = bulkhead.stats();
    return new PoolStats(
        config.name(),
        compartment.limit(),
        pool.getActiveConnections(),
        pool.getIdleConnections(),
        pool.getTotalConnections(),
        pool.getThreadsAwaitingConnection(),
        compartment);
  }

  /**
   * Takes a connection, waiting for one at most {@link PoolConfig#maxWait()} when all are in use.
   *
   * @throws BulkheadFullException if every connection is in use and the caller cannot wait, or waited
   *     {@code maxWait}, or was interrupted while it waited; no connection was taken
   * @throws SQLException if HikariCP could not hand over a connection within
   *     {@link PoolConfig#connectionTimeout()} (the server is unreachable or refuses connections), or
   *     the pool is closed
   */
  @Override
  public Connection getConnection() throws SQLException {
    Permit permit = bulkhead.acquire();
    try {
      Connection connection = hikari.getConnection();
      return PermitConnection.wrap(connection, permit, hikari, qualifiedName);
    } catch (Throwable t) {
      permit.close();
      throw t;
    }
  }

  /** Not supported: every connection of a pool uses the credentials the pool was opened with. */
  @Override
  public Connection getConnection(@Nullable String username, @Nullable String password)
      throws SQLException {
    throw new SQLFeatureNotSupportedException("pool '" + qualifiedName
        + "' opens every connection with the credentials given to DatabasePools; call getConnection()");
  }

  @Override
  public @Nullable PrintWriter getLogWriter() throws SQLException {
    return hikari.getLogWriter();
  }

  @Override
  public void setLogWriter(@Nullable PrintWriter out) throws SQLException {
    hikari.setLogWriter(out);
  }

  @Override
  public void setLoginTimeout(int seconds) throws SQLException {
    hikari.setLoginTimeout(seconds);
  }

  @Override
  public int getLoginTimeout() throws SQLException {
    return hikari.getLoginTimeout();
  }

  @Override
  public Logger getParentLogger() throws SQLFeatureNotSupportedException {
    return hikari.getParentLogger();
  }

  /**
   * Returns this pool if it is a {@code iface}. The HikariCP pool behind it is not handed out: its
   * connections would bypass the compartment.
   */
  @Override
  public <T> T unwrap(Class<T> iface) throws SQLException {
    if (iface.isInstance(this)) {
      return iface.cast(this);
    }
    throw new SQLException("pool '" + qualifiedName + "' is not a wrapper for " + iface.getName());
  }

  @Override
  public boolean isWrapperFor(Class<?> iface) {
    return iface.isInstance(this);
  }

  void close() {
    hikari.close();
  }

  @Override
  public String toString() {
    return "WorkloadPool{" + qualifiedName + ", size=" + bulkhead.config().limit() + "}";
  }
}
