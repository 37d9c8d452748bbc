package io.bulkhead;

/**
 * A source of monotonic nanoseconds with an arbitrary origin, like {@link System#nanoTime()}.
 *
 * <p>Every deadline and duration inside a compartment is measured with a ticker, never with the
 * wall clock, so tests can replace it with a fake one that they advance by hand. Only differences
 * between two readings are meaningful; they are compared by subtraction, so the readings may wrap
 * around.
 *
 * <p>Implementations must be thread-safe and cheap: a compartment reads its ticker on every
 * admission and every release.
 */
@FunctionalInterface
public interface Ticker {

  /** Returns the current reading in nanoseconds. */
  long read();

  /** Returns the ticker backed by {@link System#nanoTime()}. */
  static Ticker system() {
    return SystemTicker.INSTANCE;
  }
}

/** The default ticker; an enum so there is exactly one and it serialises to itself. */
enum SystemTicker implements Ticker {
  INSTANCE;

  @Override
  public long read() {
    return System.nanoTime();
  }
}
