package io.bulkhead;

import java.time.Duration;
import java.util.Objects;
import java.util.OptionalInt;

/**
 * A snapshot of one compartment: the four numbers to watch (in flight against the limit, waiting,
 * rejections, admitted latency) and the counters behind them.
 *
 * <p>Counters ({@link #admitted()}, {@link #rejected()}, {@link #completed()}, {@link
 * #cancelled()}) are cumulative since the compartment was built and never go down; take two
 * snapshots and subtract for a rate. {@link #latency()} and {@link #queueWait()} cover the last
 * {@link #window()} only.
 *
 * <p>The fields are read one after another while calls come and go, so under load a snapshot is a
 * close approximation rather than a single instant; each counter on its own is exact. This class is
 * immutable.
 */
public final class BulkheadStats {

  private final String name;
  private final int limit;
  private final OptionalInt maxQueue;
  private final int inFlight;
  private final int waiting;
  private final long admitted;
  private final long completed;
  private final long cancelled;
  private final long[] rejectedByReason;
  private final long listenerFailures;
  private final LatencySummary latency;
  private final LatencySummary queueWait;

  BulkheadStats(
      String name,
      int limit,
      OptionalInt maxQueue,
      int inFlight,
      int waiting,
      long admitted,
      long completed,
      long cancelled,
      long[] rejectedByReason,
      long listenerFailures,
      LatencySummary latency,
      LatencySummary queueWait) {
    this.name = name;
    this.limit = limit;
    this.maxQueue = maxQueue;
    this.inFlight = inFlight;
    this.waiting = waiting;
    this.admitted = admitted;
    this.completed = completed;
    this.cancelled = cancelled;
    this.rejectedByReason = rejectedByReason;
    this.listenerFailures = listenerFailures;
    this.latency = latency;
    this.queueWait = queueWait;
  }

  /** The compartment's name. */
  public String name() {
    return name;
  }

  /** How many calls may be in flight at once (the current limit, after any {@code setLimit}). */
  public int limit() {
    return limit;
  }

  /** How many callers may wait; empty when unbounded. */
  public OptionalInt maxQueue() {
    return maxQueue;
  }

  /**
   * Calls holding a slot now. It exceeds {@link #limit()} only just after the limit was lowered,
   * until enough of those calls finish.
   */
  public int inFlight() {
    return inFlight;
  }

  /** Callers waiting for a slot now. */
  public int waiting() {
    return waiting;
  }

  /** Calls admitted so far, at once or after waiting. */
  public long admitted() {
    return admitted;
  }

  /** Admitted calls that have finished and given their slot back. */
  public long completed() {
    return completed;
  }

  /** Queued asynchronous calls withdrawn by their caller before admission. */
  public long cancelled() {
    return cancelled;
  }

  /** Calls not admitted, for any reason. */
  public long rejected() {
    long total = 0;
    for (long r : rejectedByReason) {
      total += r;
    }
    return total;
  }

  /** Calls not admitted for {@code reason}. */
  public long rejected(BulkheadFullException.Reason reason) {
    return rejectedByReason[Objects.requireNonNull(reason, "reason").ordinal()];
  }

  /** Exceptions thrown by listeners and contained by the compartment. */
  public long listenerFailures() {
    return listenerFailures;
  }

  /** The span that {@link #latency()} and {@link #queueWait()} cover: the last 10 seconds. */
  public Duration window() {
    return Duration.ofNanos(SlidingWindow.SLICE_NANOS * SlidingWindow.WINDOW_SLICES);
  }

  /**
   * How long admitted calls held their slot, for calls that finished within {@link #window()}.
   *
   * <p>Reading the clock costs more than a very fast call, so a compartment times every call that
   * can matter — when it is more than half full, after a wait, while its recent calls take 20 µs or
   * more, or while a listener is attached — and one in 256 of the others. {@link
   * LatencySummary#count()} is then the number of calls timed; {@link #completed()} is always
   * exact.
   */
  public LatencySummary latency() {
    return latency;
  }

  /** How long calls waited before admission, for calls admitted after waiting within the window. */
  public LatencySummary queueWait() {
    return queueWait;
  }

  @Override
  public String toString() {
    StringBuilder sb =
        new StringBuilder("BulkheadStats{name=")
            .append(name)
            .append(", inFlight=")
            .append(inFlight)
            .append('/')
            .append(limit)
            .append(", waiting=")
            .append(waiting)
            .append('/')
            .append(maxQueue.isPresent() ? Integer.toString(maxQueue.getAsInt()) : "unbounded")
            .append(", admitted=")
            .append(admitted)
            .append(", completed=")
            .append(completed)
            .append(", rejected=")
            .append(rejected());
    for (BulkheadFullException.Reason r : BulkheadFullException.Reason.values()) {
      sb.append(", ").append(r).append('=').append(rejected(r));
    }
    return sb.append(", cancelled=")
        .append(cancelled)
        .append(", latency=")
        .append(latency)
        .append(", queueWait=")
        .append(queueWait)
        .append('}')
        .toString();
  }
}
