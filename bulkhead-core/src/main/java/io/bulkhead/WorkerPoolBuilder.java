package io.bulkhead;

import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.ThreadFactory;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Builds a {@link WorkerPool}. Obtain one from {@link WorkerPool#builder(String)}.
 *
 * <pre>{@code
 * WorkerPool exports = WorkerPool.builder("exports")
 *     .limit(2)                   // jobs running at once
 *     .maxQueue(50)               // jobs that may wait for a worker ...
 *     .unboundedWait()            // ... for as long as it takes
 *     .virtualThreads()           // Java 21+; platform threads by default
 *     .budget(postgres)           // the workers draw on the same 10 connections as the rest
 *     .build();
 * }</pre>
 *
 * <p>Each setter checks its own argument and throws {@link IllegalArgumentException} naming the
 * field and the value. {@code build()} copies the settings, so a builder can be reused.
 *
 * <p>Defaults: those of {@link QueueSettings#DEFAULT} (no queue: a job that finds every worker busy
 * is rejected at once; a queue needs a {@link #maxWait}, or {@link #unboundedWait()} for jobs that
 * may start however late), platform threads, the system ticker. The limit has no default.
 *
 * <p>This class is <em>not</em> thread-safe.
 */
public final class WorkerPoolBuilder {

  private final String name;
  private int limit; // 0 until set
  private QueueSettings queue = QueueSettings.DEFAULT;
  private boolean virtual;
  private final List<BulkheadListener> listeners = new ArrayList<>();
  private Ticker ticker = Ticker.system();
  private Budget budget;

  WorkerPoolBuilder(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank but was '" + name + "'");
    }
    this.name = name;
  }

  /**
   * Sets how many jobs may run at once (the number of workers): the compartment's limit.
   *
   * @throws IllegalArgumentException if {@code limit} is less than 1
   */
  public WorkerPoolBuilder limit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1 but was " + limit);
    }
    this.limit = limit;
    return this;
  }

  /**
   * Sets how many jobs may wait for a worker. A job submitted when every worker is busy and the
   * queue is full is rejected at once with {@link BulkheadFullException}. A queued job holds no
   * thread. A queue needs a {@link #maxWait} or {@link #unboundedWait()}.
   *
   * @throws IllegalArgumentException if {@code maxQueue} is negative or above {@link
   *     QueueSettings#MAX_QUEUE}, the most waiters one compartment counts
   */
  public WorkerPoolBuilder maxQueue(int maxQueue) {
    this.queue = queue.withMaxQueue(maxQueue);
    return this;
  }

  /** Lets any number of jobs wait for a worker; see {@link BulkheadBuilder#unboundedQueue()}. */
  public WorkerPoolBuilder unboundedQueue() {
    this.queue = queue.withUnboundedQueue();
    return this;
  }

  /**
   * Sets how long a job may wait in the queue; one that waits longer is not run, and its future
   * fails with {@link BulkheadFullException.Reason#WAIT_TIMEOUT}.
   *
   * @throws IllegalArgumentException if {@code maxWait} is negative, or too long to count in
   *     nanoseconds (use {@link #unboundedWait()} to let queued jobs wait as long as it takes)
   */
  public WorkerPoolBuilder maxWait(Duration maxWait) {
    this.queue = queue.withMaxWait(maxWait);
    return this;
  }

  /** Lets a queued job wait until a worker takes it, however long that is. */
  public WorkerPoolBuilder unboundedWait() {
    this.queue = queue.withUnboundedWait();
    return this;
  }

  /** Replaces {@code maxQueue} and {@code maxWait} with {@code queue}'s. */
  public WorkerPoolBuilder queue(QueueSettings queue) {
    this.queue = Objects.requireNonNull(queue, "queue");
    return this;
  }

  /** Runs jobs on platform threads, reused between jobs (the default). */
  public WorkerPoolBuilder platformThreads() {
    this.virtual = false;
    return this;
  }

  /**
   * Runs each job on a new virtual thread. The limit still caps how many run at once, which is the
   * point: virtual threads are cheap, the database behind them is not.
   *
   * @throws UnsupportedOperationException on Java releases before 21, which have no virtual threads
   */
  public WorkerPoolBuilder virtualThreads() {
    if (!VirtualThreads.available()) {
      VirtualThreads.factory(name, "worker pool '" + name + "'"); // throws the explanation
    }
    this.virtual = true;
    return this;
  }

  /** Adds a listener for the pool's compartment events; see {@link BulkheadListener}. */
  public WorkerPoolBuilder listener(BulkheadListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /** Replaces the source of time for the pool's stats and queue deadlines, for tests. */
  public WorkerPoolBuilder ticker(Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /**
   * Makes the pool's workers draw on {@code budget}, like any compartment's limit: {@link #build()}
   * fails if the budget has no room for them. The share is returned when the pool has shut down and
   * its last job has ended.
   */
  public WorkerPoolBuilder budget(Budget budget) {
    this.budget = Objects.requireNonNull(budget, "budget");
    return this;
  }

  /**
   * Returns a new, running pool with these settings. Threads start as jobs arrive.
   *
   * @throws IllegalArgumentException if the limit was not set, if jobs may queue but {@code
   *     maxWait} is zero (see {@link QueueSettings#check}), or if the budget has no room for the
   *     limit
   */
  public WorkerPool build() {
    if (limit == 0) {
      throw new IllegalArgumentException(
          "limit was not set for worker pool '"
              + name
              + "': call limit(int) with how many jobs may run at once");
    }
    queue.check("worker pool '" + name + "'");
    BulkheadBuilder gate = Bulkhead.builder(name).limit(limit).queue(queue).ticker(ticker);
    listeners.forEach(gate::listener);
    if (budget != null) {
      gate.budget(budget);
    }
    ThreadFactory threads =
        virtual
            ? VirtualThreads.factory(name + "-worker-", "worker pool '" + name + "'")
            : platformThreads(name + "-worker-");
    return new WorkerPool((DefaultBulkhead) gate.build(), threads, virtual);
  }

  private static ThreadFactory platformThreads(String prefix) {
    AtomicLong count = new AtomicLong();
    return task -> {
      Thread thread = new Thread(task, prefix + count.incrementAndGet());
      // Not a daemon: a JVM whose main thread ends lets running jobs finish, and each one that ends
      // starts the next queued one, so the queue drains instead of vanishing at exit.
      thread.setDaemon(false);
      return thread;
    };
  }
}
