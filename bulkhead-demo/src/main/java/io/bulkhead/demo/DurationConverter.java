package io.bulkhead.demo;

import io.bulkhead.config.Quantities;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/**
 * Reads a duration option with {@link Quantities#parseDuration, the YAML file's grammar}; a
 * malformed one is a usage error.
 */
final class DurationConverter implements ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    try {
      return Quantities.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
