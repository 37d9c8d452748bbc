package io.bulkhead;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.Arrays;

/**
 * The recent-window histograms of one compartment: admitted latency and queue wait.
 *
 * <p>Design: a ring of {@link #SLICES} one-second slices, each holding both histograms (bucket
 * counts, sum and max). A sample goes into the slice of the second it was taken in; {@link
 * #snapshot} merges the slices of the last {@link #WINDOW_SLICES} seconds. A slice is recycled when
 * a sample for a newer second lands on its ring position: the first recorder to move its epoch
 * forward (a CAS) clears it.
 *
 * <p>Concurrency: recording never locks and never allocates: a {@code floorDiv}, a volatile read of
 * the slice's epoch and two or three atomic adds. The ring is longer than the window so that the
 * slice being recycled is never one a reader of the window needs. Two races are accepted rather
 * than prevented, because the window is for dashboards and hints, not accounting (cumulative
 * counters in {@link BulkheadStats} are exact):
 *
 * <ul>
 *   <li>T1 wins the epoch CAS and starts clearing; T2 sees the new epoch and adds a sample; T1's
 *       clear then erases it. At most the samples of the instant of recycling are lost.
 *   <li>A reader merges slices while recorders add to them, so a snapshot can count a sample's
 *       bucket but not yet its sum. The next snapshot is consistent again.
 * </ul>
 *
 * A sample whose reading is older than its slice (a thread descheduled for over 16 seconds between
 * reading the ticker and recording) is dropped instead of corrupting a newer second.
 */
final class SlidingWindow {

  static final long SLICE_NANOS = 1_000_000_000L;
  static final int SLICES = 16;
  static final int WINDOW_SLICES = 10;

  private static final int B = Histograms.BUCKETS;
  private static final int LATENCY = 0;
  private static final int WAIT = B;
  private static final int LATENCY_SUM = 2 * B;
  private static final int LATENCY_MAX = 2 * B + 1;
  private static final int WAIT_SUM = 2 * B + 2;
  private static final int WAIT_MAX = 2 * B + 3;
  private static final int SIZE = 2 * B + 4;

  private static final VarHandle CELL = MethodHandles.arrayElementVarHandle(long[].class);
  private static final VarHandle EPOCH;

  static {
    try {
      EPOCH = MethodHandles.lookup().findVarHandle(Slice.class, "epoch", long.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  static final class Slice {
    // The second this slice holds; starts below any real second so the first sample claims it.
    volatile long epoch = Long.MIN_VALUE;
    final long[] cells = new long[SIZE];
  }

  private final Slice[] ring = new Slice[SLICES];

  SlidingWindow() {
    for (int i = 0; i < SLICES; i++) {
      ring[i] = new Slice();
    }
  }

  void recordLatency(long now, long nanos) {
    Slice s = slice(now);
    if (s != null) {
      add(s.cells, LATENCY, LATENCY_SUM, LATENCY_MAX, nanos);
    }
  }

  void recordWait(long now, long nanos) {
    Slice s = slice(now);
    if (s != null) {
      add(s.cells, WAIT, WAIT_SUM, WAIT_MAX, nanos);
    }
  }

  private static void add(long[] cells, int histogram, int sum, int max, long nanos) {
    long value = Math.max(0, nanos);
    CELL.getAndAdd(cells, histogram + Histograms.bucketOf(value), 1L);
    CELL.getAndAdd(cells, sum, value);
    long current = (long) CELL.getOpaque(cells, max);
    while (value > current) {
      long witness = (long) CELL.compareAndExchange(cells, max, current, value);
      if (witness == current) {
        break;
      }
      current = witness;
    }
  }

  private Slice slice(long now) {
    long epoch = Math.floorDiv(now, SLICE_NANOS);
    Slice s = ring[(int) (epoch & (SLICES - 1))];
    for (; ; ) {
      long e = s.epoch;
      if (e == epoch) {
        return s;
      }
      if (e > epoch) {
        return null;
      }
      if (EPOCH.compareAndSet(s, e, epoch)) {
        Arrays.fill(s.cells, 0L);
        return s;
      }
    }
  }

  /** Returns {latency, queue wait} over the slices of the last {@link #WINDOW_SLICES} seconds. */
  LatencySummary[] snapshot(long now) {
    long newest = Math.floorDiv(now, SLICE_NANOS);
    long[] latency = new long[B];
    long[] wait = new long[B];
    long latencySum = 0;
    long latencyMax = 0;
    long waitSum = 0;
    long waitMax = 0;
    for (Slice s : ring) {
      long e = s.epoch;
      if (e > newest - WINDOW_SLICES && e <= newest) {
        long[] c = s.cells;
        for (int i = 0; i < B; i++) {
          latency[i] += (long) CELL.getOpaque(c, LATENCY + i);
          wait[i] += (long) CELL.getOpaque(c, WAIT + i);
        }
        latencySum += (long) CELL.getOpaque(c, LATENCY_SUM);
        latencyMax = Math.max(latencyMax, (long) CELL.getOpaque(c, LATENCY_MAX));
        waitSum += (long) CELL.getOpaque(c, WAIT_SUM);
        waitMax = Math.max(waitMax, (long) CELL.getOpaque(c, WAIT_MAX));
      }
    }
    return new LatencySummary[] {
      new LatencySummary(latency, latencySum, latencyMax),
      new LatencySummary(wait, waitSum, waitMax)
    };
  }
}
