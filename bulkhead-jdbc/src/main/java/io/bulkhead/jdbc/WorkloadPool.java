package io.bulkhead.jdbc;

import com.zaxxer.hikari.HikariConfigMXBean;
import com.zaxxer.hikari.HikariDataSource;
import com.zaxxer.hikari.HikariPoolMXBean;
import com.zaxxer.hikari.pool.HikariPool;
import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.ForwardingCompartment;
import io.bulkhead.Permit;
import java.io.PrintWriter;
import java.sql.Connection;
import java.sql.SQLException;
import java.sql.SQLFeatureNotSupportedException;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.locks.ReentrantLock;
import java.util.logging.Logger;
import javax.sql.DataSource;
import org.jspecify.annotations.Nullable;

/**
 * One workload's connection pool: a {@link DataSource} whose connections come from its own HikariCP
 * pool, behind a compartment that bounds how many callers wait for one and for how long.
 *
 * <p>{@link #getConnection()} first takes a slot of the compartment ({@link #compartment()}), whose
 * limit is the pool's size. If every connection is in use and the queue is full, or the caller
 * waited {@link PoolConfig#maxWait()}, it throws {@link BulkheadFullException} at once, without
 * joining HikariCP's wait line. An admitted caller then takes a connection from HikariCP, which has
 * one ready for it unless it is opening or replacing connections (bounded by {@link
 * PoolConfig#connectionTimeout()}).
 *
 * <p>The slot is held until the connection is closed, and given back exactly once: when the
 * connection is closed (again and again, from any thread), aborted, or when HikariCP throws before
 * handing one over. Close the connection you were given (try-with-resources). A statement's {@code
 * getConnection()} returns that same connection; the connection that a {@code ResultSet}'s
 * statement reports is HikariCP's, so do not close that one.
 *
 * <p>The size changes through the compartment: {@code compartment().setLimit(n)}, or the same call
 * on the compartment found in a {@link io.bulkhead.BulkheadRegistry}, resizes HikariCP with it.
 *
 * <p>Instances come from {@link DatabasePools}, which opens and closes them. This class is
 * thread-safe.
 */
/*
 * Resizing
 * --------
 * Two limits must agree: the gate's (callers admitted) and HikariCP's maximumPoolSize (connections it
 * may open; minimumIdle equals it, the pool is fixed). Invariant S1: whenever the gate admits a
 * caller, HikariCP may open a connection for it, i.e. gate limit <= HikariCP's size, except for the
 * callers already in flight when a shrink began, which keep their connections (S2: a resize never
 * takes a connection from a caller). PoolCompartment.setLimit keeps S1 by ordering the writes:
 *   grow   HikariCP max, then minIdle (min <= max throughout), then gate.setLimit (the budget check)
 *   shrink gate.setLimit, then HikariCP minIdle, then max, then retireSurplus
 * A fixed pool would keep its surplus until maxLifetime, so retireSurplus(size) evicts the idle
 * connections above the size at once and sets `surplus` to those still in use: each of them is
 * evicted, not returned, when its caller closes it (S2). Only the surplus goes (S3): the other
 * connections keep their server backends, and since HikariCP's total stays at or above its size
 * until the last surplus connection is gone, it opens none meanwhile, so the server never counts
 * more connections for this pool than before the shrink. (softEvictConnections, used before,
 * marked every connection: all were replaced, and a replacement opening while an old backend was
 * still closing let the server count more than the old size.) An idle connection is evicted by
 * borrowing it from HikariCP with a short timeout (an owner's eviction closes it at once); one a
 * caller takes first is retired when returned instead.
 *
 * Races, as interleavings
 *   Z1 two setLimit calls. T1 grows to 6 while T2 shrinks to 2: unserialised, T2 could lower HikariCP
 *      after T1 raised it and before T1 raised the gate, leaving gate 6 over HikariCP 2. `resizing`
 *      (a lock of the view) serialises them; under it run only the gate's setLimit (whose granted
 *      waiters are threads parked in getConnection: it unparks them, it runs no user code) and
 *      HikariCP's setters. No listener is called by either.
 *   Z2 budget refusal vs growth. The budget may refuse the gate after HikariCP was raised. Before
 *      touching HikariCP the view checks the budget's room, so a refusal seen there changes nothing.
 *      Another compartment of the same budget can take the room between that check and the gate's
 *      own (T1 checks room for 2 more, T2 grows `checkout` by 2, T1's gate is refused): T1 then sets
 *      HikariCP back (minIdle, then max). If HikariCP's housekeeping or a returned connection ran its
 *      fill in that window it may have opened connections beyond the old size; T1 soft-evicts them
 *      when it sees more than the old size open. One still being opened at that moment is closed at
 *      its maxLifetime at the latest. The other way round (the check sees no room, another
 *      compartment frees some before the gate's check, and the gate grows) the gate leads HikariCP by
 *      the few instructions until HikariCP is raised too; a caller admitted in them waits for its
 *      connection inside HikariCP, bounded by connectionTimeout.
 *   Z3 getConnection vs shrink. T1 is admitted under limit 4 while T2 shrinks to 2: T1 gets its
 *      connection (HikariCP's size drops only after the gate's, and a busy connection is evicted
 *      only when returned); the gate admits no one else until fewer than 2 are in flight.
 *   Z4 setLimit vs close. Under `resizing`, setLimit reads `closed` and close sets it, so a resize
 *      never reaches a HikariCP pool that close has begun to shut.
 *   Z5 a connection returned while retireSurplus counts. T1 (shrinking) reads HikariCP's total and
 *      sets `surplus`; T2 closes a connection in between and takes a unit of the previous `surplus`
 *      (it was due to go). T1's count may include it or not: at worst one connection too many is
 *      retired (HikariCP's fill opens a replacement after the old one is closed, so the server
 *      still never counts more) or one surplus stays until its maxLifetime. A connection HikariCP
 *      was opening when the size dropped is added after the count: it too stays until maxLifetime.
 */
public final class WorkloadPool implements DataSource {

  private final PoolConfig config;
  private final String qualifiedName;
  private final Bulkhead gate; // admits getConnection(); never handed out, so only we resize it
  private final HikariDataSource hikari;
  private final PoolCompartment compartment = new PoolCompartment();

  /** How long a shrink waits for an idle connection it saw to be its to evict. */
  private static final long IDLE_BORROW_MILLIS = 50;

  /** Connections in use beyond the size, to be evicted rather than returned (see Resizing). */
  private final AtomicInteger surplus = new AtomicInteger();

  WorkloadPool(PoolConfig config, String qualifiedName, Bulkhead gate, HikariDataSource hikari) {
    this.config = config;
    this.qualifiedName = qualifiedName;
    this.gate = gate;
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
   * The pool as a compartment, the one {@link DatabasePools} registers: its name, settings, numbers
   * and listeners are the pool's, and {@link Compartment#setLimit} resizes the HikariCP pool with
   * the compartment, checked against the database's budget:
   *
   * <pre>{@code
   * registry.find("orders.reports").orElseThrow().setLimit(6); // 6 connections, HikariCP too
   * }</pre>
   *
   * <p>Growing raises HikariCP's size first and the compartment's limit after it, so no caller is
   * admitted for a connection the pool may not open; HikariCP opens the new connections when they
   * are first needed or at its next housekeeping run (a caller admitted meanwhile waits for one, up
   * to {@link PoolConfig#connectionTimeout()}). Shrinking lowers the limit first: connections in
   * use are not taken from their callers, and no one is admitted until fewer than the new limit are
   * in use. Then HikariCP is lowered and only the surplus leaves: idle connections above the new
   * size at once, ones in use when they are closed. The others keep their server sessions, and no
   * connection is opened while the surplus leaves.
   *
   * <p>{@code setLimit} throws {@link IllegalArgumentException} for a size below 1 or one the
   * budget has no room for, and {@link IllegalStateException} once the pools are closed; the
   * compartment and HikariCP are then as they were. The view has no admission methods: connections
   * come only from {@link #getConnection()}. Events reach listeners added through it with this view
   * as their compartment.
   */
  public Compartment compartment() {
    return compartment;
  }

  /** A snapshot of the pool's and the compartment's numbers. */
  public PoolStats stats() {
    HikariPoolMXBean pool = hikari.getHikariPoolMXBean();
    if (pool == null || hikari.isClosed()) {
      BulkheadStats compartment = gate.stats();
      return new PoolStats(config.name(), compartment.limit(), 0, 0, 0, 0, compartment);
    }
    BulkheadStats compartment = gate.stats();
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
   * @throws BulkheadFullException if every connection is in use and the caller cannot wait, or
   *     waited {@code maxWait}, or was interrupted while it waited; no connection was taken
   * @throws SQLException if HikariCP could not hand over a connection within {@link
   *     PoolConfig#connectionTimeout()} (the server is unreachable or refuses connections), or the
   *     pool is closed
   */
  @Override
  public Connection getConnection() throws SQLException {
    Permit permit = gate.acquire();
    try {
      Connection connection = hikari.getConnection();
      return PermitConnection.wrap(connection, permit, hikari, qualifiedName, this::retireOne);
    } catch (Throwable t) {
      permit.close();
      throw t;
    }
  }

  /** Not supported: every connection of a pool uses the credentials the pool was opened with. */
  @Override
  public Connection getConnection(@Nullable String username, @Nullable String password)
      throws SQLException {
    throw new SQLFeatureNotSupportedException(
        "pool '"
            + qualifiedName
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
    compartment.resizing.lock();
    try {
      compartment.closed = true;
    } finally {
      compartment.resizing.unlock();
    }
    hikari.close();
  }

  /** Whether the connection being closed is surplus of a shrink: if so it is counted out here. */
  private boolean retireOne() {
    return surplus.getAndUpdate(n -> n > 0 ? n - 1 : 0) > 0;
  }

  /**
   * Evicts the idle connections above {@code size} and marks those still in use for eviction when
   * they are returned (see Resizing); under {@code resizing}.
   */
  private void retireSurplus(int size) {
    HikariPoolMXBean bean = hikari.getHikariPoolMXBean();
    if (!(bean instanceof HikariPool)) {
      return; // closed
    }
    HikariPool pool = (HikariPool) bean;
    surplus.set(0);
    while (pool.getTotalConnections() > size && pool.getIdleConnections() > 0) {
      Connection idle;
      try {
        idle = pool.getConnection(IDLE_BORROW_MILLIS);
      } catch (SQLException takenMeanwhile) {
        break; // callers took the idle ones: they are retired as they come back
      }
      hikari.evictConnection(idle); // closes it at once: it is ours
      try {
        idle.close();
      } catch (SQLException closing) {
        // Already evicted: nothing goes back to the pool.
      }
    }
    surplus.set(Math.max(0, pool.getTotalConnections() - size));
  }

  /** HikariCP's settings, for tests that check that the pool follows the compartment. */
  HikariConfigMXBean hikariSettings() {
    return hikari.getHikariConfigMXBean();
  }

  /** The pool seen as a compartment; see the resizing comment at the top. */
  private final class PoolCompartment extends ForwardingCompartment {

    final ReentrantLock resizing = new ReentrantLock();
    boolean closed; // guarded by resizing
    // Listeners added through the view, each wrapped so that events name the view (guarded by
    // resizing for add/remove; the gate reads its own copy).
    private final List<ViewListener> listeners = new ArrayList<>();

    @Override
    protected Compartment delegate() {
      return gate;
    }

    @Override
    public String name() {
      return qualifiedName;
    }

    @Override
    public void setLimit(int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException(
            "limit of pool '" + qualifiedName + "' must be at least 1 but was " + limit);
      }
      resizing.lock();
      try {
        if (closed) {
          throw new IllegalStateException(
              "pool '" + qualifiedName + "' is closed; its limit cannot" + " change");
        }
        int before = gate.config().limit();
        if (limit > before) {
          grow(before, limit);
        } else if (limit < before) {
          shrink(limit);
        }
      } finally {
        resizing.unlock();
      }
    }

    private void grow(int before, int limit) {
      if (!budgetHasRoom(limit)) {
        gate.setLimit(limit); // the budget refuses it with its arithmetic; nothing has changed
        // ...unless room appeared since the check (Z2): the gate has grown, so HikariCP follows.
      }
      HikariConfigMXBean settings = hikari.getHikariConfigMXBean();
      settings.setMaximumPoolSize(limit);
      settings.setMinimumIdle(limit);
      try {
        gate.setLimit(limit);
      } catch (RuntimeException refused) {
        settings.setMinimumIdle(before); // Z2: another compartment took the room meanwhile
        settings.setMaximumPoolSize(before);
        retireSurplus(before);
        throw refused;
      }
      retireSurplus(limit); // a shrink's surplus still in use need not go any more
    }

    private void shrink(int limit) {
      gate.setLimit(limit);
      HikariConfigMXBean settings = hikari.getHikariConfigMXBean();
      settings.setMinimumIdle(limit);
      settings.setMaximumPoolSize(limit);
      retireSurplus(limit);
    }

    /** Whether the budget, as it stands, leaves room for this compartment to hold {@code limit}. */
    private boolean budgetHasRoom(int limit) {
      Optional<Budget> budget = gate.budget();
      if (budget.isEmpty()) {
        return true;
      }
      long others = 0;
      for (Map.Entry<String, Integer> share : budget.get().shares().entrySet()) {
        if (!share.getKey().equals(qualifiedName)) {
          others += share.getValue();
        }
      }
      return others + limit <= budget.get().capacity();
    }

    @Override
    public void addListener(BulkheadListener listener) {
      Objects.requireNonNull(listener, "listener");
      ViewListener wrapped = new ViewListener(listener);
      resizing.lock();
      try {
        listeners.add(wrapped);
        gate.addListener(wrapped);
      } finally {
        resizing.unlock();
      }
    }

    @Override
    public boolean removeListener(BulkheadListener listener) {
      resizing.lock();
      try {
        for (Iterator<ViewListener> it = listeners.iterator(); it.hasNext(); ) {
          ViewListener wrapped = it.next();
          if (wrapped.delegate == listener) {
            it.remove();
            return gate.removeListener(wrapped);
          }
        }
        return false;
      } finally {
        resizing.unlock();
      }
    }

    @Override
    public String toString() {
      return WorkloadPool.this.toString();
    }

    /** Passes the gate's events on, naming this view as their compartment. */
    private final class ViewListener implements BulkheadListener {

      final BulkheadListener delegate;

      ViewListener(BulkheadListener delegate) {
        this.delegate = delegate;
      }

      @Override
      public void onAdmitted(Compartment bulkhead, long waitedNanos) {
        delegate.onAdmitted(PoolCompartment.this, waitedNanos);
      }

      @Override
      public void onQueued(Compartment bulkhead) {
        delegate.onQueued(PoolCompartment.this);
      }

      @Override
      public void onRejected(Compartment bulkhead, BulkheadFullException.Reason reason) {
        delegate.onRejected(PoolCompartment.this, reason);
      }

      @Override
      public void onCancelled(Compartment bulkhead, long waitedNanos) {
        delegate.onCancelled(PoolCompartment.this, waitedNanos);
      }

      @Override
      public void onReleased(Compartment bulkhead, long heldNanos) {
        delegate.onReleased(PoolCompartment.this, heldNanos);
      }

      @Override
      public String toString() {
        return delegate.toString();
      }
    }
  }

  @Override
  public String toString() {
    return "WorkloadPool{" + qualifiedName + ", limit=" + gate.config().limit() + "}";
  }
}
