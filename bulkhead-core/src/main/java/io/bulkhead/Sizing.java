package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * How big a compartment should be: Little's law for the need, a headroom factor for bursts.
 *
 * <p>Little's law says that the average number of calls in flight equals their arrival rate times
 * the time each spends in flight. A path that receives 40 calls a second, each holding its
 * connection for 50 ms, keeps 40 × 0.05 = 2 connections busy on average: its <em>need</em>. A
 * compartment sized exactly at its need rejects at the first small burst, so its limit is the need
 * times a <em>headroom</em>, rounded up:
 *
 * <pre>{@code
 * double need = Sizing.need(40, Duration.ofMillis(50));                      // 2.0
 * int checkout = Sizing.limit(need, Sizing.CRITICAL_HEADROOM);               // 6
 * int reports = Sizing.limit(Sizing.need(2, Duration.ofMillis(1500)),        // need 3.0
 *     Sizing.OPTIONAL_HEADROOM);                                             // 4
 * }</pre>
 *
 * <p>The headroom is a judgement, not a law: about three times the need for a fast path the
 * business depends on, a third above it for a slow optional one, whose rejections cost little and
 * whose slots are better left to others. Then check that the compartments drawing on one real
 * resource fit within it, with a {@link Budget}.
 *
 * <p>Rates are calls per second as a {@code double}, latencies are {@link Duration}s. Every method
 * rejects nonsense input (zero, negative, NaN or infinite) with an {@link IllegalArgumentException}
 * that names the argument and its value.
 */
public final class Sizing {

  /** About three times the need: for a fast path the business depends on (checkout, login). */
  public static final double CRITICAL_HEADROOM = 3.0;

  /** A third above the need: for a slow, optional path (reports, exports) that may be refused. */
  public static final double OPTIONAL_HEADROOM = 4.0 / 3.0;

  /**
   * How close to a whole number a product must be to count as that number. Rates and headrooms such
   * as 0.1/s or 4/3 have no exact binary form, so 3 × (4/3) can come out a hair above 4; without
   * the tolerance that hair would cost a whole slot.
   */
  private static final double WHOLE_TOLERANCE = 1e-9;

  private Sizing() {}

  /**
   * Returns the average number of calls in flight for this arrival rate and latency (Little's law:
   * {@code need = rate × latency}).
   *
   * @param callsPerSecond how many calls arrive per second; finite and above zero
   * @param latency how long each call holds its slot on average; above zero
   * @throws IllegalArgumentException if either argument is zero, negative, NaN or infinite, or the
   *     result is too large to be a number of calls
   */
  public static double need(double callsPerSecond, Duration latency) {
    requirePositive("callsPerSecond", callsPerSecond);
    Objects.requireNonNull(latency, "latency");
    if (latency.isNegative() || latency.isZero()) {
      throw new IllegalArgumentException("latency must be above zero but was " + latency);
    }
    // Nanoseconds as a double keep whole rates exact: 40 × 50_000_000 / 1e9 is exactly 2.
    double need =
        Durations.exceedsNanos(latency)
            ? callsPerSecond * seconds(latency)
            : callsPerSecond * latency.toNanos() / 1e9;
    if (Double.isInfinite(need) || need > Integer.MAX_VALUE) {
      throw new IllegalArgumentException(
          "need of "
              + callsPerSecond
              + " calls/s x "
              + latency
              + " is "
              + need
              + " calls in flight, more than a compartment can hold");
    }
    return need;
  }

  /**
   * Returns the limit for a compartment with this need and headroom: {@code need × headroom},
   * rounded up to a whole number of calls (and so at least 1).
   *
   * @param need the average number of calls in flight, from {@link #need}; finite and above zero
   * @param headroom the factor above the need; finite and at least 1 (a limit below the need
   *     rejects calls even when nothing is wrong)
   * @throws IllegalArgumentException if {@code need} is zero, negative, NaN or infinite, if {@code
   *     headroom} is below 1, NaN or infinite, or if the limit would exceed {@link
   *     Integer#MAX_VALUE}
   */
  public static int limit(double need, double headroom) {
    requirePositive("need", need);
    requireHeadroom(headroom);
    double exact = need * headroom;
    if (!(exact <= Integer.MAX_VALUE)) {
      throw new IllegalArgumentException(
          "limit for need "
              + need
              + " x headroom "
              + headroom
              + " is "
              + exact
              + ", more than a compartment can hold");
    }
    return roundUp(exact);
  }

  /**
   * Checks a headroom factor; for callers (configuration loaders, advisors) that accept one before
   * they have a need to apply it to.
   *
   * @throws IllegalArgumentException if {@code headroom} is below 1, NaN or infinite
   */
  public static double requireHeadroom(double headroom) {
    if (!(headroom >= 1.0) || Double.isInfinite(headroom)) {
      throw new IllegalArgumentException(
          "headroom must be a finite factor of at least 1 (1 = exactly"
              + " the need) but was "
              + headroom);
    }
    return headroom;
  }

  /**
   * Rounds up, treating values within {@link #WHOLE_TOLERANCE} of a whole number as that number.
   */
  static int roundUp(double value) {
    double nearest = Math.rint(value);
    if (Math.abs(value - nearest) <= WHOLE_TOLERANCE * Math.max(1.0, nearest)) {
      return (int) Math.max(1.0, nearest);
    }
    return (int) Math.max(1.0, Math.ceil(value));
  }

  static double seconds(Duration d) {
    return d.getSeconds() + d.getNano() / 1e9;
  }

  private static void requirePositive(String name, double value) {
    if (!(value > 0.0) || Double.isInfinite(value)) {
      throw new IllegalArgumentException(
          name + " must be a finite number above zero but was " + value);
    }
  }
}
