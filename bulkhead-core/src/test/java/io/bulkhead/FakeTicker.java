package io.bulkhead;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

/** A ticker the test moves by hand. Starts near the top of the long range to exercise wrap-around. */
final class FakeTicker implements Ticker {

  private final AtomicLong nanos = new AtomicLong(Long.MAX_VALUE - Duration.ofMinutes(5).toNanos());

  @Override
  public long read() {
    return nanos.get();
  }

  void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }
}
