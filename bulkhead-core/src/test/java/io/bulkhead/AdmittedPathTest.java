package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.testing.FakeTicker;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * What the lean admitted path still promises: fast calls of a compartment with room to spare are
 * timed one in {@link DefaultBulkhead#SPARSE_SAMPLE}, exactly, and a permit closed by two threads
 * at once frees its slot once.
 */
class AdmittedPathTest {

  @Test
  void fastCallsWithRoomToSpare_areTimedExactlyOneInTheSample() throws Exception {
    // The ticker never moves, so every timed call took 0 ns: fast, and sampling stays sparse.
    Bulkhead b = Bulkhead.builder("sampled").limit(1_000).ticker(new FakeTicker()).build();
    int calls = DefaultBulkhead.SPARSE_SAMPLE * 16; // 16 carries of the word's fast count (C1)
    for (int i = 0; i < calls; i++) {
      b.call(() -> "done");
    }
    assertThat(b.stats().latency().count()).isEqualTo(calls / DefaultBulkhead.SPARSE_SAMPLE);
    assertThat(b.stats().admitted()).isEqualTo(calls);
  }

  @Test
  void permitsThroughTryAcquireAndAcquire_countTheSameSample() {
    Bulkhead b = Bulkhead.builder("sampled").limit(1_000).ticker(new FakeTicker()).build();
    for (int i = 0; i < DefaultBulkhead.SPARSE_SAMPLE * 8; i++) {
      if (i % 2 == 0) {
        b.tryAcquire().orElseThrow().close();
      } else {
        b.acquire().close();
      }
    }
    assertThat(b.stats().latency().count()).isEqualTo(8);
    assertThat(b.stats().completed()).isEqualTo(DefaultBulkhead.SPARSE_SAMPLE * 8L);
  }

  @Test
  void aPermitClosedByTwoThreadsAtOnce_freesItsSlotOnce() throws Exception {
    Bulkhead b = Bulkhead.builder("once").limit(1).build();
    ExecutorService closers = Executors.newFixedThreadPool(2);
    try {
      for (int round = 0; round < 200; round++) {
        Permit permit = b.tryAcquire().orElseThrow();
        CyclicBarrier both = new CyclicBarrier(2);
        Future<?> first = closers.submit(() -> closeAfter(both, permit));
        Future<?> second = closers.submit(() -> closeAfter(both, permit));
        first.get(10, TimeUnit.SECONDS);
        second.get(10, TimeUnit.SECONDS);
        assertThat(permit.isClosed()).isTrue();
        // One slot: a second release would let a second permit in.
        Permit next = b.tryAcquire().orElseThrow();
        assertThat(b.tryAcquire()).as("round %d", round).isEmpty();
        next.close();
      }
      assertThat(b.stats().inFlight()).isZero();
      assertThat(b.stats().completed()).isEqualTo(400);
    } finally {
      closers.shutdownNow();
    }
  }

  private static Void closeAfter(CyclicBarrier barrier, Permit permit) throws Exception {
    barrier.await(10, TimeUnit.SECONDS);
    permit.close();
    return null;
  }
}
