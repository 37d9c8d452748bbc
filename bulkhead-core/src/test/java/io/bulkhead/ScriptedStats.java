package io.bulkhead;

import java.util.OptionalInt;

/**
 * Settings and stats with made-up numbers, through core's package-private constructors, for {@link
 * io.bulkhead.testing.ScriptedCompartment}; in core's own package for that access.
 */
public final class ScriptedStats {

  private ScriptedStats() {}

  /** The settings of a compartment with {@code limit} and the default queue. */
  public static BulkheadConfig config(String name, int limit) {
    return new BulkheadConfig(name, limit, QueueSettings.DEFAULT);
  }

  /**
   * Stats with these counts; {@code rejected} as QUEUE_FULL; 100 admitted calls that each took
   * {@code latencyNanos} as the latency window, or none when it is negative.
   */
  public static BulkheadStats stats(
      String name,
      int limit,
      int inFlight,
      long admitted,
      long completed,
      long rejected,
      long latencyNanos) {
    long[] buckets = new long[Histograms.BUCKETS];
    LatencySummary latency = LatencySummary.EMPTY;
    if (latencyNanos >= 0) {
      buckets[Histograms.bucketOf(latencyNanos)] = 100;
      latency = new LatencySummary(buckets, 100 * latencyNanos, latencyNanos);
    }
    long[] byReason = new long[BulkheadFullException.Reason.values().length];
    byReason[BulkheadFullException.Reason.QUEUE_FULL.ordinal()] = rejected;
    return new BulkheadStats(
        name,
        limit,
        OptionalInt.of(0),
        inFlight,
        0,
        admitted,
        completed,
        0,
        byReason,
        0,
        latency,
        LatencySummary.EMPTY);
  }
}
