package io.bulkhead.testing;

import io.bulkhead.Ticker;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A ticker the test moves by hand. Starts near the top of the long range to exercise wrap-around.
 * Shared with the other modules' tests through bulkhead-core's test-jar, in a package of its own so
 * that it is readable beside the io.bulkhead.core module.
 */
public final class FakeTicker implements Ticker {

  private final AtomicLong nanos = new AtomicLong(Long.MAX_VALUE - Duration.ofMinutes(5).toNanos());

  @Override
  public long read() {
    return nanos.get();
  }

  /** Moves the time forward by {@code d}. */
  public void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }
}
