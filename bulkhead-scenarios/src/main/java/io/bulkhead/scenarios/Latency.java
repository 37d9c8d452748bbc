package io.bulkhead.scenarios;

import java.util.List;
import java.util.concurrent.TimeUnit;
import org.HdrHistogram.Histogram;

/**
 * Percentiles of a set of latencies, in milliseconds, from an HdrHistogram with three significant
 * digits (a reported value is within 0.1% of the true one).
 *
 * @param count how many latencies
 * @param p50Ms the median, or null when there were none
 * @param p99Ms the 99th percentile, or null when there were none
 * @param maxMs the largest, or null when there were none
 */
public record Latency(int count, Double p50Ms, Double p99Ms, Double maxMs) {

  private static final long HIGHEST_MICROS = TimeUnit.HOURS.toMicros(1);

  static Latency of(List<Sample> samples) {
    return ofNanos(samples.stream().mapToLong(Sample::latencyNanos).toArray());
  }

  /** Percentiles of latencies given in nanoseconds. */
  static Latency ofNanos(long[] latencies) {
    if (latencies.length == 0) {
      return new Latency(0, null, null, null);
    }
    Histogram histogram = new Histogram(HIGHEST_MICROS, 3);
    for (long nanos : latencies) {
      long micros = Math.max(1, TimeUnit.NANOSECONDS.toMicros(nanos));
      histogram.recordValue(Math.min(micros, HIGHEST_MICROS));
    }
    return new Latency(
        latencies.length,
        millis(histogram.getValueAtPercentile(50.0)),
        millis(histogram.getValueAtPercentile(99.0)),
        millis(histogram.getMaxValue()));
  }

  private static double millis(long micros) {
    return Math.round(micros / 100.0) / 10.0; // to 0.1 ms
  }
}
