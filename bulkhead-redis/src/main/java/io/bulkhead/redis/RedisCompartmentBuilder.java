package io.bulkhead.redis;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.BulkheadListener;
import io.bulkhead.QueueSettings;
import java.time.Duration;
import java.util.Objects;

/**
 * Builds a {@link FleetBulkhead}. Obtain one from {@link RedisCompartments#builder(String)}.
 *
 * <pre>{@code
 * FleetBulkhead llm = fleet.builder("llm")
 *     .limit(10)                          // calls in flight across the fleet
 *     .maxQueue(20)                       // callers that may wait in this process
 *     .maxWait(Duration.ofSeconds(1))     // how long one may wait, locally and for the fleet
 *     .fallbackToLocalShare(3)            // while Redis is unreachable: 3 calls of this process
 *     .build();
 * }</pre>
 *
 * <p>The limit, queue and wait are checked like {@link Bulkhead#builder(String)}'s, with the same
 * defaults ({@link QueueSettings#DEFAULT}: no queue; a queue needs a wait). When Redis is
 * unreachable a compartment falls back to a static local share; the default share is the limit
 * itself (one process), so a fleet of N processes should set {@code fallbackToLocalShare(limit /
 * N)}, or {@link #failClosed()}. This class is <em>not</em> thread-safe.
 */
public final class RedisCompartmentBuilder {

  /** Marks "refuse every call while Redis is unreachable" in place of a share. */
  static final int FAIL_CLOSED = 0;

  private static final Duration MIN_CALL_DURATION = Duration.ofMillis(300);

  private final RedisCompartments fleet;
  private final String name;
  private final BulkheadBuilder local;
  private int limit;
  private int localShare = -1; // -1: the limit
  private Duration maxCallDuration; // null: renewed for as long as the call runs

  RedisCompartmentBuilder(RedisCompartments fleet, String name) {
    this.fleet = fleet;
    this.local = Bulkhead.builder(name); // checks the name
    this.name = name;
  }

  /**
   * Sets how many calls may be in flight at once across the fleet. The limit is stored in Redis,
   * and the latest {@code build()} or {@code setLimit} of any process wins: every process admits
   * against it, and one whose own limit differs logs a warning and never runs more than its own
   * itself.
   */
  public RedisCompartmentBuilder limit(int limit) {
    local.limit(limit);
    this.limit = limit;
    return this;
  }

  /** Sets how many callers of this process may wait; see {@link BulkheadBuilder#maxQueue(int)}. */
  public RedisCompartmentBuilder maxQueue(int maxQueue) {
    local.maxQueue(maxQueue);
    return this;
  }

  /**
   * Lets any number of callers of this process wait; see {@link BulkheadBuilder#unboundedQueue}.
   */
  public RedisCompartmentBuilder unboundedQueue() {
    local.unboundedQueue();
    return this;
  }

  /**
   * Sets how long one caller may wait, for a local slot and then for a lease together; see {@link
   * BulkheadBuilder#maxWait(Duration)}.
   */
  public RedisCompartmentBuilder maxWait(Duration maxWait) {
    local.maxWait(maxWait);
    return this;
  }

  /**
   * Lets a caller wait, for a local slot and then for a lease, until it gets them; see {@link
   * BulkheadBuilder#unboundedWait()}.
   */
  public RedisCompartmentBuilder unboundedWait() {
    local.unboundedWait();
    return this;
  }

  /** Replaces {@code maxQueue} and {@code maxWait} with {@code queue}'s. */
  public RedisCompartmentBuilder queue(QueueSettings queue) {
    local.queue(queue);
    return this;
  }

  /** Adds a listener for this process's events; see {@link BulkheadListener}. */
  public RedisCompartmentBuilder listener(BulkheadListener listener) {
    local.listener(listener);
    return this;
  }

  /**
   * Sets the longest one call is expected to hold its slot, at least 300 ms (the shortest lease
   * TTL). Its lease is never renewed past it, so a call stuck longer stops counting against the
   * fleet at most one lease TTL later. A lease lives at most this long from its grant, so a call
   * that could not start within it (a paused process) waits for a new lease instead.
   */
  public RedisCompartmentBuilder maxCallDuration(Duration maxCallDuration) {
    Objects.requireNonNull(maxCallDuration, "maxCallDuration");
    // Shorter, a lease could run out during the round trip that grants it, and every call would
    // find its lease gone before it starts.
    if (maxCallDuration.compareTo(MIN_CALL_DURATION) < 0) {
      throw new IllegalArgumentException(
          "maxCallDuration must be at least "
              + MIN_CALL_DURATION.toMillis()
              + " ms but was "
              + maxCallDuration);
    }
    this.maxCallDuration = maxCallDuration;
    return this;
  }

  /**
   * While Redis is unreachable, and for one lease TTL after it answers again or is found to have
   * lost its data, admits at most {@code share} calls of this process, without leases. The fleet
   * may then run up to the limit plus the shares of the processes cut off from Redis.
   *
   * <p>A call that finds the share taken is refused at once with {@code QUEUE_FULL}: it does not
   * wait for a slot of the share, whatever {@code maxQueue} and {@code maxWait} say, and callers
   * already waiting for a lease when Redis becomes unreachable are refused the same way unless the
   * share has room. The refusal is counted in {@link FleetStats#refusedByFallback()}, and in this
   * process's {@code stats()} as a rejection with {@code QUEUE_FULL}.
   */
  public RedisCompartmentBuilder fallbackToLocalShare(int share) {
    if (share < 1) {
      throw new IllegalArgumentException(
          "fallbackToLocalShare must be at least 1 but was "
              + share
              + "; use failClosed() to refuse every call while Redis is unreachable");
    }
    this.localShare = share;
    return this;
  }

  /**
   * While Redis is unreachable, and for one lease TTL after it answers again, refuses every call at
   * once with {@code QUEUE_FULL}, as {@link #fallbackToLocalShare(int)} refuses beyond its share.
   */
  public RedisCompartmentBuilder failClosed() {
    this.localShare = FAIL_CLOSED;
    return this;
  }

  /**
   * Returns a new compartment with these settings.
   *
   * @throws IllegalArgumentException as {@link BulkheadBuilder#build()} does, or if the local share
   *     is larger than the limit
   */
  public FleetBulkhead build() {
    Bulkhead gate = local.build(); // checks limit, queue and wait together
    int share = localShare < 0 ? limit : localShare;
    if (share > limit) {
      throw new IllegalArgumentException(
          "fallbackToLocalShare "
              + share
              + " of compartment '"
              + name
              + "' is larger than its limit "
              + limit);
    }
    return fleet.register(
        new RedisBulkhead(
            fleet,
            gate,
            share,
            maxCallDuration == null ? Long.MAX_VALUE : maxCallDuration.toNanos()));
  }
}
