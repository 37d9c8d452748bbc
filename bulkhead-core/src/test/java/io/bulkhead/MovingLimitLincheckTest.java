package io.bulkhead;

import java.time.Duration;
import java.util.concurrent.atomic.AtomicInteger;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.Param;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * {@link BulkheadLincheckTest}'s model check with a limit that moves by itself: a controller that
 * steps through 3, 1, 2, 1, ... is asked on every timed release (interval 1 ns on a ticker that
 * advances on every reading), so limit changes race with acquire, hand-off, timeout, cancellation
 * and explicit {@code setLimit} at every point Lincheck explores. The same invariants are checked
 * after every execution, with the highest limit being the range's max.
 */
@Param(name = "limit", gen = IntGen.class, conf = "1:3")
public class MovingLimitLincheckTest extends BulkheadLincheckTest {

  @Override
  AdaptiveLimit adaptiveLimit() {
    return new AdaptiveLimit(new Stepping(), 1, 3, Duration.ofNanos(1));
  }

  @Test
  @Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
  @Override
  void modelCheck() {
    // Fewer random scenarios than the static test (a decision on every release makes each
    // execution longer); the custom scenarios are all explored. A deeper run: see the parent.
    modelCheck(MovingLimitLincheckTest.class, 2);
  }

  /** Moves the limit to the next value of a fixed cycle on every decision. */
  static final class Stepping implements LimitController {
    private static final int[] CYCLE = {3, 1, 2, 1};
    private final AtomicInteger step = new AtomicInteger();

    @Override
    public String name() {
      return "stepping";
    }

    @Override
    public Decision next(Sample sample) {
      return new Decision(CYCLE[step.getAndIncrement() % CYCLE.length], "scripted");
    }
  }
}
