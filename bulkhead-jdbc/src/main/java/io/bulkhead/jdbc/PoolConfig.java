package io.bulkhead.jdbc;

import io.bulkhead.QueueSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * The immutable settings of one workload's pool: its limit (how many connections it holds), how
 * many callers may wait for one and for how long, and how long HikariCP may take to open one.
 *
 * <pre>{@code
 * PoolConfig checkout = PoolConfig.builder("checkout")
 *     .limit(6)                                  // connections, and calls holding one at once
 *     .maxQueue(40)                              // callers that may wait for a connection
 *     .maxWait(Duration.ofSeconds(1))            // how long one may wait
 *     .build();
 * PoolConfig reports = PoolConfig.builder("reports").limit(4).build();  // full: reject at once
 * }</pre>
 *
 * <p>Defaults: those of {@link QueueSettings#DEFAULT} (no queue: a full pool rejects at once; a
 * queue needs a {@code maxWait}) and a {@link #connectionTimeout()} of 5 seconds. The limit has no
 * default: how many connections a workload may hold is a decision.
 *
 * <p>This class is immutable and thread-safe.
 */
public final class PoolConfig implements QueueSettings.Holder {

  /**
   * The default {@link #connectionTimeout()}: a server that cannot open a connection in 5 s is
   * down.
   */
  public static final Duration DEFAULT_CONNECTION_TIMEOUT = Duration.ofSeconds(5);

  /** HikariCP refuses a connection timeout shorter than this. */
  static final Duration MIN_CONNECTION_TIMEOUT = Duration.ofMillis(250);

  private final String name;
  private final int limit;
  private final QueueSettings queue;
  private final Duration connectionTimeout;

  private PoolConfig(Builder b) {
    this.name = b.name;
    this.limit = b.limit;
    this.queue = b.queue;
    this.connectionTimeout = b.connectionTimeout;
  }

  /** Starts building the settings of the pool called {@code name} ("checkout", "reports"). */
  public static Builder builder(String name) {
    return new Builder(name);
  }

  /** The workload's name, unique within its {@link DatabasePools}. */
  public String name() {
    return name;
  }

  /**
   * The pool's limit: how many connections it holds, and so how many calls may hold one at once.
   */
  public int limit() {
    return limit;
  }

  /**
   * How many callers may wait for a connection, and how long ({@link #maxQueue()}, {@link
   * #maxWait()}).
   */
  @Override
  public QueueSettings queue() {
    return queue;
  }

  /**
   * How long an admitted caller may wait for HikariCP to hand over a connection (HikariCP's {@code
   * connectionTimeout}). The compartment admits at most {@link #limit()} callers, so HikariCP has
   * one for each of them unless it is opening or replacing connections: this bounds how long a
   * caller waits for a server that is slow to accept connections or gone.
   */
  public Duration connectionTimeout() {
    return connectionTimeout;
  }

  @Override
  public String toString() {
    return "PoolConfig{name="
        + name
        + ", limit="
        + limit
        + ", maxQueue="
        + (queue.maxQueue().isPresent() ? queue.maxQueue().getAsInt() : "unbounded")
        + ", maxWait="
        + queue.maxWait().map(Duration::toString).orElse("unbounded")
        + ", connectionTimeout="
        + connectionTimeout
        + "}";
  }

  /**
   * Builds a {@link PoolConfig}. Each setter checks its own argument and throws {@link
   * IllegalArgumentException} naming the field and the value; {@link #build()} checks the
   * combination. {@code build()} copies, so a builder can be reused.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private final String name;
    private int limit; // 0 until set
    private QueueSettings queue = QueueSettings.DEFAULT;
    private Duration connectionTimeout = DEFAULT_CONNECTION_TIMEOUT;

    private Builder(String name) {
      Objects.requireNonNull(name, "name");
      if (name.isBlank()) {
        throw new IllegalArgumentException("pool name must not be blank but was '" + name + "'");
      }
      this.name = name;
    }

    /**
     * Sets the pool's limit: how many connections it holds (HikariCP's {@code maximumPoolSize}, and
     * the limit of the compartment in front of it). The pool opens them all at start-up and keeps
     * them open.
     *
     * @throws IllegalArgumentException if {@code limit} is less than 1
     */
    public Builder limit(int limit) {
      if (limit < 1) {
        throw new IllegalArgumentException(
            "limit of pool '" + name + "' must be at least 1 but was " + limit);
      }
      this.limit = limit;
      return this;
    }

    /**
     * Sets how many callers may wait for a connection when all are in use. {@code 0} (the default)
     * rejects at once. A waiting caller holds its thread: keep the queue short.
     *
     * @throws IllegalArgumentException if {@code maxQueue} is negative or above {@link
     *     QueueSettings#MAX_QUEUE}
     */
    public Builder maxQueue(int maxQueue) {
      this.queue = queue.withMaxQueue(maxQueue);
      return this;
    }

    /**
     * Lets any number of callers wait, as a plain connection pool does. This is how one shared pool
     * turns a slow workload into everybody's outage; it exists to show that, and for pools that
     * must never turn a caller away.
     */
    public Builder unboundedQueue() {
      this.queue = queue.withUnboundedQueue();
      return this;
    }

    /**
     * Sets how long one caller may wait for a connection before it is rejected with {@code
     * BulkheadFullException} (reason {@code WAIT_TIMEOUT}).
     *
     * @throws IllegalArgumentException if {@code maxWait} is negative or too long to count in
     *     nanoseconds
     */
    public Builder maxWait(Duration maxWait) {
      this.queue = queue.withMaxWait(maxWait);
      return this;
    }

    /** Lets a waiting caller wait until a connection is handed to it. */
    public Builder unboundedWait() {
      this.queue = queue.withUnboundedWait();
      return this;
    }

    /** Replaces {@code maxQueue} and {@code maxWait} with {@code queue}'s. */
    public Builder queue(QueueSettings queue) {
      this.queue = Objects.requireNonNull(queue, "queue");
      return this;
    }

    /**
     * Sets HikariCP's {@code connectionTimeout} for this pool; see {@link
     * PoolConfig#connectionTimeout()}.
     *
     * @throws IllegalArgumentException if shorter than 250 ms, HikariCP's floor
     */
    public Builder connectionTimeout(Duration connectionTimeout) {
      Objects.requireNonNull(connectionTimeout, "connectionTimeout");
      if (connectionTimeout.compareTo(MIN_CONNECTION_TIMEOUT) < 0) {
        throw new IllegalArgumentException(
            "connectionTimeout of pool '"
                + name
                + "' must be at least 250ms (HikariCP's floor) but was "
                + connectionTimeout);
      }
      this.connectionTimeout = connectionTimeout;
      return this;
    }

    /**
     * Returns the settings.
     *
     * @throws IllegalArgumentException if the limit was not set, or callers may queue but {@code
     *     maxWait} is zero (see {@link QueueSettings#check})
     */
    public PoolConfig build() {
      if (limit == 0) {
        throw new IllegalArgumentException(
            "limit of pool '"
                + name
                + "' was not set: call limit(int) with how many connections the workload may hold");
      }
      queue.check("pool '" + name + "'");
      return new PoolConfig(this);
    }
  }
}
