package io.bulkhead.benchmarks.soak;

import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;
import org.HdrHistogram.Histogram;
import org.HdrHistogram.Recorder;

/*
 * Concurrency: record() runs on whichever thread finishes a call (HttpClient's, the database
 * workers'); interval() runs on the soak's thread once a minute. The Recorder swaps its active
 * histogram for an empty one under its own writer-reader phaser, so a latency recorded while the
 * minute closes lands in this minute's histogram or the next one, never in none or both; the outcome
 * counters are LongAdders read-and-reset the same way (sumThenReset), with the same one-minute
 * ambiguity for a call that finishes at the boundary.
 */

/** One kind of call of the soak: its latencies (from when each call was due) and outcomes. */
final class Workload {

  /** How a call ended. */
  enum Outcome {
    OK,
    REJECTED,
    TIMED_OUT,
    FAILED
  }

  private static final long HIGHEST_NANOS = TimeUnit.MINUTES.toNanos(5);
  private static final int SIGNIFICANT_DIGITS = 3;

  final String name;
  private final Recorder latencies = new Recorder(HIGHEST_NANOS, SIGNIFICANT_DIGITS);
  private final LongAdder[] outcomes = new LongAdder[Outcome.values().length];

  Workload(String name) {
    this.name = name;
    for (int i = 0; i < outcomes.length; i++) {
      outcomes[i] = new LongAdder();
    }
  }

  void record(long dueNanos, long endNanos, Outcome outcome) {
    latencies.recordValue(Math.min(HIGHEST_NANOS, Math.max(0, endNanos - dueNanos)));
    outcomes[outcome.ordinal()].increment();
  }

  /** The calls finished since the last interval, and resets. */
  Interval interval() {
    Histogram h = latencies.getIntervalHistogram();
    long[] counts = new long[outcomes.length];
    for (int i = 0; i < counts.length; i++) {
      counts[i] = outcomes[i].sumThenReset();
    }
    return new Interval(
        h.getTotalCount(),
        h.getTotalCount() == 0 ? Double.NaN : h.getValueAtPercentile(99) / 1e6,
        counts);
  }

  /** The calls of one minute: how many finished, their p99 in ms (NaN if none), by outcome. */
  record Interval(long calls, double p99Ms, long[] outcomes) {
    long count(Outcome o) {
      return outcomes[o.ordinal()];
    }
  }
}
