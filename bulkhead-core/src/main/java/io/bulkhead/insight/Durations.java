package io.bulkhead.insight;

import java.time.Duration;

/**
 * The duration arithmetic and the short human form of core's own {@code io.bulkhead.Durations},
 * which is package-private there: an explanation here reads like a rejection message there ("waited
 * 1.5s"), and neither package exports a helper that is not part of its API.
 */
final class Durations {

  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  private Durations() {}

  /** Converts to nanoseconds, saturating at {@link Long#MAX_VALUE} (about 292 years). */
  static long toNanosSaturated(Duration duration) {
    return duration.compareTo(MAX_NANOS) >= 0 ? Long.MAX_VALUE : duration.toNanos();
  }

  /** A short human form: 850µs, 12ms, 1.5s, 42s, 2m5s. */
  static String format(long nanos) {
    if (nanos < 1_000_000L) {
      return (nanos / 1_000L) + "µs";
    }
    long millis = nanos / 1_000_000L;
    if (millis < 1_000L) {
      return millis + "ms";
    }
    if (millis < 10_000L) {
      return (millis / 1_000L) + "." + (millis % 1_000L) / 100 + "s";
    }
    long seconds = millis / 1_000L;
    return seconds < 120 ? seconds + "s" : (seconds / 60) + "m" + (seconds % 60) + "s";
  }
}
