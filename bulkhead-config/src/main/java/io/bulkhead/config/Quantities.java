package io.bulkhead.config;

import io.bulkhead.config.internal.Printable;
import io.bulkhead.internal.Durations;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The one grammar for the quantities a configuration talks in, shared by the YAML file and every
 * command-line option, and the short forms in which reports print them.
 *
 * <p>A duration is either numbers with units or ISO-8601:
 *
 * <pre>
 * 250ms   1.5s   30s   5m   2min   1h   1m30s   1h 30m   500us   850µs   10ns   PT30S   PT1M30S
 * </pre>
 *
 * <p>A rate is a number of calls per unit of time: {@code 40/s}, {@code 2400/min}, {@code 3/h}.
 *
 * <p>A duration must not be negative, and must fit in a {@code long} of nanoseconds (about 292
 * years), the resolution every compartment keeps time in. The parsers throw {@link
 * IllegalArgumentException} with one line that quotes the value and shows the accepted forms; the
 * caller puts the option or key in front.
 */
public final class Quantities {

  /** One number and its unit; a duration is one or more of them ({@code 1m30s}). */
  private static final Pattern DURATION_PART =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(ns|us|µs|ms|min|m|s|h)");

  private static final Pattern BLANK = Pattern.compile("\\s*");
  private static final Pattern ISO_DURATION = Pattern.compile("\\s*[-+]?[pP].*");
  private static final Pattern RATE =
      Pattern.compile("\\s*([0-9]+(?:\\.[0-9]+)?)\\s*/\\s*(s|sec|second|m|min|minute|h|hour)\\s*");
  private static final Pattern WHOLE = Pattern.compile("\\s*[-+]?[0-9]+\\s*");

  private static final double SECONDS_PER_MINUTE = 60.0;
  private static final double SECONDS_PER_HOUR = 3600.0;
  private static final Duration LONGEST = Duration.ofNanos(Long.MAX_VALUE);

  /** More whole digits than {@link Long#MAX_VALUE} nanoseconds has: too long in any unit. */
  private static final int MOST_WHOLE_DIGITS = 20;

  /**
   * More decimals than any unit needs to resolve a nanosecond (an hour is 3.6e12 of them). The
   * bound keeps a value of a million digits from costing a quadratic conversion before it is
   * refused.
   */
  private static final int MOST_DECIMALS = 30;

  private static final String DURATION_FORMS = "like 250ms, 1.5s, 5m, 1h or PT30S";

  private Quantities() {}

  /**
   * Parses a duration: a number with a unit ({@code 250ms}, {@code 1.5s}, {@code 30s}, {@code 5m}
   * or {@code 5min}, {@code 1h}, {@code 500us} or {@code 500µs}, {@code 10ns}; spaces allowed
   * around the unit), several of them that add up ({@code 1m30s}, {@code 1h 30m}, as {@link
   * #formatDuration} writes), or ISO-8601 ({@code PT30S}). Fractions of a nanosecond are rounded to
   * the nearest.
   *
   * @throws IllegalArgumentException if {@code text} is neither form, is negative, or is longer
   *     than {@link Long#MAX_VALUE} nanoseconds
   */
  public static Duration parseDuration(String text) {
    Objects.requireNonNull(text, "text");
    if (ISO_DURATION.matcher(text).matches()) {
      Duration d;
      try {
        d = Duration.parse(text.trim());
      } catch (DateTimeParseException e) {
        throw notADuration(text);
      }
      if (d.isNegative()) {
        throw new IllegalArgumentException("must not be negative but was " + Printable.quote(text));
      }
      if (d.compareTo(LONGEST) > 0) {
        throw tooLong(text);
      }
      return d;
    }
    Matcher m = DURATION_PART.matcher(text);
    BigDecimal nanos = BigDecimal.ZERO;
    int at = 0;
    while (at < text.length() && m.region(at, text.length()).lookingAt()) {
      nanos = nanos.add(partNanos(text, m.group(1), m.group(2)));
      if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
        throw tooLong(text);
      }
      at = m.end();
    }
    if (at == 0 || !BLANK.matcher(text).region(at, text.length()).matches()) {
      throw notADuration(text);
    }
    return Duration.ofNanos(nanos.longValueExact());
  }

  /** One number with its unit, in whole nanoseconds. */
  private static BigDecimal partNanos(String text, String number, String unit) {
    int point = number.indexOf('.');
    int whole = point < 0 ? number.length() : point;
    int zeros = 0;
    while (zeros < whole - 1 && number.charAt(zeros) == '0') {
      zeros++;
    }
    if (whole - zeros > MOST_WHOLE_DIGITS) {
      throw tooLong(text);
    }
    if (number.length() - whole - 1 > MOST_DECIMALS) {
      throw new IllegalArgumentException(
          Printable.quote(text)
              + " has more than "
              + MOST_DECIMALS
              + " decimals, more than a nanosecond needs");
    }
    return new BigDecimal(number)
        .multiply(BigDecimal.valueOf(Durations.unitNanos(unit)))
        .setScale(0, RoundingMode.HALF_UP);
  }

  private static IllegalArgumentException notADuration(String text) {
    return new IllegalArgumentException(
        "expected a duration with a unit, "
            + DURATION_FORMS
            + ", but was "
            + Printable.quote(text));
  }

  private static IllegalArgumentException tooLong(String text) {
    return new IllegalArgumentException(
        Printable.quote(text)
            + " is too long: a duration must fit in "
            + Long.MAX_VALUE
            + " nanoseconds (about 292 years)");
  }

  /**
   * Parses a rate, {@code 40/s}, {@code 2400/min} or {@code 3/h} (also {@code sec}, {@code second},
   * {@code minute}, {@code hour}), into calls per second.
   *
   * @throws IllegalArgumentException if {@code text} is not a number, a slash and a unit
   */
  public static double parseRate(String text) {
    Objects.requireNonNull(text, "text");
    Matcher m = RATE.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "expected a rate with a unit, like 40/s, 2400/min or 3/h,"
              + " but was "
              + Printable.quote(text));
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
        return count / SECONDS_PER_MINUTE;
      default:
        return count / SECONDS_PER_HOUR;
    }
  }

  /**
   * Parses a whole number as the file writes it: digits, an optional sign, spaces around.
   *
   * @throws IllegalArgumentException with the text quoted, if it is not one
   */
  public static long parseWhole(String text) {
    if (!WHOLE.matcher(text).matches()) {
      throw new IllegalArgumentException(
          "expected a whole number but was " + Printable.quote(text));
    }
    try {
      return Long.parseLong(text.trim().replace("+", ""));
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          "expected a whole number but was " + Printable.quote(text));
    }
  }

  /** A number for people: {@code 2}, {@code 2.5}, {@code 1.33}, {@code 12.3}, {@code 0.13}. */
  public static String formatNumber(double d) {
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

  /** A rate for people, in calls per second: {@code 40/s}, {@code 0.5/s}. */
  public static String formatRate(double perSecond) {
    return formatNumber(perSecond) + "/s";
  }

  /**
   * A duration for people, in the form every Bulkhead message uses and {@link #parseDuration} reads
   * back: {@code 850µs}, {@code 50ms}, {@code 1.5s}, {@code 30s}, {@code 1m30s}, {@code 2m}, {@code
   * 1h}. Exact to the microsecond below a second and to the millisecond above; a finer part is cut.
   */
  public static String formatDuration(Duration d) {
    return Durations.format(d);
  }
}
