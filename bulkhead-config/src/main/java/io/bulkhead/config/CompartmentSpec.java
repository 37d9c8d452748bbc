package io.bulkhead.config;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.QueueSettings;
import io.bulkhead.Sizing;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.OptionalDouble;

/**
 * A compartment as the file declares it, validated and sized: its limit is either given, or derived
 * from an expected rate and latency (the need, by Little's law) times the headroom of its
 * criticality.
 *
 * <p>This class is immutable.
 */
public final class CompartmentSpec implements QueueSettings.Holder {

  private final String name;
  private final String path;
  private final int line;
  private final int limit;
  private final boolean limitDerived;
  private final QueueSettings queue;
  private final String budget; // null: none
  private final Criticality criticality; // null: not given
  private final double rate; // NaN: not given
  private final Duration latency; // null: not given
  private final Headroom headroom; // the one applied when derived; null otherwise
  private final boolean workerPool;
  private final boolean virtualThreads;
  private final boolean cpuBound;
  private final List<String> paths;
  private final String upstream; // null: none
  private final AdaptiveLimit adaptive; // null: a static limit

  CompartmentSpec(
      String name,
      String path,
      int line,
      int limit,
      boolean limitDerived,
      QueueSettings queue,
      String budget,
      Criticality criticality,
      double rate,
      Duration latency,
      Headroom headroom,
      boolean workerPool,
      boolean virtualThreads,
      boolean cpuBound,
      List<String> paths,
      String upstream,
      AdaptiveLimit adaptive) {
    this.name = name;
    this.path = path;
    this.line = line;
    this.limit = limit;
    this.limitDerived = limitDerived;
    this.queue = queue;
    this.budget = budget;
    this.criticality = criticality;
    this.rate = rate;
    this.latency = latency;
    this.headroom = headroom;
    this.workerPool = workerPool;
    this.virtualThreads = virtualThreads;
    this.cpuBound = cpuBound;
    this.paths = List.copyOf(paths);
    this.upstream = upstream;
    this.adaptive = adaptive;
  }

  public String name() {
    return name;
  }

  /**
   * The adaptive limit ({@code adaptive: {controller, min, max, interval}}), whose starting limit
   * is {@link #limit()}; empty for a static limit.
   */
  public Optional<AdaptiveLimit> adaptive() {
    return Optional.ofNullable(adaptive);
  }

  /** The line of the file where the compartment is declared; 0 when not read from a file. */
  public int line() {
    return line;
  }

  /** Where the file declares it: {@code compartments.NAME} or {@code worker-pools.NAME}. */
  public String path() {
    return path;
  }

  /**
   * Whether this is a worker pool (from the file's {@code worker-pools} section): its limit is the
   * number of workers, and its queue holds jobs.
   */
  public boolean workerPool() {
    return workerPool;
  }

  /** Whether a worker pool runs its jobs on virtual threads. */
  public boolean virtualThreads() {
    return virtualThreads;
  }

  /**
   * Whether each call (or job) in flight keeps a core busy for most of its latency ({@code
   * cpu-bound: true}): rendering or compressing rather than waiting on a database or an upstream.
   * More of them in flight than the container has CPUs only queue for a core while holding their
   * slots.
   */
  public boolean cpuBound() {
    return cpuBound;
  }

  /**
   * The path patterns whose requests enter this compartment at a web edge ({@code paths}): an exact
   * path ({@code /login}) or a path and everything below it ({@code /chat/**}). Empty for none, and
   * always for a worker pool.
   */
  public List<String> paths() {
    return paths;
  }

  /**
   * The upstream whose outgoing calls enter this compartment ({@code upstream}): a base URL or a
   * host, as written.
   */
  public Optional<String> upstream() {
    return Optional.ofNullable(upstream);
  }

  /**
   * How many calls may be in flight (for a worker pool: jobs running), as given, inherited from
   * {@code defaults} or derived.
   */
  public int limit() {
    return limit;
  }

  /** Whether {@link #limit()} was derived from the rate, latency and headroom rather than given. */
  public boolean limitDerived() {
    return limitDerived;
  }

  /** {@link #maxQueue()} and {@link #maxWait()} together, as every builder takes them. */
  @Override
  public QueueSettings queue() {
    return queue;
  }

  /** The name of the budget the compartment draws on, if any. */
  public Optional<String> budget() {
    return Optional.ofNullable(budget);
  }

  public Optional<Criticality> criticality() {
    return Optional.ofNullable(criticality);
  }

  /** The expected arrival rate, in calls per second, if given. */
  public OptionalDouble rate() {
    return Double.isNaN(rate) ? OptionalDouble.empty() : OptionalDouble.of(rate);
  }

  /** The expected latency of one call, if given. */
  public Optional<Duration> latency() {
    return Optional.ofNullable(latency);
  }

  /** Rate × latency (Little's law), when both are given. */
  public OptionalDouble need() {
    return latency == null ? OptionalDouble.empty() : OptionalDouble.of(Sizing.need(rate, latency));
  }

  /** The headroom the derived limit was computed with; empty when the limit was given. */
  public Optional<Headroom> headroom() {
    return Optional.ofNullable(headroom);
  }

  /**
   * The factor by which the limit exceeds the need ({@code limit / need}): the headroom that the
   * compartment really has, whether its limit was derived or given. Empty without a need.
   */
  public OptionalDouble effectiveHeadroom() {
    OptionalDouble need = need();
    return need.isPresent()
        ? OptionalDouble.of(limit / need.getAsDouble())
        : OptionalDouble.empty();
  }

  @Override
  public String toString() {
    return "CompartmentSpec{name="
        + name
        + (workerPool ? ", worker pool" : "")
        + ", limit="
        + limit
        + (limitDerived ? " (derived)" : "")
        + ", maxQueue="
        + (queue.maxQueue().isPresent() ? queue.maxQueue().getAsInt() : "unbounded")
        + (budget != null ? ", budget=" + budget : "")
        + "}";
  }
}
