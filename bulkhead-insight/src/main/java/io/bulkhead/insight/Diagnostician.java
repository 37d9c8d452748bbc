package io.bulkhead.insight;

import java.time.Duration;

/**
 * The rules by which an {@link Insight} tells, for each compartment it watches, whether it is
 * healthy, saturated, limited too tightly, or waiting on a dependency that is slowing down. Both of
 * the last two reject calls; what tells them apart is whether the calls it does admit still take
 * their usual time.
 *
 * <pre>{@code
 * Insight insight = Insight.builder()
 *     .diagnostician(Diagnostician.builder().shortWindow(Duration.ofSeconds(20)).build())
 *     .build();
 * insight.watch(registry);                                        // follows adds and removes
 * scheduler.scheduleAtFixedRate(insight::sample, 1, 1, SECONDS);  // you own the schedule
 * Diagnosis d = insight.diagnosis("llm").orElseThrow();           // cheap: the last verdict
 * }</pre>
 *
 * <p>It is sample-based: each {@link Insight#sample()} reads every watched compartment's {@link
 * io.bulkhead.Compartment#stats()} once, and the diagnosis keeps the samples of the last
 * {@linkplain DiagnosticianBuilder#longWindow long window} (a minute by default). From them it
 * works out, over the {@linkplain DiagnosticianBuilder#shortWindow short window} (10 seconds):
 *
 * <ul>
 *   <li><b>saturation</b>: the share of sampling intervals that ended with the compartment at its
 *       limit;
 *   <li><b>rejection ratio and spread</b>: the share of calls rejected, and the share of intervals
 *       with a rejection, so that one burst (one interval) does not read as a sustained problem;
 *   <li><b>admitted latency</b> against its <b>normal latency</b>, learnt while the compartment was
 *       healthy (see {@link Diagnosis#latency()} and {@link Diagnosis#normalLatency()}).
 * </ul>
 *
 * Rejecting in earnest (ratio and spread both at their enter levels) with latency at least {@link
 * #DEFAULT_LATENCY_RISE_ENTER} times normal is {@link Diagnosis.State#DEPENDENCY_DEGRADING}; with
 * latency near normal it is {@link Diagnosis.State#LIMIT_TOO_LOW}; at the limit most of the time
 * without rejecting is {@link Diagnosis.State#SATURATED}; otherwise {@link
 * Diagnosis.State#HEALTHY}. Every condition has a lower exit level than its enter level, so a
 * compartment hovering at a threshold does not flap; a condition must also fill the short window,
 * so one spike never changes the state.
 *
 * <p>Call {@link Insight#sample()} about once a second, and at least three times per short window:
 * with fewer intervals the figures cannot tell a burst from a trend, and the previous state is
 * kept. Until samples cover half the short window the state is {@link Diagnosis.State#HEALTHY} and
 * {@link Diagnosis#judged()} is false.
 *
 * <p>This class is immutable: one diagnostician may serve several {@link Insight}s.
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
