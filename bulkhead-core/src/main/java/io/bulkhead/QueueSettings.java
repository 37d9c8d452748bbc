package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * How many callers may wait for a slot, and for how long: the queue settings every builder takes
 * ({@link BulkheadBuilder}, {@link WorkerPoolBuilder}, the database pools' and the fleet's), with
 * one validation and one set of defaults.
 *
 * <pre>{@code
 * QueueSettings.DEFAULT                                        // no queue: reject at once
 * QueueSettings.DEFAULT.withMaxQueue(20).withMaxWait(Duration.ofMillis(250))
 * QueueSettings.DEFAULT.withUnboundedQueue().withUnboundedWait()  // a server-wide cap
 * }</pre>
 *
 * <p>"Unbounded" is a word, never a number: an empty {@link #maxQueue()} lets any number of callers
 * wait (in practice up to {@link #MAX_QUEUE}, the most one compartment counts), an empty {@link
 * #maxWait()} lets a waiter wait until it is handed a slot. A {@code maxWait} of zero means nobody
 * waits.
 *
 * <p>Defaults ({@link #DEFAULT}): {@code maxQueue} 0 and {@code maxWait} 0, so a full compartment
 * rejects at once. A queue needs a wait: {@link #check(String)} refuses settings that let callers
 * queue with a {@code maxWait} of zero, because each of them would be rejected the moment it
 * queued. The constructor checks each value on its own and throws {@link IllegalArgumentException}
 * naming the field and the value; {@code check} checks the combination. Immutable.
 *
 * @param maxQueue how many callers may wait for a slot; empty when unbounded, {@code 0} to reject
 *     at once
 * @param maxWait how long one caller may wait for a slot; empty when unbounded, zero when nobody
 *     waits
 */
public record QueueSettings(OptionalInt maxQueue, Optional<Duration> maxWait) {

  /** The longest queue that is not unbounded: 16,777,215, the most waiters a compartment counts. */
  public static final int MAX_QUEUE = DefaultBulkhead.MAX_WAITING;

  /** No queue: a full compartment rejects at once. What every builder starts from. */
  public static final QueueSettings DEFAULT =
      new QueueSettings(OptionalInt.of(0), Optional.of(Duration.ZERO));

  /**
   * Checks each value on its own.
   *
   * @throws IllegalArgumentException if {@code maxQueue} is negative or above {@link #MAX_QUEUE},
   *     or {@code maxWait} is negative or too long to count in nanoseconds
   */
  public QueueSettings {
    Objects.requireNonNull(maxQueue, "maxQueue");
    Objects.requireNonNull(maxWait, "maxWait");
    if (maxQueue.isPresent()) {
      int n = maxQueue.getAsInt();
      if (n < 0) {
        throw new IllegalArgumentException("maxQueue must not be negative but was " + n);
      }
      if (n > MAX_QUEUE) {
        throw new IllegalArgumentException(
            "maxQueue must be at most "
                + MAX_QUEUE
                + " (the most waiters one compartment counts) but was "
                + n
                + "; use an unbounded queue (unboundedQueue(), max-queue: unbounded) for no bound"
                + " of your own");
      }
    }
    if (maxWait.isPresent()) {
      Duration d = maxWait.get();
      if (d.isNegative()) {
        throw new IllegalArgumentException("maxWait must not be negative but was " + d);
      }
      if (Durations.exceedsNanos(d)) {
        throw new IllegalArgumentException(
            "maxWait "
                + d
                + " is longer than the 292 years a nanosecond deadline can hold; use an unbounded"
                + " wait (unboundedWait(), max-wait: unbounded) to wait without a limit");
      }
    }
  }

  /**
   * These settings with at most {@code maxQueue} callers waiting; {@code 0} rejects at once.
   *
   * @throws IllegalArgumentException if {@code maxQueue} is negative or above {@link #MAX_QUEUE}
   */
  public QueueSettings withMaxQueue(int maxQueue) {
    return new QueueSettings(OptionalInt.of(maxQueue), maxWait);
  }

  /** These settings with any number of callers waiting. */
  public QueueSettings withUnboundedQueue() {
    return new QueueSettings(OptionalInt.empty(), maxWait);
  }

  /**
   * These settings with each caller waiting at most {@code maxWait}.
   *
   * @throws NullPointerException if {@code maxWait} is null
   * @throws IllegalArgumentException if {@code maxWait} is negative or too long to count in
   *     nanoseconds
   */
  public QueueSettings withMaxWait(Duration maxWait) {
    return new QueueSettings(maxQueue, Optional.of(Objects.requireNonNull(maxWait, "maxWait")));
  }

  /** These settings with each waiter waiting until it is handed a slot (no timer is armed). */
  public QueueSettings withUnboundedWait() {
    return new QueueSettings(maxQueue, Optional.empty());
  }

  /**
   * Settings that carry queue settings: a compartment's ({@link BulkheadConfig}), a database pool's
   * and a configuration file's compartment. Their {@code maxQueue()} and {@code maxWait()} are
   * those of their {@link #queue()}, read here once.
   */
  public interface Holder {

    /** {@link #maxQueue()} and {@link #maxWait()} together, as the builders take them. */
    QueueSettings queue();

    /**
     * How many callers may wait for a slot ({@code max-queue}); empty when unbounded, {@code 0}
     * rejects at once.
     */
    default OptionalInt maxQueue() {
      return queue().maxQueue();
    }

    /**
     * How long one caller may wait for a slot ({@code max-wait}); empty when it may wait until it
     * is handed one, zero when nobody waits.
     */
    default Optional<Duration> maxWait() {
      return queue().maxWait();
    }
  }

  /** Whether any caller may wait: {@code maxQueue} is unbounded or above zero. */
  public boolean mayQueue() {
    return maxQueue.isEmpty() || maxQueue.getAsInt() > 0;
  }

  /**
   * Checks the combination for the compartment {@code owner} names ({@code "bulkhead 'llm'"}, say).
   *
   * @return these settings
   * @throws IllegalArgumentException if callers may queue but {@code maxWait} is zero
   */
  public QueueSettings check(String owner) {
    Objects.requireNonNull(owner, "owner");
    if (mayQueue() && maxWait.isPresent() && maxWait.get().isZero()) {
      throw new IllegalArgumentException(
          owner
              + " lets "
              + (maxQueue.isPresent() ? maxQueue.getAsInt() + " callers" : "any number of callers")
              + " wait but its maxWait is 0, so each would be rejected the moment it queued: set"
              + " maxWait above zero or unbounded, or maxQueue to 0 to reject at once");
    }
    return this;
  }

  @Override
  public String toString() {
    return "QueueSettings{maxQueue="
        + (maxQueue.isPresent() ? Integer.toString(maxQueue.getAsInt()) : "unbounded")
        + ", maxWait="
        + maxWait.map(Duration::toString).orElse("unbounded")
        + "}";
  }
}
