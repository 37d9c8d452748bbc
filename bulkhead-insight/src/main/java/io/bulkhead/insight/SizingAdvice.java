package io.bulkhead.insight;

import io.bulkhead.BulkheadStats;
import io.bulkhead.LatencySummary;
import io.bulkhead.Sizing;
import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;
import java.util.OptionalDouble;
import java.util.OptionalInt;

/**
 * What a {@link SizingAdvisor} concluded about one compartment: the observed arrival rate and
 * latency, the need they imply (Little's law), and the limit it recommends with the compartment's
 * headroom.
 *
 * <p>Figures that could not be measured are empty rather than zero: there is no rate on the first
 * look at a compartment, no latency when no call finished within the stats window, and no need or
 * recommendation without both (or when nothing arrived). A JSON endpoint can write each empty value
 * as {@code null}; {@link #summary()} says in one line what a dashboard should show.
 *
 * <p>This class is immutable.
 */
public final class SizingAdvice {

  private final String name;
  private final int limit;
  private final int inFlight;
  private final double headroom;
  private final long spanNanos; // 0: no rate yet
  private final double arrivalRate;
  private final double rejectionRate;
  private final long latencyNanos; // 0: no call finished in the window
  private final long latencySamples;
  private final double need; // NaN: unknown
  private final int recommendedLimit; // 0: none

  SizingAdvice(
      BulkheadStats stats,
      double headroom,
      long spanNanos,
      double arrivalRate,
      double rejectionRate) {
    LatencySummary latency = stats.latency();
    this.name = stats.name();
    this.limit = stats.limit();
    this.inFlight = stats.inFlight();
    this.headroom = headroom;
    this.spanNanos = spanNanos;
    this.arrivalRate = arrivalRate;
    this.rejectionRate = rejectionRate;
    this.latencySamples = latency.count();
    this.latencyNanos = latency.count() == 0 ? 0 : Math.max(1, latency.mean().toNanos());
    if (spanNanos > 0 && arrivalRate > 0 && latencyNanos > 0) {
      this.need = arrivalRate * latencyNanos / 1e9;
      this.recommendedLimit =
          need > Integer.MAX_VALUE / headroom ? Integer.MAX_VALUE : Sizing.limit(need, headroom);
    } else {
      this.need = Double.NaN;
      this.recommendedLimit = 0;
    }
  }

  /** The compartment's name. */
  public String name() {
    return name;
  }

  /** The compartment's limit when the advice was taken. */
  public int limit() {
    return limit;
  }

  /** The headroom applied to the need. */
  public double headroom() {
    return headroom;
  }

  /** The span the rates were measured over; empty on the first look at a compartment. */
  public Optional<Duration> span() {
    return spanNanos > 0 ? Optional.of(Duration.ofNanos(spanNanos)) : Optional.empty();
  }

  /** Calls that arrived per second (admitted, rejected or withdrawn); empty on the first look. */
  public OptionalDouble arrivalRate() {
    return spanNanos > 0 ? OptionalDouble.of(arrivalRate) : OptionalDouble.empty();
  }

  /** Calls rejected per second; empty on the first look. */
  public OptionalDouble rejectionRate() {
    return spanNanos > 0 ? OptionalDouble.of(rejectionRate) : OptionalDouble.empty();
  }

  /**
   * The mean time admitted calls held their slot, over the stats window; empty when none finished
   * within it.
   */
  public Optional<Duration> latency() {
    return latencyNanos > 0 ? Optional.of(Duration.ofNanos(latencyNanos)) : Optional.empty();
  }

  /** Arrival rate × latency: the calls in flight on average at that rate; empty when unknown. */
  public OptionalDouble need() {
    return Double.isNaN(need) ? OptionalDouble.empty() : OptionalDouble.of(need);
  }

  /** The need times the headroom, rounded up; empty when the need is unknown. */
  public OptionalInt recommendedLimit() {
    return recommendedLimit > 0 ? OptionalInt.of(recommendedLimit) : OptionalInt.empty();
  }

  /**
   * One line for a person: the arithmetic and how the current limit compares, for example {@code
   * "40/s × 50ms = need 2, ×3 → limit 6; the limit is 6: it fits"}.
   */
  public String summary() {
    if (spanNanos == 0) {
      return "first look at '" + name + "': the rate needs a second snapshot";
    }
    if (arrivalRate == 0) {
      return "no calls arrived in the last " + Durations.format(spanNanos) + ": nothing to size";
    }
    if (latencyNanos == 0) {
      return number(arrivalRate)
          + "/s arrived but no call finished in the stats window ("
          + inFlight
          + " in flight): the latency is unknown, and longer than the window";
    }
    StringBuilder sb =
        new StringBuilder()
            .append(number(arrivalRate))
            .append("/s × ")
            .append(Durations.format(latencyNanos))
            .append(" = need ")
            .append(number(need))
            .append(", ×")
            .append(number(headroom))
            .append(" → limit ")
            .append(recommendedLimit)
            .append("; the limit is ")
            .append(limit);
    if (recommendedLimit > limit) {
      sb.append(": below the recommendation");
      if (rejectionRate > 0) {
        sb.append(", ").append(number(rejectionRate)).append("/s rejected");
      }
    } else {
      sb.append(": it fits");
    }
    return sb.toString();
  }

  private static String number(double d) {
    if (d == Math.rint(d) && Math.abs(d) < 1e15) {
      return Long.toString((long) d);
    }
    return String.format(Locale.ROOT, d < 10 ? "%.2f" : "%.1f", d);
  }

  @Override
  public String toString() {
    return "SizingAdvice{name=" + name + ", " + summary() + "}";
  }
}
