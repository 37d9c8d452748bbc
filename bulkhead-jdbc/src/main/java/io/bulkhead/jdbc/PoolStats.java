package io.bulkhead.jdbc;

import io.bulkhead.BulkheadStats;

/**
 * A snapshot of one workload pool: HikariCP's connection counts next to the compartment in front of
 * it. The numbers to watch are {@link #active()} against {@link #limit()}, {@link #queued()},
 * {@link #waiting()} and {@link #rejected()}; a pool that regularly has callers queued is too small
 * for its traffic, and one that rejects is protecting the others.
 *
 * <p>The numbers are read one after another while connections come and go, so under load a snapshot
 * is a close approximation rather than a single instant. This class is immutable.
 */
public final class PoolStats {

  private final String name;
  private final int limit;
  private final int active;
  private final int idle;
  private final int total;
  private final int waiting;
  private final BulkheadStats bulkhead;

  PoolStats(
      String name,
      int limit,
      int active,
      int idle,
      int total,
      int waiting,
      BulkheadStats bulkhead) {
    this.name = name;
    this.limit = limit;
    this.active = active;
    this.idle = idle;
    this.total = total;
    this.waiting = waiting;
    this.bulkhead = bulkhead;
  }

  /** The workload's name. */
  public String name() {
    return name;
  }

  /**
   * The pool's limit: how many connections it may hold (HikariCP's {@code maximumPoolSize}), after
   * any resize.
   */
  public int limit() {
    return limit;
  }

  /** Connections handed out and not yet returned. */
  public int active() {
    return active;
  }

  /** Open connections ready to be handed out. */
  public int idle() {
    return idle;
  }

  /**
   * Open connections, active and idle; below {@link #limit()} while HikariCP opens or replaces
   * some.
   */
  public int total() {
    return total;
  }

  /**
   * Threads inside HikariCP waiting for a connection (its {@code threadsAwaitingConnection}; the
   * {@code waitingCount} of a node-postgres pool). The compartment admits no more callers than the
   * pool has connections, so this stays at zero unless HikariCP is opening or replacing
   * connections, for example because the server went away. Callers held back by the compartment are
   * {@link #queued()}.
   */
  public int waiting() {
    return waiting;
  }

  /** Callers waiting in the compartment's queue for a connection. */
  public int queued() {
    return bulkhead.waiting();
  }

  /** Calls turned away by the compartment so far, for any reason; see {@link #bulkhead()}. */
  public long rejected() {
    return bulkhead.rejected();
  }

  /** The compartment's own snapshot: admitted, rejected by reason, latency of held connections. */
  public BulkheadStats bulkhead() {
    return bulkhead;
  }

  @Override
  public String toString() {
    return "PoolStats{name="
        + name
        + ", active="
        + active
        + "/"
        + limit
        + ", idle="
        + idle
        + ", total="
        + total
        + ", waiting="
        + waiting
        + ", queued="
        + queued()
        + ", rejected="
        + rejected()
        + "}";
  }
}
