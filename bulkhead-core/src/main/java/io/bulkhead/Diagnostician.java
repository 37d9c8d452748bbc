package io.bulkhead;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.concurrent.locks.ReentrantLock;

/*
 * Concurrency
 * -----------
 * Three kinds of callers share a diagnostician: a sampler (one scheduler thread calling sample()),
 * readers (dashboard or JSON threads calling diagnosis()/diagnoses()), and membership changes (watch,
 * unwatch, and a registry's listener callbacks on whatever thread changed the registry).
 *
 * Membership is a copy-on-write array of Charts behind a volatile field; changes swap it under
 * `membership`. A reader reads the field once and each chart's volatile `latest`: no lock, no stats
 * read, no allocation beyond the list it returns. sample() also reads the field once, then reads each
 * compartment's stats with no lock held, and hands the sample to the chart, which takes its own lock
 * for the few microseconds of arithmetic (Chart's comment covers samplers racing each other).
 *
 *   T1 sample() has read the array including chart C; T2 unwatches C. T1 still records into C and
 *      publishes a Diagnosis on it; C is unreachable from the new array, so nobody sees it. Harmless.
 *   T1 sample() has read the array; T2 watches D. D is not sampled this round; its first Diagnosis
 *      ("not sampled yet") is present from the moment it is watched, so a reader never misses it.
 *   T1 removes compartment "x" from a registry and T2 registers a new "x": the registry calls
 *      onRemoved(old) and onAdded(new) outside its lock, so they may arrive in either order. Charts
 *      are keyed by identity for removal: onAdded(new) replaces the chart of the same name, and a late
 *      onRemoved(old) finds that the chart under "x" belongs to another compartment and leaves it.
 *   T1 registers "x" and T2 removes it at once: onRemoved(x) may arrive before onAdded(x) and find
 *      nothing. onAdded(x) checks under `membership` that the registry still holds x; if T2's removal
 *      came after that check, its onRemoved is still to come and removes the chart. Lock order is
 *      ours then the registry's; the registry never calls a listener while holding its own.
 */

/**
 * Watches compartments and tells, for each, whether it is healthy, saturated, limited too tightly, or
 * waiting on a dependency that is slowing down. Both of the last two reject calls; what tells them
 * apart is whether the calls it does admit still take their usual time.
 *
 * <pre>{@code
 * Diagnostician doctor = Diagnostician.create();
 * doctor.watch(registry);                                       // follows adds and removes
 * scheduler.scheduleAtFixedRate(doctor::sample, 1, 1, SECONDS); // you own the schedule
 * Diagnosis d = doctor.diagnosis("llm").orElseThrow();          // cheap: the last verdict
 * }</pre>
 *
 * <p>It is sample-based: each {@link #sample()} reads every watched compartment's
 * {@link Compartment#stats()} once and keeps the samples of the last {@linkplain
 * DiagnosticianBuilder#longWindow long window} (a minute by default). From them it works out, over
 * the {@linkplain DiagnosticianBuilder#shortWindow short window} (10 seconds):
 * <ul>
 *   <li><b>saturation</b>: the share of sampling intervals that ended with the compartment at its limit;
 *   <li><b>rejection ratio and spread</b>: the share of calls rejected, and the share of intervals
 *       with a rejection, so that one burst (one interval) does not read as a sustained problem;
 *   <li><b>admitted latency</b> against its <b>normal latency</b>, learnt while the compartment was
 *       healthy (see {@link Diagnosis#latency()} and {@link Diagnosis#normalLatency()}).
 * </ul>
 * Rejecting in earnest (ratio and spread both at their enter levels) with latency at least
 * {@link #DEFAULT_LATENCY_RISE_ENTER} times normal is {@link Diagnosis.State#DEPENDENCY_DEGRADING};
 * with latency near normal it is {@link Diagnosis.State#LIMIT_TOO_LOW}; at the limit most of the time
 * without rejecting is {@link Diagnosis.State#SATURATED}; otherwise {@link Diagnosis.State#HEALTHY}.
 * Every condition has a lower exit level than its enter level, so a compartment hovering at a
 * threshold does not flap; a condition must also fill the short window, so one spike never changes
 * the state.
 *
 * <p>Call {@link #sample()} about once a second, and at least three times per short window: with fewer
 * intervals the figures cannot tell a burst from a trend, and the previous state is kept. Until
 * samples cover half the short window the state is {@link Diagnosis.State#HEALTHY} and
 * {@link Diagnosis#judged()} is false.
 *
 * <p>This class is thread-safe. Reading diagnoses is lock-free and costs no stats read, so a dashboard
 * may ask as often as it likes.
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
  private final Ticker ticker;

  private final ReentrantLock membership = new ReentrantLock();
  private volatile Chart[] charts = new Chart[0];

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
    this.ticker = b.ticker();
  }

  /** Starts building a diagnostician with other thresholds or a fake ticker. */
  public static DiagnosticianBuilder builder() {
    return new DiagnosticianBuilder();
  }

  /** Returns a diagnostician with the default thresholds and the system ticker. */
  public static Diagnostician create() {
    return builder().build();
  }

  /**
   * Starts watching {@code bulkhead}. A compartment already watched is left as it is; one with the same
   * name but a different identity replaces it (its history starts afresh).
   */
  public void watch(Compartment bulkhead) {
    Objects.requireNonNull(bulkhead, "bulkhead");
    add(bulkhead, null);
  }

  private void add(Compartment bulkhead, BulkheadRegistry source) {
    membership.lock();
    try {
      if (source != null && source.find(bulkhead.name()).orElse(null) != bulkhead) {
        return; // removed again before we heard it was added: see the last interleaving above
      }
      Chart[] current = charts;
      for (int i = 0; i < current.length; i++) {
        if (current[i].bulkhead == bulkhead) {
          return;
        }
        if (current[i].bulkhead.name().equals(bulkhead.name())) {
          Chart[] next = current.clone();
          next[i] = new Chart(this, bulkhead, ticker.read());
          charts = next;
          return;
        }
      }
      Chart[] next = Arrays.copyOf(current, current.length + 1);
      next[current.length] = new Chart(this, bulkhead, ticker.read());
      charts = next;
    } finally {
      membership.unlock();
    }
  }

  /**
   * Watches every compartment of {@code registry}, now and as they are added, and forgets each when it
   * is removed.
   */
  public void watch(BulkheadRegistry registry) {
    Objects.requireNonNull(registry, "registry");
    registry.addListener(new BulkheadRegistry.Listener() {
      @Override
      public void onAdded(Compartment bulkhead) {
        add(bulkhead, registry);
      }

      @Override
      public void onRemoved(Compartment bulkhead) {
        unwatch(bulkhead);
      }
    });
  }

  /** Stops watching {@code bulkhead}; returns whether it was watched. */
  public boolean unwatch(Compartment bulkhead) {
    Objects.requireNonNull(bulkhead, "bulkhead");
    membership.lock();
    try {
      Chart[] current = charts;
      for (int i = 0; i < current.length; i++) {
        if (current[i].bulkhead == bulkhead) {
          Chart[] next = new Chart[current.length - 1];
          System.arraycopy(current, 0, next, 0, i);
          System.arraycopy(current, i + 1, next, i, current.length - i - 1);
          charts = next;
          return true;
        }
      }
      return false;
    } finally {
      membership.unlock();
    }
  }

  /**
   * Reads the stats of every watched compartment once and updates its diagnosis. Meant to be called
   * by one scheduler thread about once a second; concurrent calls are safe (a sample older than the
   * newest one a compartment has is dropped).
   */
  public void sample() {
    Chart[] current = charts;
    long now = ticker.read();
    for (Chart c : current) {
      c.record(now, c.bulkhead.stats());
    }
  }

  /** The latest diagnosis of the compartment named {@code name}, if it is watched. Lock-free. */
  public Optional<Diagnosis> diagnosis(String name) {
    Objects.requireNonNull(name, "name");
    for (Chart c : charts) {
      if (c.bulkhead.name().equals(name)) {
        return Optional.of(c.latest());
      }
    }
    return Optional.empty();
  }

  /** The latest diagnosis of every watched compartment, in the order they were first watched. */
  public List<Diagnosis> diagnoses() {
    Chart[] current = charts;
    List<Diagnosis> all = new ArrayList<>(current.length);
    for (Chart c : current) {
      all.add(c.latest());
    }
    return Collections.unmodifiableList(all);
  }

  @Override
  public String toString() {
    return "Diagnostician" + diagnoses();
  }
}
