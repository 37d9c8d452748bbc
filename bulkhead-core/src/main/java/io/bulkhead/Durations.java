package io.bulkhead;

import java.time.Duration;

/** Conversions between {@link Duration} at the API and long nanoseconds inside. */
final class Durations {

  private Durations() {}

  /**
   * Converts to nanoseconds, saturating at {@link Long#MAX_VALUE} instead of throwing: about 292 years,
   * longer than any deadline a compartment meets.
   */
  static long toNanosSaturated(Duration duration) {
    if (duration.compareTo(MAX_NANOS) >= 0) {
      return Long.MAX_VALUE;
    }
    return duration.toNanos();
  }

  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  /** Returns true if {@code duration} is too long to be held as long nanoseconds. */
  static boolean exceedsNanos(Duration duration) {
    return duration.compareTo(MAX_NANOS) > 0;
  }

  /** A short human form: 850µs, 12ms, 1.5s, 2m5s. */
  static String format(long nanos) {
    if (nanos < 1_000_000L) {
      return (nanos / 1_000L) + "µs";
    }
    if (nanos < 10_000_000_000L) {
      long millis = nanos / 1_000_000L;
      return millis < 1_000L ? millis + "ms" : String.format(java.util.Locale.ROOT, "%.1fs", nanos / 1e9);
    }
    long seconds = nanos / 1_000_000_000L;
    return seconds < 120 ? seconds + "s" : (seconds / 60) + "m" + (seconds % 60) + "s";
  }
}
