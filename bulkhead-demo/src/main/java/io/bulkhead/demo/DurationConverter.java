package io.bulkhead.demo;

import io.bulkhead.scenarios.Durations;
import java.time.Duration;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads a duration option with {@link Durations#parse}; a malformed one is a usage error. */
final class DurationConverter implements ITypeConverter<Duration> {

  @Override
  public Duration convert(String value) {
    try {
      return Durations.parse(value);
    } catch (IllegalArgumentException e) {
      throw new TypeConversionException(e.getMessage());
    }
  }
}
