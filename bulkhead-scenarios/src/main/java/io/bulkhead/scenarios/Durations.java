package io.bulkhead.scenarios;

import java.time.Duration;
import java.time.format.DateTimeParseException;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Durations as people type them on a command line ({@code 30s}, {@code 500ms}, {@code 2m}), and as
 * the scenarios' messages and reports write them ({@code 30 s}, {@code 500 ms}).
 */
public final class Durations {

  private static final Pattern SIMPLE = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)");

  private Durations() {}

  /**
   * Reads {@code 30s}, {@code 500ms}, {@code 2m} or ISO-8601 ({@code PT30S}).
   *
   * @throws IllegalArgumentException naming the value, if it is not a duration or is longer than a day
   */
  public static Duration parse(String value) {
    String v = value.trim().toLowerCase(Locale.ROOT);
    Matcher m = SIMPLE.matcher(v);
    if (m.matches()) {
      double amount = Double.parseDouble(m.group(1));
      double millis;
      switch (m.group(2)) {
        case "ms":
          millis = amount;
          break;
        case "s":
          millis = amount * 1000;
          break;
        default:
          millis = amount * 60_000;
          break;
      }
      if (millis > Duration.ofDays(1).toMillis()) {
        throw new IllegalArgumentException("'" + value + "' is longer than a day");
      }
      return Duration.ofNanos(Math.round(millis * 1_000_000));
    }
    try {
      return Duration.parse(value.trim()); // ISO-8601 as well, PT30S
    } catch (DateTimeParseException e) {
      throw new IllegalArgumentException(
          "'" + value + "' is not a duration like 30s, 500ms or 2m");
    }
  }

  /** 30 s, 1.5 s, 500 ms. */
  public static String format(Duration d) {
    long millis = d.toMillis();
    if (millis < 1000) {
      return millis + " ms";
    }
    if (millis % 1000 == 0) {
      return millis / 1000 + " s";
    }
    return String.format(Locale.ROOT, "%.1f s", millis / 1000.0);
  }
}
