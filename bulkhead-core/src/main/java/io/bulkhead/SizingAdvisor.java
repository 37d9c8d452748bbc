package io.bulkhead;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Sizes compartments from what they have seen: Little's law applied to observed traffic.
 *
 * <p>Each {@link #advise(Compartment)} takes a snapshot of the compartment's stats and compares it with an
 * earlier one: the arrival rate is the calls that arrived between them (admitted, rejected or withdrawn)
 * per second, the latency is the mean time admitted calls held their slot over the stats window, and
 * the need is their product. The recommended limit is the need times the compartment's headroom,
 * rounded up, as {@link Sizing#limit} computes it.
 *
 * <pre>{@code
 * SizingAdvisor advisor = SizingAdvisor.builder()
 *     .headroom(Sizing.CRITICAL_HEADROOM)              // for every compartment not named below
 *     .headroom("reports", Sizing.OPTIONAL_HEADROOM)
 *     .build();
 * for (Compartment b : registry.all()) {
 *   SizingAdvice advice = advisor.advise(b);           // call it from a dashboard poll or an endpoint
 *   System.out.println(advice.summary());
 * }
 * }</pre>
 *
 * <p>The advisor keeps, per compartment name, two snapshots at least {@link Builder#interval} apart
 * and measures from the older, so however often it is polled (a dashboard every second, an endpoint
 * now and then) the rate covers between one and two intervals and does not jump with the polling. The
 * first call for a compartment has nothing to compare with and reports no rate yet. The figures it
 * derives are estimates for a person to act on; it never changes a limit itself.
 *
 * <p>Read the advice with the rejections in mind: rising rejections with a steady latency mean the
 * demand grew and the limit may be low; rising rejections with a rising latency mean the dependency is
 * slowing down, and a larger limit would only let it hold more of your threads.
 *
 * <p>This class is thread-safe.
 */
public final class SizingAdvisor {

  /** The default interval: the span of the stats' latency window. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(10);

  private final double defaultHeadroom;
  private final Map<String, Double> headrooms;
  private final long intervalNanos;
  private final Ticker ticker;
  private final ConcurrentHashMap<String, Track> tracks = new ConcurrentHashMap<>();

  private SizingAdvisor(Builder b) {
    this.defaultHeadroom = b.defaultHeadroom;
    this.headrooms = Map.copyOf(b.headrooms);
    this.intervalNanos = b.interval.toNanos();
    this.ticker = b.ticker;
  }

  /**
   * Returns an advisor with the critical headroom ({@link Sizing#CRITICAL_HEADROOM}) for every
   * compartment, the default interval and the system ticker: it never advises starving a compartment.
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
   * Takes a snapshot of {@code bulkhead} and returns the advice for it. Cheap enough to call on every
   * dashboard refresh.
   */
  public SizingAdvice advise(Compartment bulkhead) {
    Objects.requireNonNull(bulkhead, "bulkhead");
    BulkheadStats stats = bulkhead.stats();
    long now = ticker.read();
    Sample current = new Sample(now, stats.admitted() + stats.rejected() + stats.cancelled(),
        stats.rejected());
    Track track = tracks.compute(bulkhead.name(), (name, previous) -> next(previous, bulkhead, current));
    Sample base = null;
    if (track.older != null && now - track.older.at > 0) {
      base = track.older;
    } else if (now - track.newer.at > 0) {
      base = track.newer;
    }
    double headroom = headroom(bulkhead.name());
    LatencySummary latency = stats.latency();
    if (base == null) {
      return new SizingAdvice(stats, headroom, 0, Double.NaN, Double.NaN, latency);
    }
    long span = now - base.at;
    double seconds = span / 1e9;
    double arrivalRate = Math.max(0, current.arrivals - base.arrivals) / seconds;
    double rejectionRate = Math.max(0, current.rejected - base.rejected) / seconds;
    return new SizingAdvice(stats, headroom, span, arrivalRate, rejectionRate, latency);
  }

  /**
   * Advises on every compartment of {@code registry}, in registration order: what a {@code /bulkheads}
   * endpoint or a dashboard refresh calls.
   */
  public List<SizingAdvice> adviseAll(BulkheadRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    List<SizingAdvice> all = new ArrayList<>();
    for (Compartment b : registry.all()) {
      all.add(advise(b));
    }
    return Collections.unmodifiableList(all);
  }

  /** Forgets what was seen of the compartment named {@code name}, for one that was removed. */
  public void forget(String name) {
    tracks.remove(name);
  }

  private Track next(Track previous, Compartment bulkhead, Sample current) {
    if (previous == null || previous.bulkhead != bulkhead) {
      return new Track(bulkhead, null, current); // new, or a new compartment under an old name
    }
    if (current.at - previous.newer.at >= intervalNanos) {
      return new Track(bulkhead, previous.newer, current);
    }
    return previous;
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

  /** The snapshots kept for one compartment: {@code older} is null until a second one is due. */
  private static final class Track {
    final Compartment bulkhead;
    final Sample older;
    final Sample newer;

    Track(Compartment bulkhead, Sample older, Sample newer) {
      this.bulkhead = bulkhead;
      this.older = older;
      this.newer = newer;
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
    private Ticker ticker = Ticker.system();

    private Builder() {}

    /**
     * Sets the headroom for compartments without one of their own; the default is
     * {@link Sizing#CRITICAL_HEADROOM}.
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
     * Sets the shortest span the arrival rate is measured over; the default is
     * {@link #DEFAULT_INTERVAL}.
     *
     * @throws IllegalArgumentException if {@code interval} is zero, negative, or longer than a day
     */
    public Builder interval(Duration interval) {
      Objects.requireNonNull(interval, "interval");
      if (interval.isNegative() || interval.isZero() || interval.compareTo(Duration.ofDays(1)) > 0) {
        throw new IllegalArgumentException(
            "interval must be above zero and at most a day but was " + interval);
      }
      this.interval = interval;
      return this;
    }

    /** Replaces the source of time, for tests; the default is {@link Ticker#system()}. */
    public Builder ticker(Ticker ticker) {
      this.ticker = Objects.requireNonNull(ticker, "ticker");
      return this;
    }

    public SizingAdvisor build() {
      return new SizingAdvisor(this);
    }
  }
}
