package io.bulkhead.benchmarks.soak;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.LongConsumer;

/*
 * Algorithm: one dispatcher thread per arrival stream. Call k of a stream is due at
 * start + k * period; the thread parks until the earliest due call of all streams, starts it (a
 * non-blocking hand-off: an async HTTP send or a task for the database workers) with its due time,
 * and moves that stream's next due time on by one period. Arrivals follow the clock, not the
 * completions: when the machine stalls, the calls due meanwhile start late, back to back, and their
 * latencies count from when they were due, so a stall is never hidden by the generator slowing down.
 *
 * Invariants: once the loop has caught up, each stream has started exactly
 * floor(elapsed / period) + 1 calls; the loop returns at `end` and starts no call due at or after it.
 * Races: none inside; the streams and their next due times are the dispatcher thread's own, and
 * each call's start hands it to another thread (HttpClient's, the database workers') that records
 * its outcome.
 */

/** Starts calls at fixed rates until a deadline, whatever the responses do. */
final class OpenLoop {

  private record Stream(long periodNanos, LongConsumer start) {}

  private final List<Stream> streams = new ArrayList<>();

  /**
   * Adds a stream of {@code perSecond} calls; {@code start} gets each call's due time (nanoTime).
   */
  OpenLoop add(double perSecond, LongConsumer start) {
    streams.add(new Stream(Math.max(1, (long) (TimeUnit.SECONDS.toNanos(1) / perSecond)), start));
    return this;
  }

  /** Runs on the calling thread from {@code startNanos} until {@code endNanos} (nanoTime). */
  void run(long startNanos, long endNanos) {
    long[] next = new long[streams.size()];
    Arrays.fill(next, startNanos);
    while (true) {
      int earliest = 0;
      for (int i = 1; i < next.length; i++) {
        if (next[i] - next[earliest] < 0) {
          earliest = i;
        }
      }
      long due = next[earliest];
      if (due - endNanos >= 0) {
        return;
      }
      long wait = due - System.nanoTime();
      if (wait > 0) {
        LockSupport.parkNanos(wait);
        continue; // parking may return early: look again
      }
      Stream s = streams.get(earliest);
      s.start().accept(due);
      next[earliest] = due + s.periodNanos();
    }
  }
}
