package io.bulkhead;

import io.bulkhead.internal.CompartmentThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.concurrent.Executor;

/**
 * Builds a {@link Bulkhead}. Obtain one from {@link Bulkhead#builder(String)}.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm")
 *     .limit(10)                          // calls in flight
 *     .maxQueue(20)                       // callers that may wait
 *     .maxWait(Duration.ofSeconds(1))     // how long one may wait
 *     .build();
 * }</pre>
 *
 * <p>Each setter checks its own argument and throws {@link IllegalArgumentException} naming the
 * field and the value; {@link #build()} checks the combination and names the conflict. {@code
 * build()} copies the settings, so a builder can be changed and reused without touching
 * compartments already built.
 *
 * <p>Defaults: those of {@link QueueSettings#DEFAULT} (no queue: a full compartment rejects at
 * once; a queue needs a {@code maxWait}) and the system ticker. The limit has no default: a
 * compartment's size is a decision, not something to inherit.
 *
 * <p>This class is <em>not</em> thread-safe.
 */
public final class BulkheadBuilder {

  private final String name;
  private int limit; // 0 until set
  private QueueSettings queue = QueueSettings.DEFAULT;
  private final List<BulkheadListener> listeners = new ArrayList<>();
  private Ticker ticker = Ticker.system();
  private Scheduler scheduler; // null: the shared timer
  private Executor executor; // null: the compartment's own threads
  private Budget budget;
  private AdaptiveLimit adaptive; // null: a static limit

  BulkheadBuilder(String name) {
    Objects.requireNonNull(name, "name");
    if (name.isBlank()) {
      throw new IllegalArgumentException("name must not be blank but was '" + name + "'");
    }
    this.name = name;
  }

  /**
   * Sets how many calls may be in flight at once.
   *
   * @throws IllegalArgumentException if {@code limit} is less than 1
   */
  public BulkheadBuilder limit(int limit) {
    if (limit < 1) {
      throw new IllegalArgumentException("limit must be at least 1 but was " + limit);
    }
    this.limit = limit;
    return this;
  }

  /**
   * Sets how many callers may wait for a slot when all are taken. {@code 0} (the default) rejects
   * at once. A waiting caller holds no slot, but a synchronous one holds its thread: keep the queue
   * short.
   *
   * @throws IllegalArgumentException if {@code maxQueue} is negative or above {@link
   *     QueueSettings#MAX_QUEUE}, the most waiters one compartment counts
   */
  public BulkheadBuilder maxQueue(int maxQueue) {
    this.queue = queue.withMaxQueue(maxQueue);
    return this;
  }

  /**
   * Lets any number of callers wait. Rarely what you want in front of a slow dependency (a long
   * queue turns fast rejections back into slow ones), but right for a server-wide cap that must
   * never turn a request away. In practice the count of waiters stops at 16,777,215 (1.5 GB of
   * asynchronous waiters); a caller beyond that is rejected with {@link
   * BulkheadFullException.Reason#QUEUE_FULL}.
   */
  public BulkheadBuilder unboundedQueue() {
    this.queue = queue.withUnboundedQueue();
    return this;
  }

  /**
   * Sets how long one caller may wait for a slot before it is rejected with {@link
   * BulkheadFullException.Reason#WAIT_TIMEOUT}. Keep it well under your callers' own timeouts.
   *
   * @throws NullPointerException if {@code maxWait} is null
   * @throws IllegalArgumentException if {@code maxWait} is negative, or too long to count in
   *     nanoseconds (use {@link #unboundedWait()} to wait without a limit)
   */
  public BulkheadBuilder maxWait(Duration maxWait) {
    this.queue = queue.withMaxWait(maxWait);
    return this;
  }

  /** Lets a waiter wait until a slot is handed to it. No timer is armed for such a waiter. */
  public BulkheadBuilder unboundedWait() {
    this.queue = queue.withUnboundedWait();
    return this;
  }

  /** Replaces {@code maxQueue} and {@code maxWait} with {@code queue}'s. */
  public BulkheadBuilder queue(QueueSettings queue) {
    this.queue = Objects.requireNonNull(queue, "queue");
    return this;
  }

  /** Adds a listener for this compartment's events; see {@link BulkheadListener}. */
  public BulkheadBuilder listener(BulkheadListener listener) {
    listeners.add(Objects.requireNonNull(listener, "listener"));
    return this;
  }

  /** Replaces the source of time, for tests; the default is {@link Ticker#system()}. */
  public BulkheadBuilder ticker(Ticker ticker) {
    this.ticker = Objects.requireNonNull(ticker, "ticker");
    return this;
  }

  /**
   * Makes the compartment draw its limit from {@code budget}: {@link #build()} fails if the limits
   * of the budget's compartments would add up to more than its capacity, and so does a later {@link
   * Bulkhead#setLimit(int)} that would.
   */
  public BulkheadBuilder budget(Budget budget) {
    this.budget = Objects.requireNonNull(budget, "budget");
    return this;
  }

  /**
   * Lets the limit move within {@code adaptive}'s range, decided by its controller from the
   * admitted latency, the calls in flight and the refusals of each interval (measured on the
   * builder's ticker). {@link #limit(int)} is the starting limit and must lie in the range. Every
   * promise of a static limit holds while it moves. In a budget, {@code min} is reserved for good
   * and the limit grows only into capacity nobody else holds; see {@link Budget}.
   */
  public BulkheadBuilder adaptive(AdaptiveLimit adaptive) {
    this.adaptive = Objects.requireNonNull(adaptive, "adaptive");
    return this;
  }

  BulkheadBuilder scheduler(Scheduler scheduler) {
    this.scheduler = Objects.requireNonNull(scheduler, "scheduler");
    return this;
  }

  /**
   * Replaces where the compartment runs the user code no caller's thread is there for (see {@link
   * CompartmentThreads}), for tests. The executor must never run a task on the thread that calls
   * {@code execute} unless that thread is the test's own: the timer hands it work.
   */
  BulkheadBuilder executor(Executor executor) {
    this.executor = Objects.requireNonNull(executor, "executor");
    return this;
  }

  /**
   * Returns a new compartment with these settings.
   *
   * @throws IllegalArgumentException if the limit was not set, if callers may queue but {@code
   *     maxWait} is zero (see {@link QueueSettings#check}), or if the budget has no room for the
   *     limit
   */
  public Bulkhead build() {
    if (limit == 0) {
      throw new IllegalArgumentException(
          "limit was not set for bulkhead '"
              + name
              + "': call limit(int) with how many calls may be in flight at once");
    }
    if (adaptive != null && (limit < adaptive.min() || limit > adaptive.max())) {
      throw new IllegalArgumentException(
          "limit of bulkhead '"
              + name
              + "' must lie within its adaptive range ["
              + adaptive.min()
              + ", "
              + adaptive.max()
              + "] but was "
              + limit);
    }
    BulkheadConfig config = new BulkheadConfig(name, limit, queue.check("bulkhead '" + name + "'"));
    Scheduler timer = scheduler != null ? scheduler : SharedTimer.INSTANCE;
    Executor own = executor != null ? executor : CompartmentThreads.forCompartment(name);
    return new DefaultBulkhead(
        config, listeners.toArray(new BulkheadListener[0]), ticker, timer, own, budget, adaptive);
  }
}
