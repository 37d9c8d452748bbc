package io.bulkhead.demo;

import io.bulkhead.scenarios.Mode;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** Reads {@code shared} or {@code bulkhead}. */
final class ModeConverter implements ITypeConverter<Mode> {

  @Override
  public Mode convert(String value) {
    for (Mode m : Mode.values()) {
      if (m.label().equalsIgnoreCase(value.trim())) {
        return m;
      }
    }
    throw new TypeConversionException("'" + value + "' is not a mode: use shared or bulkhead");
  }
}
