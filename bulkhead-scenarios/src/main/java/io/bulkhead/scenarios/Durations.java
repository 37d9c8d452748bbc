package io.bulkhead.scenarios;

import java.time.Duration;
import java.util.Locale;

/**
 * Durations as the scenarios' messages and reports write them ({@code 30 s}, {@code 1.5 s}, {@code
 * 500 ms}). Reading them is {@code io.bulkhead.config.Quantities}' job: one grammar for the command
 * line and the YAML file.
 */
public final class Durations {

  private static final long MILLIS_PER_SECOND = 1000;

  private Durations() {}

  /** 30 s, 1.5 s, 500 ms. */
  public static String format(Duration d) {
    long millis = d.toMillis();
    if (millis < MILLIS_PER_SECOND) {
      return millis + " ms";
    }
    if (millis % MILLIS_PER_SECOND == 0) {
      return millis / MILLIS_PER_SECOND + " s";
    }
    return String.format(Locale.ROOT, "%.1f s", millis / (double) MILLIS_PER_SECOND);
  }
}
