package io.bulkhead.internal;

import java.time.Duration;
import java.util.Objects;

/**
 * The one short form of a duration that every module writes, and the unit symbols that {@code
 * io.bulkhead.config.Quantities} reads back: {@code 850ns}, {@code 850µs}, {@code 12.5ms}, {@code
 * 1.5s}, {@code 42s}, {@code 2m5s}, {@code 1h30m}.
 *
 * <p>The largest unit below a minute whose value is at least one is written with at most three
 * decimals and no trailing zeros; from a minute on, hours, minutes and seconds in turn, leaving out
 * the parts that are zero. The form is exact to the nanosecond below a millisecond, to the
 * microsecond below a second and to the millisecond above; a finer part is cut, never rounded up,
 * so what it writes is never longer than the duration and reads back as at most that. Plain
 * arithmetic, no {@code String.format}: it builds exception messages on rejection paths.
 */
public final class Durations {

  private static final long NANOS_PER_MICRO = 1_000L;
  private static final long NANOS_PER_MILLI = 1_000_000L;
  private static final long NANOS_PER_SECOND = 1_000_000_000L;
  private static final long SECONDS_PER_MINUTE = 60;
  private static final long SECONDS_PER_HOUR = 3_600;
  private static final long MILLIS_PER_SECOND = 1_000;
  private static final long THOUSAND = 1_000;
  private static final Duration MAX_NANOS = Duration.ofNanos(Long.MAX_VALUE);

  private Durations() {}

  /**
   * Converts to nanoseconds, saturating at {@link Long#MAX_VALUE} instead of throwing: about 292
   * years, longer than any deadline a compartment meets.
   */
  public static long toNanosSaturated(Duration duration) {
    return duration.compareTo(MAX_NANOS) >= 0 ? Long.MAX_VALUE : duration.toNanos();
  }

  /** Returns true if {@code duration} is too long to be held as long nanoseconds. */
  public static boolean exceedsNanos(Duration duration) {
    return duration.compareTo(MAX_NANOS) > 0;
  }

  /**
   * The nanoseconds in one {@code unit}: {@code ns}, {@code us} or {@code µs}, {@code ms}, {@code
   * s}, {@code m} or {@code min}, {@code h}; 0 for any other text.
   */
  public static long unitNanos(String unit) {
    switch (unit) {
      case "ns":
        return 1L;
      case "us":
      case "µs":
        return NANOS_PER_MICRO;
      case "ms":
        return NANOS_PER_MILLI;
      case "s":
        return NANOS_PER_SECOND;
      case "m":
      case "min":
        return SECONDS_PER_MINUTE * NANOS_PER_SECOND;
      case "h":
        return SECONDS_PER_HOUR * NANOS_PER_SECOND;
      default:
        return 0L;
    }
  }

  /** {@code duration} in the short form; a negative one with a leading minus. */
  public static String format(Duration duration) {
    Objects.requireNonNull(duration, "duration");
    if (duration.isNegative()) {
      return "-" + format(duration.negated());
    }
    if (duration.compareTo(MAX_NANOS) <= 0) {
      return format(duration.toNanos());
    }
    return longForm(duration.getSeconds(), duration.getNano());
  }

  /** {@code nanos} nanoseconds in the short form; a negative count with a leading minus. */
  public static String format(long nanos) {
    if (nanos < 0) {
      return nanos == Long.MIN_VALUE
          ? "-" + format(Duration.ofNanos(Long.MIN_VALUE).negated())
          : "-" + format(-nanos);
    }
    if (nanos == 0) {
      return "0s";
    }
    if (nanos < NANOS_PER_MICRO) {
      return nanos + "ns";
    }
    if (nanos < NANOS_PER_MILLI) {
      return decimal(nanos, NANOS_PER_MICRO, new StringBuilder()).append("µs").toString();
    }
    if (nanos < NANOS_PER_SECOND) {
      return decimal(nanos, NANOS_PER_MILLI, new StringBuilder()).append("ms").toString();
    }
    return longForm(nanos / NANOS_PER_SECOND, (int) (nanos % NANOS_PER_SECOND));
  }

  /** From a second on: {@code 1.5s}, {@code 42s}, {@code 2m5.25s}, {@code 1h30m}. */
  private static String longForm(long seconds, int nanoOfSecond) {
    StringBuilder out = new StringBuilder();
    long hours = seconds / SECONDS_PER_HOUR;
    long minutes = seconds % SECONDS_PER_HOUR / SECONDS_PER_MINUTE;
    long rest = seconds % SECONDS_PER_MINUTE;
    if (hours > 0) {
      out.append(hours).append('h');
    }
    if (minutes > 0) {
      out.append(minutes).append('m');
    }
    long millis = rest * MILLIS_PER_SECOND + nanoOfSecond / NANOS_PER_MILLI;
    if (millis > 0 || out.length() == 0) {
      decimal(millis, MILLIS_PER_SECOND, out).append('s');
    }
    return out.toString();
  }

  /**
   * Appends {@code count / unit} with at most three decimals, cut, without trailing zeros; {@code
   * unit} is a multiple of a thousand.
   */
  private static StringBuilder decimal(long count, long unit, StringBuilder out) {
    out.append(count / unit);
    long thousandths = count % unit / (unit / THOUSAND);
    if (thousandths != 0) {
      out.append('.');
      if (thousandths < 100) {
        out.append('0');
      }
      if (thousandths < 10) {
        out.append('0');
      }
      while (thousandths % 10 == 0) {
        thousandths /= 10;
      }
      out.append(thousandths);
    }
    return out;
  }
}
