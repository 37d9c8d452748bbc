package io.bulkhead;

import java.time.Duration;

/** Conversions between {@link Duration} at the API and long nanoseconds inside. */
final class Durations {

  private Durations() {}

  /**
   * Converts to nanoseconds, saturating at {@link Long#MAX_VALUE} instead of throwing: about 292
   * years, longer than any deadline a compartment meets.
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

  /**
   * A short human form: 850µs, 12ms, 1.5s, 42s, 2m5s. Plain arithmetic rather than String.format:
   * it builds exception messages, and CompletableFuture builds those eagerly whenever it wraps one.
   */
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
