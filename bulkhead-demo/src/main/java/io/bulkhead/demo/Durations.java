package io.bulkhead.demo;

import io.bulkhead.config.Quantities;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Every duration option of the command line, read with the grammar of the YAML file
 * ({@link Quantities#parseDuration}: {@code 250ms}, {@code 1.5s}, {@code 5m}, {@code 1h},
 * {@code PT30S}), and printed the way the reports print them.
 */
final class Durations implements ITypeConverter<Duration> {

  private static final long MILLIS_PER_SECOND = 1000;

  @Override
  public Duration convert(String value) {
    try {
      return Quantities.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }

  /** 30 s, 1.5 s, 500 ms. */
  static String format(Duration d) {
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
