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
public final class BulkheadConfig implements QueueSettings.Holder {

  private final String name;
  private final int limit;
  private final QueueSettings queue;

  BulkheadConfig(String name, int limit, QueueSettings queue) {
    this.name = name;
    this.limit = limit;
    this.queue = queue;
  }

  /** The compartment's name, unique within a registry; used in exceptions, metrics and logs. */
  public String name() {
    return name;
  }

  /** How many calls may be in flight at once; at least 1. */
  public int limit() {
    return limit;
  }

  @Override
  public QueueSettings queue() {
    return queue;
  }

  boolean queueBounded() {
    return queue.maxQueue().isPresent();
  }

  int maxQueueValue() {
    return queue.maxQueue().orElse(0);
  }

  Duration maxWaitOrNull() {
    return queue.maxWait().orElse(null);
  }

  BulkheadConfig withLimit(int newLimit) {
    return new BulkheadConfig(name, newLimit, queue);
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
    return limit == that.limit && name.equals(that.name) && queue.equals(that.queue);
  }

  @Override
  public int hashCode() {
    return Objects.hash(name, limit, queue);
  }

  @Override
  public String toString() {
    return "BulkheadConfig{name="
        + name
        + ", limit="
        + limit
        + ", maxQueue="
        + (queueBounded() ? Integer.toString(maxQueueValue()) : "unbounded")
        + ", maxWait="
        + queue.maxWait().map(Duration::toString).orElse("unbounded")
        + "}";
  }
}
