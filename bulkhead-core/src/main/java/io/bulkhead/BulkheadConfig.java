package io.bulkhead;

import java.time.Duration;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import org.jspecify.annotations.Nullable;

/**
 * The immutable settings of one compartment: its name, how many calls may be in flight, how many
 * may wait, and for how long.
 *
 * <p>"Unbounded" is said with an empty {@link OptionalInt} or {@link Optional}, never with a magic
 * number: {@link #maxQueue()} is empty when any number of callers may wait, {@link #maxWait()} is
 * empty when a waiter waits until it is handed a slot (no timer is ever armed for it).
 *
 * <p>Instances come from {@link BulkheadBuilder#build()} and {@link Bulkhead#config()}. This class
 * is immutable and thread-safe.
 */
public final class BulkheadConfig {

  private final String name;
  private final int limit;
  private final boolean queueBounded;
  private final int maxQueue;
  private final Duration maxWait; // null when unbounded

  BulkheadConfig(String name, int limit, boolean queueBounded, int maxQueue, Duration maxWait) {
    this.name = name;
    this.limit = limit;
    this.queueBounded = queueBounded;
    this.maxQueue = maxQueue;
    this.maxWait = maxWait;
  }

  /** The compartment's name, unique within a registry; used in exceptions, metrics and logs. */
  public String name() {
    return name;
  }

  /** How many calls may be in flight at once; at least 1. */
  public int limit() {
    return limit;
  }

  /**
   * How many callers may wait for a slot; empty when unbounded. {@code 0} means: reject at once.
   */
  public OptionalInt maxQueue() {
    return queueBounded ? OptionalInt.of(maxQueue) : OptionalInt.empty();
  }

  /** How long one caller may wait for a slot; empty when it may wait until it gets one. */
  public Optional<Duration> maxWait() {
    return Optional.ofNullable(maxWait);
  }

  boolean queueBounded() {
    return queueBounded;
  }

  int maxQueueValue() {
    return maxQueue;
  }

  Duration maxWaitOrNull() {
    return maxWait;
  }

  BulkheadConfig withLimit(int newLimit) {
    return new BulkheadConfig(name, newLimit, queueBounded, maxQueue, maxWait);
  }

  @Override
  public boolean equals(@Nullable Object o) {
    if (this == o) {
      return true;
    }
    if (!(o instanceof BulkheadConfig)) {
      return false;
    }
    BulkheadConfig that = (BulkheadConfig) o;
    return limit == that.limit
        && queueBounded == that.queueBounded
        && maxQueue == that.maxQueue
        && name.equals(that.name)
        && Objects.equals(maxWait, that.maxWait);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, limit, queueBounded, maxQueue, maxWait);
  }

  @Override
  public String toString() {
    return "BulkheadConfig{name="
        + name
        + ", limit="
        + limit
        + ", maxQueue="
        + (queueBounded ? Integer.toString(maxQueue) : "unbounded")
        + ", maxWait="
        + (maxWait == null ? "unbounded" : maxWait.toString())
        + "}";
  }
}
