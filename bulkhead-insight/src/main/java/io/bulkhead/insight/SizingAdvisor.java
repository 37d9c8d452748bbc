package io.bulkhead.insight;

import io.bulkhead.BulkheadStats;
import io.bulkhead.Sizing;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;
import java.util.Objects;

/**
 * Sizes compartments from what they have seen: Little's law applied to observed traffic. An {@link
 * Insight} applies it to every compartment it watches, at each {@linkplain Insight#sample()
 * sample}, and keeps the latest {@link SizingAdvice} for each.
 *
 * <p>At each sample the arrival rate is the calls that arrived (admitted, rejected or withdrawn)
 * per second since an earlier sample, the latency is the mean time admitted calls held their slot
 * over the stats window, and the need is their product. The recommended limit is the need times the
 * compartment's headroom, rounded up, as {@link Sizing#limit} computes it.
 *
 * <pre>{@code
 * SizingAdvisor advisor = SizingAdvisor.builder()
 *     .headroom(Sizing.CRITICAL_HEADROOM)              // for every compartment not named below
 *     .headroom("reports", Sizing.OPTIONAL_HEADROOM)
 *     .build();
 * Insight insight = Insight.builder().advisor(advisor).build();   // then watch and sample it
 * insight.advice("reports").ifPresent(a -> log.info(a.summary()));
 * }</pre>
 *
 * <p>For each compartment two samples at least {@link Builder#interval} apart are kept, and the
 * rate is measured from the older, so however often the insight samples, the rate covers between
 * one and two intervals and does not jump with the sampling. The first sample of a compartment has
 * nothing to compare with and reports no rate yet. The figures are estimates for a person to act
 * on; nothing here ever changes a limit.
 *
 * <p>Read the advice with the rejections in mind: rising rejections with a steady latency mean the
 * demand grew and the limit may be low; rising rejections with a rising latency mean the dependency
 * is slowing down, and a larger limit would only let it hold more of your threads. Immutable: one
 * advisor may serve several {@link Insight}s.
 */
public final class SizingAdvisor {

  /** The default interval: the span of the stats' latency window. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  private final double defaultHeadroom;
  private final Map<String, Double> headrooms;
  private final long intervalNanos;

  private SizingAdvisor(Builder b) {
    this.defaultHeadroom = b.defaultHeadroom;
    this.headrooms = Map.copyOf(b.headrooms);
    this.intervalNanos = b.interval.toNanos();
  }

  /**
   * Returns an advisor with the critical headroom ({@link Sizing#CRITICAL_HEADROOM}) for every
   * compartment and the default interval: it never advises starving a compartment.
   */
  public static SizingAdvisor create() {
    return builder().build();
  }

  /** Starts building an advisor. */
  public static Builder builder() {
    return new Builder();
  }

  /** The headroom this advisor applies to the compartment named {@code name}. */
  public double headroom(String name) {
    return headrooms.getOrDefault(Objects.requireNonNull(name, "name"), defaultHeadroom);
  }

  /**
   * The track after a sample taken at {@code now}: {@code previous} (null for the first sample of a
   * compartment) with the sample kept if an interval has passed since the newer one, and the advice
   * measured from the older sample. A pure function, so a caller may retry it in a compare-and-set
   * loop.
   */
  Track next(Track previous, long now, BulkheadStats stats) {
    Sample current =
        new Sample(now, stats.admitted() + stats.rejected() + stats.cancelled(), stats.rejected());
    Sample older;
    Sample newer;
    if (previous == null) {
      older = null;
      newer = current;
    } else if (now - previous.newer.at >= intervalNanos) {
      older = previous.newer;
      newer = current;
    } else {
      older = previous.older;
      newer = previous.newer;
    }
    Sample base = null;
    if (older != null && now - older.at > 0) {
      base = older;
    } else if (now - newer.at > 0) {
      base = newer;
    }
    double headroom = headroom(stats.name());
    SizingAdvice advice;
    if (base == null) {
      advice = new SizingAdvice(stats, headroom, 0, Double.NaN, Double.NaN);
    } else {
      long span = now - base.at;
      double seconds = span / 1e9;
      double arrivalRate = Math.max(0, current.arrivals - base.arrivals) / seconds;
      double rejectionRate = Math.max(0, current.rejected - base.rejected) / seconds;
      advice = new SizingAdvice(stats, headroom, span, arrivalRate, rejectionRate);
    }
    return new Track(older, newer, now, advice);
  }

  private static final class Sample {
    final long at;
    final long arrivals;
    final long rejected;

    Sample(long at, long arrivals, long rejected) {
      this.at = at;
      this.arrivals = arrivals;
      this.rejected = rejected;
    }
  }

  /**
   * What is kept of one compartment between samples: the two samples to measure from ({@code older}
   * is null until a second one is due), when the last sample was taken, and the advice it gave.
   * Immutable.
   */
  static final class Track {
    private final Sample older;
    private final Sample newer;
    final long sampledAt;
    final SizingAdvice advice;

    private Track(Sample older, Sample newer, long sampledAt, SizingAdvice advice) {
      this.older = older;
      this.newer = newer;
      this.sampledAt = sampledAt;
      this.advice = advice;
    }
  }

  /**
   * Builds a {@link SizingAdvisor}. The headrooms are checked as {@link Sizing#limit} checks them.
   *
   * <p>This class is <em>not</em> thread-safe.
   */
  public static final class Builder {

    private double defaultHeadroom = Sizing.CRITICAL_HEADROOM;
    private final Map<String, Double> headrooms = new HashMap<>();
    private Duration interval = DEFAULT_INTERVAL;

    private Builder() {}

    /**
     * Sets the headroom for compartments without one of their own; the default is {@link
     * Sizing#CRITICAL_HEADROOM}.
     *
     * @throws IllegalArgumentException if {@code headroom} is below 1, NaN or infinite
     */
    public Builder headroom(double headroom) {
      this.defaultHeadroom = Sizing.requireHeadroom(headroom);
      return this;
    }

    /**
     * Sets the headroom for the compartment named {@code compartment}.
     *
     * @throws IllegalArgumentException if {@code headroom} is below 1, NaN or infinite
     */
    public Builder headroom(String compartment, double headroom) {
      Objects.requireNonNull(compartment, "compartment");
      headrooms.put(compartment, Sizing.requireHeadroom(headroom));
      return this;
    }

    /**
     * Sets the shortest span the arrival rate is measured over; the default is {@link
     * #DEFAULT_INTERVAL}.
     *
     * @throws IllegalArgumentException if {@code interval} is zero, negative, or longer than a day
     */
    public Builder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.isNegative()
          || interval.isZero()
          || interval.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException(
            "interval must be above zero and at most a day but was " + interval);
      }
      this.interval = interval;
      return this;
    }

    /** Returns a new advisor with these settings. */
    public SizingAdvisor build() {
      return new SizingAdvisor(this);
    }
  }
}
