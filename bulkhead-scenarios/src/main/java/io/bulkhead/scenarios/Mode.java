package io.bulkhead.scenarios;

import java.util.Locale;

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
}
