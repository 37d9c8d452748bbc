package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/** Shared-vs-split slots and the slow-upstream experiment's compartment, as exact tests. */
class ScenariosTest {

  /**
   * Shared-vs-split slots: seven slots shared by reports and payments, or split 3/4. Ten report
   * calls hang on a gate, then four payment calls answer at once; only the counts matter.
   */
  @Test
  void sharedVsSplitSlots_sameCapacity_differentOutcome() {
    Bulkhead shared = Bulkhead.builder("shared").limit(7).build();
    int[] sharedCounts = scenario(shared, shared);
    assertThat(sharedCounts).containsExactly(7, 3, 0, 4);

    int[] splitCounts =
        scenario(
            Bulkhead.builder("reports").limit(3).build(),
            Bulkhead.builder("payments").limit(4).build());
    assertThat(splitCounts).containsExactly(3, 7, 4, 0);
  }

  /** Returns {reports accepted, reports rejected, payments accepted, payments rejected}. */
  private static int[] scenario(Bulkhead reports, Bulkhead payments) {
    CompletableFuture<String> gate = new CompletableFuture<>();
    List<CompletableFuture<String>> reportCalls = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      reportCalls.add(reports.submit(() -> gate));
    }
    List<CompletableFuture<String>> paymentCalls = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      paymentCalls.add(payments.submit(() -> CompletableFuture.completedFuture("paid")));
    }
    gate.complete("report");
    return new int[] {
      count(reportCalls, false), count(reportCalls, true),
      count(paymentCalls, false), count(paymentCalls, true)
    };
  }

  private static int count(List<CompletableFuture<String>> calls, boolean rejected) {
    int n = 0;
    for (CompletableFuture<String> c : calls) {
      boolean wasRejected =
          c.isCompletedExceptionally()
              && c.handle((v, e) -> e instanceof BulkheadFullException).join();
      if (wasRejected == rejected) {
        n++;
      }
    }
    return n;
  }

  /**
   * The slow-upstream experiment's compartment: limit 10, queue 20, wait 1 s; 80 concurrent
   * synchronous calls into a dependency slower than 1 s. Ten are admitted; fifty are rejected with
   * QUEUE_FULL at once, while the clock stands still; twenty wait, and are rejected with
   * WAIT_TIMEOUT when the clock reaches their deadline, not before. The clock is a fake ticker the
   * test moves, so "at once" and "after a second" are exact readings rather than windows a loaded
   * machine can miss.
   */
  @Test
  void slowUpstreamCompartment_10admitted_50rejectedAtOnce_20timeOutAtMaxWait() throws Exception {
    FakeTicker ticker = new FakeTicker();
    Duration maxWait = Duration.ofSeconds(1);
    CountDownLatch admitted = new CountDownLatch(10);
    CountDownLatch queued = new CountDownLatch(20);
    CountDownLatch queueFull = new CountDownLatch(50);
    CountDownLatch timedOut = new CountDownLatch(20);
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(10)
            .maxQueue(20)
            .maxWait(maxWait)
            .ticker(ticker)
            .listener(
                new BulkheadListener() {
                  @Override
                  public void onAdmitted(Compartment bulkhead, long waitedNanos) {
                    admitted.countDown();
                  }

                  @Override
                  public void onQueued(Compartment bulkhead) {
                    queued.countDown();
                  }
                })
            .build();
    CountDownLatch dependencyReleased = new CountDownLatch(1); // slower than 1 s: held by the test
    CountDownLatch allStarted = new CountDownLatch(80);
    ExecutorService pool = Executors.newFixedThreadPool(80);
    java.util.Queue<long[]> rejections = new java.util.concurrent.ConcurrentLinkedQueue<>();
    try {
      for (int i = 0; i < 80; i++) {
        pool.submit(
            () -> {
              allStarted.countDown();
              allStarted.await();
              long start = ticker.read();
              try {
                return llm.call(
                    () -> {
                      dependencyReleased.await();
                      return "answer";
                    });
              } catch (BulkheadFullException e) {
                rejections.add(new long[] {e.reason().ordinal(), ticker.read() - start});
                (e.reason() == Reason.QUEUE_FULL ? queueFull : timedOut).countDown();
                throw e;
              }
            });
      }
      // Every call has arrived and the clock has not moved: 10 in, 20 waiting, 50 turned away.
      assertThat(admitted.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(queued.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(queueFull.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(llm.stats().inFlight()).isEqualTo(10);
      assertThat(llm.stats().waiting()).isEqualTo(20);
      assertThat(llm.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(50);
      assertThat(llm.stats().rejected(Reason.WAIT_TIMEOUT)).as("no time has passed").isZero();
      assertThat(rejections)
          .hasSize(50)
          .allSatisfy(
              r -> {
                assertThat(r[0]).isEqualTo(Reason.QUEUE_FULL.ordinal());
                assertThat(r[1]).as("a QUEUE_FULL rejection waits for nothing").isZero();
              });

      // The clock reaches the deadline: the twenty waiters give up, each after exactly maxWait.
      ticker.advance(maxWait);
      assertThat(timedOut.await(30, TimeUnit.SECONDS)).isTrue();
      assertThat(rejections)
          .hasSize(70)
          .filteredOn(r -> r[0] == Reason.WAIT_TIMEOUT.ordinal())
          .hasSize(20)
          .allSatisfy(r -> assertThat(r[1]).isEqualTo(maxWait.toNanos()));
      assertThat(llm.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(50);
      assertThat(llm.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(20);
      assertThat(llm.stats().inFlight()).as("the admitted calls are still inside").isEqualTo(10);
    } finally {
      dependencyReleased.countDown();
      pool.shutdown();
      assertThat(pool.awaitTermination(30, TimeUnit.SECONDS)).isTrue();
    }
    assertThat(llm.stats().inFlight()).isZero();
    assertThat(llm.stats().waiting()).isZero();
    assertThat(llm.stats().completed()).isEqualTo(10);
  }
}
