package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;

/**
 * Durations observed over a recent window: count, mean, max and percentiles.
 *
 * <p>Percentiles come from a log-linear histogram with four buckets per power of two, so a reported
 * percentile is within about 12% of the true value; {@link #max()} and {@link #mean()} are exact.
 * Durations from 1 µs to about 73 minutes are resolved; longer ones count in the top bucket, and
 * percentiles are never reported above the observed maximum.
 *
 * <p>This class is immutable.
 */
public final class LatencySummary {

  static final LatencySummary EMPTY = new LatencySummary(new long[Histograms.BUCKETS], 0, 0);

  private final long[] buckets;
  private final long count;
  private final long sumNanos;
  private final long maxNanos;

  LatencySummary(long[] buckets, long sumNanos, long maxNanos) {
    this.buckets = buckets;
    long n = 0;
    for (long b : buckets) {
      n += b;
    }
    this.count = n;
    this.sumNanos = sumNanos;
    this.maxNanos = maxNanos;
  }

  /** How many durations were observed in the window. */
  public long count() {
    return count;
  }

  /** The mean duration, or zero when nothing was observed. */
  public Duration mean() {
    return Duration.ofNanos(meanNanos());
  }

  /** The longest duration observed, or zero when nothing was observed. */
  public Duration max() {
    return Duration.ofNanos(maxNanos);
  }

  public Duration p50() {
    return percentile(0.50);
  }

  public Duration p90() {
    return percentile(0.90);
  }

  public Duration p99() {
    return percentile(0.99);
  }

  /**
   * Returns the duration below which the fraction {@code q} of observations fall, or zero when
   * nothing was observed.
   *
   * @throws IllegalArgumentException if {@code q} is not within [0, 1]
   */
  public Duration percentile(double q) {
    return Duration.ofNanos(percentileNanos(q));
  }

  long meanNanos() {
    return count == 0 ? 0 : sumNanos / count;
  }

  long maxNanos() {
    return maxNanos;
  }

  long percentileNanos(double q) {
    if (!(q >= 0.0 && q <= 1.0)) {
      throw new IllegalArgumentException("percentile must be within [0, 1] but was " + q);
    }
    if (count == 0) {
      return 0;
    }
    long rank = Math.max(1, (long) Math.ceil(q * count));
    int top = buckets.length - 1;
    while (buckets[top] == 0) {
      top--;
    }
    long seen = 0;
    for (int b = 0; b < top; b++) {
      seen += buckets[b];
      if (seen >= rank) {
        return Math.min(maxNanos, Histograms.representative(b));
      }
    }
    // The rank falls in the highest occupied bucket, which holds the maximum: report it exactly.
    return maxNanos;
  }

  @Override
  public String toString() {
    return "LatencySummary{count="
        + count
        + ", mean="
        + Durations.format(meanNanos())
        + ", p50="
        + Durations.format(percentileNanos(0.5))
        + ", p99="
        + Durations.format(percentileNanos(0.99))
        + ", max="
        + Durations.format(maxNanos)
        + "}";
  }
}
