package io.bulkhead.insight;

import java.time.Duration;

/**
 * The rules by which an {@link Insight} tells, for each compartment it watches, whether it is
 * healthy, saturated, limited too tightly, or waiting on a dependency that is slowing down. Both of
 * the last two reject calls; what tells them apart is whether the calls it admits still take their
 * usual time.
 *
 * <pre>{@code
 * Insight insight = Insight.builder()
 *     .diagnostician(Diagnostician.builder().shortWindow(Duration.ofSeconds(20)).build())
 *     .build();
 * }</pre>
 *
 * <p>Over the {@linkplain DiagnosticianBuilder#shortWindow short window} (10 seconds) of the
 * samples {@link Insight#sample()} takes, it weighs <b>saturation</b> (the share of intervals that
 * ended at the limit), the <b>rejection ratio and spread</b> (the share of calls rejected, and of
 * intervals with a rejection, so that one burst does not read as a trend), and the <b>admitted
 * latency</b> against the <b>normal latency</b> learnt while healthy. Rejecting in earnest with
 * latency at least {@link #DEFAULT_LATENCY_RISE_ENTER} times normal is {@link
 * Diagnosis.State#DEPENDENCY_DEGRADING}; with latency near normal, {@link
 * Diagnosis.State#LIMIT_TOO_LOW}; at the limit most of the time without rejecting, {@link
 * Diagnosis.State#SATURATED}; otherwise {@link Diagnosis.State#HEALTHY}. Each condition exits at a
 * lower level than it enters and must fill the short window, so a compartment at a threshold does
 * not flap and one spike never changes the state.
 *
 * <p>Sample about once a second, at least three times per short window; until samples cover half of
 * it the state is {@code HEALTHY} and {@link Diagnosis#judged()} is false. Immutable: one
 * diagnostician may serve several {@link Insight}s.
 */
public final class Diagnostician {

  /** Default {@linkplain DiagnosticianBuilder#shortWindow short window}: 10 seconds. */
  public static final Duration DEFAULT_SHORT_WINDOW = Duration.ofSeconds(10);

  /** Default {@linkplain DiagnosticianBuilder#longWindow long window}: 1 minute. */
  public static final Duration DEFAULT_LONG_WINDOW = Duration.ofMinutes(1);

  /** Saturated from 80% of the short window's intervals at the limit. */
  public static final double DEFAULT_SATURATION_ENTER = 0.8;

  /** Saturation ends below 50% of intervals at the limit. */
  public static final double DEFAULT_SATURATION_EXIT = 0.5;

  /** Rejections count from 5% of calls rejected. */
  public static final double DEFAULT_REJECTION_RATIO_ENTER = 0.05;

  /** Rejections stop counting below 1% of calls rejected. */
  public static final double DEFAULT_REJECTION_RATIO_EXIT = 0.01;

  /** Rejections count once half the short window's intervals contain one. */
  public static final double DEFAULT_REJECTION_SPREAD_ENTER = 0.5;

  /** Rejections stop counting once fewer than 20% of intervals contain one. */
  public static final double DEFAULT_REJECTION_SPREAD_EXIT = 0.2;

  /** The dependency is degrading from twice its normal latency (while rejecting). */
  public static final double DEFAULT_LATENCY_RISE_ENTER = 2.0;

  /** ... and stops being so below one and a half times. */
  public static final double DEFAULT_LATENCY_RISE_EXIT = 1.5;

  /** A rise of latency under 5 ms never counts as degrading. */
  public static final Duration DEFAULT_LATENCY_FLOOR = Duration.ofMillis(5);

  /** Fewer intervals than this in the short window cannot tell a burst from a trend. */
  static final int MIN_INTERVALS = 3;

  final long shortWindowNanos;
  final long longWindowNanos;
  final double saturationEnter;
  final double saturationExit;
  final double rejectionRatioEnter;
  final double rejectionRatioExit;
  final double rejectionSpreadEnter;
  final double rejectionSpreadExit;
  final double latencyRiseEnter;
  final double latencyRiseExit;
  final long latencyFloorNanos;

  Diagnostician(DiagnosticianBuilder b) {
    this.shortWindowNanos = b.shortWindowNanos();
    this.longWindowNanos = b.longWindowNanos();
    this.saturationEnter = b.saturationEnter();
    this.saturationExit = b.saturationExit();
    this.rejectionRatioEnter = b.rejectionRatioEnter();
    this.rejectionRatioExit = b.rejectionRatioExit();
    this.rejectionSpreadEnter = b.rejectionSpreadEnter();
    this.rejectionSpreadExit = b.rejectionSpreadExit();
    this.latencyRiseEnter = b.latencyRiseEnter();
    this.latencyRiseExit = b.latencyRiseExit();
    this.latencyFloorNanos = b.latencyFloorNanos();
  }

  /** Starts building a diagnostician with other thresholds. */
  public static DiagnosticianBuilder builder() {
    return new DiagnosticianBuilder();
  }

  /** Returns a diagnostician with the default thresholds. */
  public static Diagnostician create() {
    return builder().build();
  }

  /** A fresh history for the compartment named {@code name}, first watched at {@code now}. */
  SampleHistory history(String name, long now) {
    return new SampleHistory(this, name, now);
  }
}
