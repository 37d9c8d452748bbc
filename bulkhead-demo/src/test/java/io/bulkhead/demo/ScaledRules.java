package io.bulkhead.demo;

import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * The shipped rules with every window divided by one factor: each range selector and subquery
 * ({@code [1m]}, {@code [1h:1m]}), each {@code offset} and each {@code for:}. Everything else (the
 * expressions, thresholds, labels and annotations) is the file as shipped. With the factor 15 and a
 * scrape every second, a test runs the rules exactly as a Prometheus scraping every 15 s runs the
 * file, fifteen times faster: a one-minute rate spans four scrapes in both, and {@code for: 5m}
 * asks for a condition held over 20 of them.
 */
final class ScaledRules {

  /** A Prometheus duration: one or more number-unit pairs, largest unit first ({@code 1h30m}). */
  private static final String DURATION = "(?:\\d+(?:ms|s|m|h|d|w|y))+";

  private static final Pattern RANGE =
      Pattern.compile("\\[(" + DURATION + ")(?::(" + DURATION + ")?)?\\]");
  private static final Pattern OFFSET = Pattern.compile("\\boffset\\s+(" + DURATION + ")");
  private static final Pattern FOR =
      Pattern.compile(
          "^(\\s*(?:for|keep_firing_for):\\s*)(" + DURATION + ")\\s*$", Pattern.MULTILINE);
  private static final Pattern PART = Pattern.compile("(\\d+)(ms|s|m|h|d|w|y)");

  private ScaledRules() {}

  /**
   * {@code rules} (the YAML text of a rules file) with every window divided by {@code factor}.
   *
   * @throws IllegalArgumentException if a window does not divide into whole milliseconds
   */
  static String divide(String rules, int factor) {
    String out = replace(RANGE, rules, m -> rangeOf(m, factor));
    out = replace(OFFSET, out, m -> "offset " + scaled(m.group(1), factor));
    return replace(FOR, out, m -> m.group(1) + scaled(m.group(2), factor));
  }

  private static String rangeOf(Matcher m, int factor) {
    StringBuilder s = new StringBuilder("[").append(scaled(m.group(1), factor));
    if (m.group(0).contains(":")) {
      s.append(':');
      if (m.group(2) != null) {
        s.append(scaled(m.group(2), factor));
      }
    }
    return s.append(']').toString();
  }

  /** Milliseconds of a Prometheus duration. */
  static long millis(String duration) {
    Matcher m = PART.matcher(duration);
    long total = 0;
    while (m.find()) {
      long n = Long.parseLong(m.group(1));
      total +=
          switch (m.group(2)) {
            case "ms" -> n;
            case "s" -> n * 1_000;
            case "m" -> n * 60_000;
            case "h" -> n * 3_600_000;
            case "d" -> n * 86_400_000;
            case "w" -> n * 604_800_000;
            default -> n * 31_536_000_000L; // y: 365 days, as Prometheus counts it
          };
    }
    return total;
  }

  private static String scaled(String duration, int factor) {
    long ms = millis(duration);
    if (ms % factor != 0) {
      throw new IllegalArgumentException(
          "window " + duration + " does not divide by " + factor + " into whole milliseconds");
    }
    long scaled = ms / factor;
    return scaled % 1000 == 0
        ? String.format(Locale.ROOT, "%ds", scaled / 1000)
        : String.format(Locale.ROOT, "%dms", scaled);
  }

  private static String replace(
      Pattern p, String text, java.util.function.Function<Matcher, String> with) {
    Matcher m = p.matcher(text);
    StringBuilder out = new StringBuilder();
    while (m.find()) {
      m.appendReplacement(out, Matcher.quoteReplacement(with.apply(m)));
    }
    m.appendTail(out);
    return out.toString();
  }
}
