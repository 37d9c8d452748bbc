package io.bulkhead.demo;

import java.util.Locale;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.TypeConversionException;

/** How the app treats its slow upstream. */
public enum Mode {
  /** /chat calls the upstream through a plain shared client, with no compartment and no cap. */
  SHARED,
  /** /chat calls the upstream through its own compartment and its own capped client. */
  BULKHEAD;

  /** The name on the command line and in results: {@code shared}, {@code bulkhead}. */
  public String label() {
    return name().toLowerCase(Locale.ROOT);
  }

  /** Reads {@code shared} or {@code bulkhead}. */
  static final class Converter implements ITypeConverter<Mode> {
    @Override
    public Mode convert(String value) {
      for (Mode m : values()) {
        if (m.label().equalsIgnoreCase(value.trim())) {
          return m;
        }
      }
      throw new TypeConversionException("'" + value + "' is not a mode: use shared or bulkhead");
    }
  }
}
