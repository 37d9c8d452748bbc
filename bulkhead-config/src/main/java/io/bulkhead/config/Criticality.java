package io.bulkhead.config;

import java.util.Locale;

/**
 * How much a compartment matters, which decides the headroom its limit gets above its need when the
 * limit is derived from a rate and a latency. The defaults are {@link io.bulkhead.Sizing}'s; both
 * can be overridden in the file's {@code headroom} section.
 */
public enum Criticality {

  /** A fast path the business depends on (checkout, login): about three times its need. */
  CRITICAL(Headroom.parse("3")),

  /** A slow path that may be refused (reports, exports): a third above its need. */
  OPTIONAL(Headroom.parse("4/3"));

  private final Headroom defaultHeadroom;

  Criticality(Headroom defaultHeadroom) {
    this.defaultHeadroom = defaultHeadroom;
  }

  /** The headroom used unless the file overrides it: {@code x3} or {@code x4/3}. */
  public Headroom defaultHeadroom() {
    return defaultHeadroom;
  }

  /** The word used in files: {@code critical} or {@code optional}. */
  public String key() {
    return name().toLowerCase(Locale.ROOT);
  }
}
