package io.bulkhead.insight;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Locale;
import java.util.Optional;

/**
 * What one compartment's recent numbers say about it, with the figures that led there. Produced by
 * an {@link Insight} each time it {@linkplain Insight#sample() samples}, by its {@link
 * Diagnostician}'s rules.
 *
 * <p>The figures describe the short window (by default the last 10 seconds) unless their name says
 * otherwise; {@link #explanation()} puts the ones that decided the {@link #state()} into a sentence
 * for a log line or a dashboard tooltip.
 *
 * <p>This class is immutable.
 */
public final class Diagnosis {

  /**
   * The conditions a compartment can be in, from harmless to the one that needs a look at the
   * dependency.
   */
  public enum State {
    /** Not at its limit for long and not rejecting in earnest: nothing to do. */
    HEALTHY,
    /**
     * In flight at the limit for most of the short window, without rejecting in earnest. The
     * compartment is doing its job; if it lasts, rejections are next.
     */
    SATURATED,
    /**
     * Rejecting a sustained share of calls while admitted calls take their normal time: the limit
     * is too low for today's demand, or demand grew. Raise the limit if the dependency has room, or
     * shed the extra load.
     */
    LIMIT_TOO_LOW,
    /**
     * Rejecting a sustained share of calls while admitted calls take much longer than normal: the
     * dependency itself is slowing down. Look at the dependency, not at the bulkhead; raising the
     * limit would only let more calls wait on it.
     */
    DEPENDENCY_DEGRADING
  }

  private final String name;
  private final State state;
  private final long inStateForNanos;
  private final boolean judged;
  private final long windowNanos;
  private final double saturation;
  private final double admittedRate;
  private final double rejectionRate;
  private final double rejectionRatio;
  private final double rejectionSpread;
  private final double longRejectionRate;
  private final long latencyNanos; // NONE when unknown
  private final long normalLatencyNanos; // NONE when not learnt yet
  private final String explanation;

  static final long NONE = -1;

  Diagnosis(
      String name,
      State state,
      long inStateForNanos,
      boolean judged,
      long windowNanos,
      double saturation,
      double admittedRate,
      double rejectionRate,
      double rejectionRatio,
      double rejectionSpread,
      double longRejectionRate,
      long latencyNanos,
      long normalLatencyNanos,
      String explanation) {
    this.name = name;
    this.state = state;
    this.inStateForNanos = inStateForNanos;
    this.judged = judged;
    this.windowNanos = windowNanos;
    this.saturation = saturation;
    this.admittedRate = admittedRate;
    this.rejectionRate = rejectionRate;
    this.rejectionRatio = rejectionRatio;
    this.rejectionSpread = rejectionSpread;
    this.longRejectionRate = longRejectionRate;
    this.latencyNanos = latencyNanos;
    this.normalLatencyNanos = normalLatencyNanos;
    this.explanation = explanation;
  }

  /** The compartment's name. */
  public String name() {
    return name;
  }

  /** The verdict. */
  public State state() {
    return state;
  }

  /** How long the compartment has been in {@link #state()}, as of the sample that produced this. */
  public Duration inStateFor() {
    return Duration.ofNanos(inStateForNanos);
  }

  /**
   * Whether the samples covered enough of the short window to judge. Until they do (just after the
   * compartment started being watched, or after a long pause in sampling) the previous state is
   * kept, {@link State#HEALTHY} at first, and {@link #explanation()} says so.
   */
  public boolean judged() {
    return judged;
  }

  /** The span the short-window figures were computed over: first to last sample within it. */
  public Duration window() {
    return Duration.ofNanos(windowNanos);
  }

  /**
   * The share of sampling intervals in the short window that ended with the compartment at its
   * limit (in flight reaching the limit), from 0 to 1.
   */
  public double saturation() {
    return saturation;
  }

  /** Calls admitted per second over the short window. */
  public double admittedRate() {
    return admittedRate;
  }

  /** Calls rejected per second over the short window, for any reason. */
  public double rejectionRate() {
    return rejectionRate;
  }

  /** Rejected calls as a share of the calls that asked (admitted plus rejected), from 0 to 1. */
  public double rejectionRatio() {
    return rejectionRatio;
  }

  /**
   * The share of sampling intervals in the short window with at least one rejection, from 0 to 1. A
   * single burst fills one interval; sustained rejection fills most of them.
   */
  public double rejectionSpread() {
    return rejectionSpread;
  }

  /**
   * Calls rejected per second over the long window (by default the last minute), for comparison.
   */
  public double longRejectionRate() {
    return longRejectionRate;
  }

  /**
   * How long admitted calls hold their slot now: the mean of the calls that finished in the last 10
   * seconds, or, when it is higher, the estimate from calls still in flight (mean in flight divided
   * by the completion rate, Little's law). The estimate matters when the dependency hangs: then
   * almost nothing finishes, and the few calls that do would make latency look normal. Empty when
   * no call finished and none was in flight.
   */
  public Optional<Duration> latency() {
    return latencyNanos == NONE ? Optional.empty() : Optional.of(Duration.ofNanos(latencyNanos));
  }

  /**
   * The admitted latency this compartment has when it is healthy: the median of the latencies
   * sampled while it was {@link State#HEALTHY} during the long window, leaving out the short window
   * that led out of HEALTHY (the start of an episode). While the compartment is in another state
   * for longer than the long window, the last learnt figure is kept, so a long incident does not
   * become the new normal. Empty until a healthy sample with finished calls has been seen.
   */
  public Optional<Duration> normalLatency() {
    return normalLatencyNanos == NONE
        ? Optional.empty()
        : Optional.of(Duration.ofNanos(normalLatencyNanos));
  }

  /**
   * {@link #latency()} divided by {@link #normalLatency()}; empty when either is unknown or zero.
   */
  public Optional<Double> latencyRatio() {
    if (latencyNanos == NONE || normalLatencyNanos == NONE || normalLatencyNanos == 0) {
      return Optional.empty();
    }
    return Optional.of((double) latencyNanos / normalLatencyNanos);
  }

  /** One sentence: the state and the figures that decided it. */
  public String explanation() {
    return explanation;
  }

  long latencyNanos() {
    return latencyNanos;
  }

  long normalLatencyNanos() {
    return normalLatencyNanos;
  }

  @Override
  public String toString() {
    return String.format(
        Locale.ROOT,
        "Diagnosis{name=%s, state=%s, for=%s, saturation=%.2f, admitted=%.2f/s, rejected=%.2f/s"
            + " (ratio %.3f, spread %.2f, long %.2f/s), latency=%s, normal=%s: %s}",
        name,
        state,
        Durations.format(inStateForNanos),
        saturation,
        admittedRate,
        rejectionRate,
        rejectionRatio,
        rejectionSpread,
        longRejectionRate,
        latencyNanos == NONE ? "unknown" : Durations.format(latencyNanos),
        normalLatencyNanos == NONE ? "unknown" : Durations.format(normalLatencyNanos),
        explanation);
  }
}
