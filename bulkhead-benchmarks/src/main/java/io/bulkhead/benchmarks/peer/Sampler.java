package io.bulkhead.benchmarks.peer;

import io.bulkhead.internal.DaemonThreads;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.LongFunction;

/*
 * Takes a sample of the app every `every` on one timer thread, until stopped.
 *
 * Algorithm: a single-thread ScheduledThreadPoolExecutor runs `tick` at a fixed rate; each tick
 * reads System.nanoTime() and asks the probe for a Point stamped with it. A late tick (a loaded
 * machine) is simply late: its stamp is when it ran, so the timeline stays true, only coarser.
 *
 * Invariants: `samples` and `failure` are written only by the timer thread. stop() shuts the
 * executor down and awaits its termination before it reads them; awaitTermination returning true
 * happens-after every task the executor ran, so the reader sees every write.
 *
 * Races: R1 stop() vs a tick in progress: shutdownNow() interrupts nothing we care about (a probe
 * does not block) and awaitTermination waits for the tick to finish; a tick that starts after
 * shutdown does not run. R2 a probe that throws: scheduleAtFixedRate would silently cancel every
 * later tick, so the tick catches the failure, keeps the first one and stops sampling; stop()
 * rethrows it.
 */
final class Sampler {

  private final ScheduledThreadPoolExecutor timer;
  private final LongFunction<Timeline.Point> probe;
  private final List<Timeline.Point> samples = new ArrayList<>();
  private RuntimeException failure;

  private Sampler(Duration every, LongFunction<Timeline.Point> probe) {
    this.probe = probe;
    this.timer = new ScheduledThreadPoolExecutor(1, DaemonThreads.named("peer-sampler"));
    timer.scheduleAtFixedRate(this::tick, 0, every.toNanos(), TimeUnit.NANOSECONDS);
  }

  /** Starts sampling at once; {@code probe} gets the {@link System#nanoTime()} of its sample. */
  static Sampler start(Duration every, LongFunction<Timeline.Point> probe) {
    return new Sampler(every, probe);
  }

  private void tick() {
    if (failure != null) {
      return;
    }
    try {
      samples.add(probe.apply(System.nanoTime()));
    } catch (RuntimeException e) {
      failure = e;
    }
  }

  /**
   * Stops sampling and returns the samples, oldest first.
   *
   * @throws IllegalStateException if a probe failed, or the timer did not stop within 10 s
   */
  List<Timeline.Point> stop() {
    timer.shutdownNow();
    try {
      if (!timer.awaitTermination(10, TimeUnit.SECONDS)) {
        throw new IllegalStateException("the sampler did not stop within 10 s");
      }
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new IllegalStateException("interrupted while stopping the sampler", e);
    }
    if (failure != null) {
      throw new IllegalStateException("sampling failed: " + failure, failure);
    }
    return List.copyOf(samples);
  }
}
