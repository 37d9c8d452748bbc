package io.bulkhead.config;

import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Reading and writing the quantities a sizing talks in: rates ({@code 40/s}, {@code 2400/min}),
 * durations ({@code 50ms}, {@code 1.5s}) and plain numbers. Parsers throw
 * {@link IllegalArgumentException} with a message that shows the accepted forms; callers add where.
 */
final class Quantities {

  private static final Pattern DURATION =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(ns|us|µs|ms|s|m|min|h)\\s*");
  private static final Pattern RATE =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*/\\s*(s|sec|second|m|min|minute|h|hour)\\s*");
  private static final Pattern WHOLE = Pattern.compile("\\s*[-+]?[0-9]+\\s*");

  private Quantities() {}

  /** Parses {@code 50ms}, {@code 1.5s}, {@code 2m}, {@code 1h}, {@code 500us}, {@code 10ns}. */
  static Duration duration(String text) {
    Matcher m = DURATION.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("expected a duration with a unit, like 50ms, 1.5s or 2m,"
          + " but was '" + text + "'");
    }
    long unitNanos;
    switch (m.group(2)) {
      case "ns":
        unitNanos = 1L;
        break;
      case "us":
      case "µs":
        unitNanos = 1_000L;
        break;
      case "ms":
        unitNanos = 1_000_000L;
        break;
      case "s":
        unitNanos = 1_000_000_000L;
        break;
      case "m":
      case "min":
        unitNanos = 60_000_000_000L;
        break;
      default:
        unitNanos = 3_600_000_000_000L;
        break;
    }
    BigDecimal nanos = new BigDecimal(m.group(1)).multiply(BigDecimal.valueOf(unitNanos));
    if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
      throw new IllegalArgumentException("duration '" + text + "' is too long");
    }
    return Duration.ofNanos(nanos.setScale(0, RoundingMode.HALF_UP).longValueExact());
  }

  /** Parses {@code 40/s}, {@code 2400/min}, {@code 3/h} into calls per second. */
  static double ratePerSecond(String text) {
    Matcher m = RATE.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException("expected a rate with a unit, like 40/s, 2400/min or 3/h,"
          + " but was '" + text + "'");
    }
    double count = Double.parseDouble(m.group(1));
    switch (m.group(2)) {
      case "s":
      case "sec":
      case "second":
        return count;
      case "m":
      case "min":
      case "minute":
        return count / 60.0;
      default:
        return count / 3600.0;
    }
  }

  /** Parses a whole number. */
  static long whole(String text) {
    if (!WHOLE.matcher(text).matches()) {
      throw new IllegalArgumentException("expected a whole number but was '" + text + "'");
    }
    try {
      return Long.parseLong(text.trim().replace("+", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException("expected a whole number but was '" + text + "'");
    }
  }

  /** A number for people: {@code 2}, {@code 2.5}, {@code 1.33}, {@code 0.13}. */
  static String number(double d) {
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    BigDecimal b = BigDecimal.valueOf(d);
    int scale = Math.abs(d) >= 100 ? 0 : Math.abs(d) >= 10 ? 1 : 2;
    if (Math.abs(d) < 0.01) {
      return String.format(Locale.ROOT, "%.2g", d);
    }
    return b.setScale(scale, RoundingMode.HALF_UP).stripTrailingZeros().toPlainString();
  }

  /** A rate for people: {@code 40/s}, {@code 0.5/s}. */
  static String rate(double perSecond) {
    return number(perSecond) + "/s";
  }

  /** A duration for people, in the largest unit that keeps it short: 50ms, 1.5s, 30s, 2m, 1h. */
  static String duration(Duration d) {
    long nanos = d.toNanos();
    if (nanos == 0) {
      return "0s";
    }
    if (nanos % 3_600_000_000_000L == 0) {
      return nanos / 3_600_000_000_000L + "h";
    }
    if (nanos % 60_000_000_000L == 0) {
      return nanos / 60_000_000_000L + "m";
    }
    if (nanos >= 1_000_000_000L) {
      return decimal(nanos, 1_000_000_000L) + "s";
    }
    if (nanos >= 1_000_000L) {
      return decimal(nanos, 1_000_000L) + "ms";
    }
    if (nanos >= 1_000L) {
      return decimal(nanos, 1_000L) + "us";
    }
    return nanos + "ns";
  }

  private static String decimal(long nanos, long unit) {
    return BigDecimal.valueOf(nanos).divide(BigDecimal.valueOf(unit)).setScale(3, RoundingMode.HALF_UP)
        .stripTrailingZeros().toPlainString();
  }
}
