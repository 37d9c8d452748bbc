package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The semantics the compartment promises, each decided by held futures, latches and a fake clock
 * rather than by sleeps.
 */
class BulkheadSemanticsTest {

  private final FakeTicker ticker = new FakeTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, SECONDS)).isTrue();
  }

  /**
   * A compartment on the fake clock whose hand-offs and timeouts run on the test's thread, inside
   * the release or the sweep that causes them, so that a test can assert right after either. (By
   * default they run on the compartment's own threads; {@link IsolationTest} covers that.)
   */
  private Bulkhead fake(int limit, int maxQueue, Duration maxWait) {
    return Bulkhead.builder("test")
        .limit(limit)
        .maxQueue(maxQueue)
        .maxWait(maxWait)
        .ticker(ticker)
        .scheduler(scheduler)
        .executor(Runnable::run)
        .build();
  }

  /** Submits a call whose stage the test completes; returns the stage and the caller's future. */
  private static final class Held {
    final CompletableFuture<String> stage = new CompletableFuture<>();
    final AtomicBoolean started = new AtomicBoolean();
    CompletableFuture<String> result;

    Held submitTo(Bulkhead b) {
      result =
          b.submit(
              () -> {
                started.set(true);
                return stage;
              });
      return this;
    }
  }

  private static void assertSettled(Bulkhead b, int limit) {
    BulkheadStats s = b.stats();
    assertThat(s.inFlight()).as("in flight once settled").isZero();
    assertThat(s.waiting()).as("waiting once settled").isZero();
    List<Permit> all = new ArrayList<>();
    for (int i = 0; i < limit; i++) {
      Optional<Permit> p = b.tryAcquire();
      assertThat(p).as("slot %d of %d can be taken again", i + 1, limit).isPresent();
      all.add(p.get());
    }
    assertThat(b.tryAcquire()).as("no slot beyond the limit").isEmpty();
    all.forEach(Permit::close);
    assertThat(b.stats().inFlight()).isZero();
  }

  // --- limit and queue bound
  // ----------------------------------------------------------------------

  @Test
  void tryAcquire_neverExceedsLimit_andPermitCloseTwiceIsHarmless() {
    Bulkhead b = Bulkhead.builder("b").limit(2).build();
    Permit p1 = b.tryAcquire().orElseThrow();
    Permit p2 = b.tryAcquire().orElseThrow();
    assertThat(b.tryAcquire()).isEmpty();
    assertThat(b.stats().inFlight()).isEqualTo(2);
    p1.close();
    p1.close();
    assertThat(p1.isClosed()).isTrue();
    assertThat(b.stats().inFlight()).isEqualTo(1);
    assertThat(b.stats().completed()).isEqualTo(1);
    p2.close();
    assertThat(b.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(1);
    assertSettled(b, 2);
  }

  @Test
  void maxQueueZero_rejectsAtOnceWhenFull() throws Exception {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    Held first = new Held().submitTo(b);
    assertThatThrownBy(() -> b.call(() -> "never"))
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL);
              assertThat(e.bulkheadName()).isEqualTo("b");
              assertThat(e.getStackTrace()).isEmpty();
              assertThat(e.getMessage()).contains("'b'").contains("QUEUE_FULL");
            });
    CompletableFuture<String> second = b.submit(() -> CompletableFuture.completedFuture("never"));
    assertThat(second).isCompletedExceptionally();
    assertThat(b.stats().waiting()).isZero();
    first.stage.complete("ok");
    assertThat(first.result.get()).isEqualTo("ok");
    assertThat(b.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(2);
    assertSettled(b, 1);
  }

  @Test
  void fullQueue_rejectsFromOneReadOfTheState_withoutTheClockOrTheLock() throws Exception {
    // R7: with every slot taken and the queue at maxQueue, call and submit reject before reading
    // the
    // ticker (which would cost more than the rest of the rejection) or taking the queue's lock.
    java.util.concurrent.atomic.AtomicInteger reads =
        new java.util.concurrent.atomic.AtomicInteger();
    Ticker counting =
        () -> {
          reads.incrementAndGet();
          return ticker.read();
        };
    Bulkhead b =
        Bulkhead.builder("b")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofSeconds(1))
            .ticker(counting)
            .scheduler(scheduler)
            .build();
    Permit held = b.tryAcquire().orElseThrow();
    CompletableFuture<String> queued = b.submit(() -> CompletableFuture.completedFuture("queued"));
    assertThat(b.stats().waiting()).isEqualTo(1);
    int before = reads.get();
    assertThatThrownBy(() -> b.call(() -> "never"))
        .isInstanceOfSatisfying(
            BulkheadFullException.class, e -> assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL));
    assertThat(b.submit(() -> CompletableFuture.completedFuture("never")))
        .isCompletedExceptionally();
    assertThat(reads.get()).as("ticker reads while rejecting").isEqualTo(before);
    assertThat(b.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(2);
    held.close();
    assertThat(queued.get()).isEqualTo("queued");
    assertSettled(b, 1);
  }

  @Test
  void counts_stayExactAcrossTheCarryOfFastAdmissions() throws Exception {
    // The fast path counts admissions in 8 bits of the state word and carries every 256th (C1): a
    // thousand fast calls carry three times, and slow admissions are counted apart (I6).
    Bulkhead b = fake(2, 4, Duration.ofSeconds(1));
    for (int i = 0; i < 1000; i++) {
      assertThat(b.call(() -> "fast")).isEqualTo("fast");
      assertThat(b.stats().admitted()).isEqualTo(i + 1);
    }
    Permit first = b.tryAcquire().orElseThrow();
    Permit second = b.tryAcquire().orElseThrow();
    Held queued = new Held().submitTo(b);
    assertThat(b.stats().waiting()).isEqualTo(1);
    first.close(); // handed to the waiter: a slow admission
    second.close();
    BulkheadStats mid = b.stats();
    assertThat(mid.admitted()).isEqualTo(1003);
    assertThat(mid.inFlight()).isEqualTo(1);
    assertThat(mid.completed()).isEqualTo(1002);
    queued.stage.complete("ok");
    assertThat(queued.result.get()).isEqualTo("ok");
    assertThat(b.stats().admitted()).isEqualTo(1003);
    assertSettled(b, 2);
  }

  @Test
  void queueBound_neverMoreThanMaxQueueWait() {
    Bulkhead b = fake(1, 2, Duration.ofSeconds(1));
    Held running = new Held().submitTo(b);
    Held w1 = new Held().submitTo(b);
    Held w2 = new Held().submitTo(b);
    Held w3 = new Held().submitTo(b);
    assertThat(b.stats().waiting()).isEqualTo(2);
    assertThat(w3.result).isCompletedExceptionally();
    assertThat(w1.started).isFalse();
    running.stage.complete("a");
    w1.stage.complete("b");
    w2.stage.complete("c");
    assertThat(w2.result).isCompletedWithValue("c");
    assertSettled(b, 1);
  }

  // --- FIFO hand-off
  // ------------------------------------------------------------------------------

  @Test
  void freedSlot_goesToOldestWaiter_inOrder() {
    Bulkhead b = fake(1, 5, Duration.ofSeconds(10));
    Held running = new Held().submitTo(b);
    List<Held> waiters = new ArrayList<>();
    for (int i = 0; i < 5; i++) {
      waiters.add(new Held().submitTo(b));
    }
    CompletableFuture<String> previous = running.stage;
    for (Held w : waiters) {
      assertThat(w.started).isFalse();
      previous.complete("done");
      assertThat(w.started).as("the oldest waiter starts as soon as the slot frees").isTrue();
      assertThat(waiters.stream().filter(x -> x.started.get()).count())
          .isEqualTo(waiters.indexOf(w) + 1);
      previous = w.stage;
    }
    previous.complete("done");
    assertSettled(b, 1);
  }

  @Test
  void whileAnyoneWaits_noNewcomerTakesASlot_notEvenTryAcquire() throws Exception {
    Bulkhead b = fake(1, 5, Duration.ofSeconds(10));
    Permit holder = b.tryAcquire().orElseThrow();
    Held waiter = new Held().submitTo(b);
    assertThat(b.stats().waiting()).isEqualTo(1);
    // The slot is handed over inside close(): there is no instant at which it is free.
    holder.close();
    assertThat(waiter.started).isTrue();
    assertThat(b.tryAcquire()).isEmpty();
    Held later = new Held().submitTo(b);
    assertThat(later.started).isFalse();
    waiter.stage.complete("x");
    assertThat(later.started).isTrue();
    later.stage.complete("y");
    assertSettled(b, 1);
  }

  @Test
  void syncWaiters_areAdmittedInArrivalOrder() throws Exception {
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(3).maxWait(Duration.ofMinutes(1)).build();
    Permit holder = b.tryAcquire().orElseThrow();
    List<Integer> order = new ArrayList<>();
    List<Future<?>> futures = new ArrayList<>();
    for (int i = 0; i < 3; i++) {
      int id = i;
      futures.add(
          threads.submit(
              () ->
                  b.call(
                      () -> {
                        synchronized (
                            order) { // test bookkeeping only; the compartment never uses a monitor
                          order.add(id);
                        }
                        return null;
                      })));
      int queued = i + 1;
      await().atMost(Duration.ofSeconds(10)).until(() -> b.stats().waiting() == queued);
    }
    holder.close();
    for (Future<?> f : futures) {
      f.get(10, SECONDS);
    }
    assertThat(order).containsExactly(0, 1, 2);
    assertSettled(b, 1);
  }

  // --- giving up: timeout, interrupt, cancel
  // ------------------------------------------------------

  @Test
  void asyncWaiter_timesOut_onTheFakeClock_andIsNeverGrantedLater() {
    Bulkhead b = fake(1, 5, Duration.ofSeconds(1));
    Held running = new Held().submitTo(b);
    Held waiter = new Held().submitTo(b);
    assertThat(scheduler.pending()).isEqualTo(1);
    ticker.advance(Duration.ofMillis(999));
    scheduler.runDue();
    assertThat(waiter.result).isNotDone();
    ticker.advance(Duration.ofMillis(1));
    scheduler.runDue();
    assertThat(waiter.result).isCompletedExceptionally();
    assertThatThrownBy(waiter.result::join)
        .hasCauseInstanceOf(BulkheadFullException.class)
        .cause()
        .extracting(e -> ((BulkheadFullException) e).reason())
        .isEqualTo(Reason.WAIT_TIMEOUT);
    assertThat(b.stats().waiting()).isZero();
    running.stage.complete("done");
    assertThat(waiter.started).as("an expired waiter is never handed a slot").isFalse();
    assertThat(b.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
    assertSettled(b, 1);
  }

  @Test
  void sweep_expiresOnlyDueWaiters_andRearmsForTheNext() {
    Bulkhead b = fake(1, 5, Duration.ofSeconds(1));
    new Held().submitTo(b);
    Held w1 = new Held().submitTo(b);
    ticker.advance(Duration.ofMillis(400));
    Held w2 = new Held().submitTo(b);
    ticker.advance(Duration.ofMillis(600));
    scheduler.runDue();
    assertThat(w1.result).isCompletedExceptionally();
    assertThat(w2.result).isNotDone();
    assertThat(scheduler.pending()).as("re-armed for w2's deadline").isEqualTo(1);
    ticker.advance(Duration.ofMillis(400));
    scheduler.runDue();
    assertThat(w2.result).isCompletedExceptionally();
    assertThat(scheduler.pending()).as("nothing left to time").isZero();
  }

  @Test
  void unboundedWait_neverArmsATimer() {
    Bulkhead b =
        Bulkhead.builder("server")
            .limit(1)
            .unboundedQueue()
            .unboundedWait()
            .ticker(ticker)
            .scheduler(scheduler)
            .executor(Runnable::run)
            .build();
    Held running = new Held().submitTo(b);
    List<Held> waiters = new ArrayList<>();
    for (int i = 0; i < 100; i++) {
      waiters.add(new Held().submitTo(b));
    }
    ticker.advance(Duration.ofDays(365 * 200));
    scheduler.runDue();
    assertThat(scheduler.scheduledCount()).isZero();
    assertThat(waiters).allSatisfy(w -> assertThat(w.result).isNotDone());
    assertThat(b.config().maxQueue()).isEmpty();
    assertThat(b.config().maxWait()).isEmpty();
    running.stage.complete("x");
    waiters.forEach(w -> w.stage.complete("y"));
    assertThat(waiters).allSatisfy(w -> assertThat(w.result).isCompletedWithValue("y"));
    assertSettled(b, 1);
  }

  @Test
  void cancellingAQueuedFuture_removesTheWaiter() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    Held running = new Held().submitTo(b);
    Held waiter = new Held().submitTo(b);
    assertThat(b.stats().waiting()).isEqualTo(1);
    assertThat(waiter.result.cancel(true)).isTrue();
    assertThat(b.stats().waiting()).isZero();
    assertThat(b.stats().cancelled()).isEqualTo(1);
    Held next = new Held().submitTo(b);
    assertThat(b.stats().waiting()).as("its place in the queue is free again").isEqualTo(1);
    running.stage.complete("x");
    assertThat(waiter.started).isFalse();
    assertThat(next.started).isTrue();
    next.stage.complete("y");
    assertSettled(b, 1);
  }

  @Test
  void orTimeoutOnAQueuedFuture_removesTheWaiter() {
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(1).unboundedWait().build();
    Held running = new Held().submitTo(b);
    Held waiter = new Held().submitTo(b);
    CompletableFuture<String> timed =
        waiter.result.orTimeout(20, java.util.concurrent.TimeUnit.MILLISECONDS);
    assertThatThrownBy(timed::join).hasCauseInstanceOf(TimeoutException.class);
    await().atMost(Duration.ofSeconds(5)).until(() -> b.stats().waiting() == 0);
    running.stage.complete("x");
    assertThat(waiter.started).isFalse();
    assertSettled(b, 1);
  }

  @Test
  void cancellingAfterAdmission_forwardsToTheStage_andFreesTheSlotWhenTheStageCompletes() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    // A stage that, like a real client call, ends its work on its own schedule: cancelling our
    // future
    // must reach it, but the slot is held until the stage itself completes.
    AtomicBoolean cancelSeen = new AtomicBoolean();
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<String> stage =
        new CompletableFuture<>() {
          @Override
          public boolean cancel(boolean mayInterrupt) {
            cancelSeen.set(true);
            return false; // the work goes on until `work` completes
          }
        };
    work.whenComplete((v, e) -> stage.complete(v));
    CompletableFuture<String> result = b.submit(() -> stage);
    assertThat(result.cancel(true)).isTrue();
    assertThat(cancelSeen).isTrue();
    assertThat(b.stats().inFlight()).as("the dependency is still working").isEqualTo(1);
    assertThat(b.tryAcquire()).as("so no one else may reach it").isEmpty();
    work.complete("late");
    assertThat(b.stats().inFlight()).isZero();
    assertThat(result).isCancelled();
    assertSettled(b, 1);
  }

  @Test
  void cancellingAfterAdmission_ofAPlainFuture_cancelsItAndFreesTheSlot() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    Held call = new Held().submitTo(b);
    call.result.cancel(true);
    assertThat(call.stage).isCancelled();
    assertThat(b.stats().inFlight()).isZero();
    assertSettled(b, 1);
  }

  @Test
  void syncWaiter_timesOut_whenTheClockReachesMaxWait() throws Exception {
    Duration maxWait = Duration.ofMillis(100);
    CountDownLatch queued = new CountDownLatch(1);
    Bulkhead b =
        Bulkhead.builder("b")
            .limit(1)
            .maxQueue(1)
            .maxWait(maxWait)
            .ticker(ticker)
            .listener(
                new BulkheadListener() {
                  @Override
                  public void onQueued(Compartment bulkhead) {
                    queued.countDown();
                  }
                })
            .build();
    Permit holder = b.tryAcquire().orElseThrow();
    CompletableFuture<Long> waitedNanos = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              long start = ticker.read();
              try {
                b.call(() -> "never");
                waitedNanos.completeExceptionally(
                    new AssertionError("admitted while the slot was held"));
              } catch (BulkheadFullException e) {
                if (e.reason() == Reason.WAIT_TIMEOUT) {
                  waitedNanos.complete(ticker.read() - start);
                } else {
                  waitedNanos.completeExceptionally(e);
                }
              } catch (Throwable t) {
                waitedNanos.completeExceptionally(t);
              }
            });
    waiter.start();
    assertThat(queued.await(30, SECONDS)).isTrue();
    assertThat(b.stats().waiting()).isEqualTo(1);
    ticker.advance(maxWait); // the waiter sees its deadline when its park ends, and gives up
    assertThat(waitedNanos.get(30, SECONDS))
        .as("it gave up at maxWait on the ticker, not before")
        .isEqualTo(maxWait.toNanos());
    waiter.join();
    assertThat(b.stats().waiting()).isZero();
    assertThat(b.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
    holder.close();
    assertSettled(b, 1);
  }

  @Test
  void interruptedWaiter_leavesTheQueue_keepsItsInterruptStatus_andLeaksNothing() throws Exception {
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(1).unboundedWait().build();
    Permit holder = b.tryAcquire().orElseThrow();
    CompletableFuture<Reason> reason = new CompletableFuture<>();
    CompletableFuture<Boolean> stillInterrupted = new CompletableFuture<>();
    Thread waiter =
        new Thread(
            () -> {
              try {
                b.call(() -> "never");
                reason.complete(null);
              } catch (BulkheadFullException e) {
                reason.complete(e.reason());
              } catch (Exception e) {
                reason.completeExceptionally(e);
              }
              stillInterrupted.complete(Thread.currentThread().isInterrupted());
            });
    waiter.start();
    await().atMost(Duration.ofSeconds(10)).until(() -> b.stats().waiting() == 1);
    waiter.interrupt();
    assertThat(reason.get(10, SECONDS)).isEqualTo(Reason.INTERRUPTED);
    assertThat(stillInterrupted.get(10, SECONDS)).isTrue();
    waiter.join();
    assertThat(b.stats().waiting()).isZero();
    holder.close();
    assertThat(b.stats().rejected(Reason.INTERRUPTED)).isEqualTo(1);
    assertSettled(b, 1);
  }

  @Test
  void alreadyInterruptedCaller_isRejectedWithoutQueuing_butRunsWhenASlotIsFree() throws Exception {
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(1).unboundedWait().build();
    Thread.currentThread().interrupt();
    try {
      assertThat(b.call(() -> "free slot")).isEqualTo("free slot");
      Permit holder = b.tryAcquire().orElseThrow();
      assertThatThrownBy(() -> b.call(() -> "never"))
          .isInstanceOfSatisfying(
              BulkheadFullException.class,
              e -> assertThat(e.reason()).isEqualTo(Reason.INTERRUPTED));
      assertThat(Thread.currentThread().isInterrupted()).isTrue();
      assertThat(b.stats().waiting()).isZero();
      holder.close();
    } finally {
      Thread.interrupted();
    }
    assertSettled(b, 1);
  }

  // --- a slot is freed exactly once, whatever happens
  // -----------------------------------------------

  @Test
  void callThatThrows_freesItsSlot_andTheExceptionPassesThrough() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    IllegalStateException boom = new IllegalStateException("boom");
    assertThatThrownBy(
            () ->
                b.call(
                    () -> {
                      throw boom;
                    }))
        .isSameAs(boom);
    assertThatThrownBy(
            () ->
                b.call(
                    () -> {
                      throw new java.io.IOException("checked");
                    }))
        .isInstanceOf(java.io.IOException.class);
    assertThat(b.stats().completed()).isEqualTo(2);
    assertSettled(b, 1);
  }

  @Test
  void stageCompletingExceptionally_supplierThrowing_andNullStage_allFreeTheSlot() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    Held failing = new Held().submitTo(b);
    failing.stage.completeExceptionally(new IllegalStateException("upstream"));
    assertThatThrownBy(failing.result::join).hasCauseInstanceOf(IllegalStateException.class);

    CompletableFuture<String> thrown =
        b.submit(
            () -> {
              throw new IllegalArgumentException("supplier");
            });
    assertThatThrownBy(thrown::join).hasCauseInstanceOf(IllegalArgumentException.class);

    CompletableFuture<String> nul = b.submit(() -> null);
    assertThatThrownBy(nul::join)
        .hasCauseInstanceOf(NullPointerException.class)
        .hasMessageContaining("returned null");
    assertThat(b.stats().completed()).isEqualTo(3);
    assertSettled(b, 1);
  }

  @Test
  void throwingListener_isContained_andNeverStrandsASlot() throws Exception {
    AtomicInteger calls = new AtomicInteger();
    BulkheadListener evil =
        new BulkheadListener() {
          @Override
          public void onAdmitted(Compartment bulkhead, long waitedNanos) {
            calls.incrementAndGet();
            throw new IllegalStateException("listener bug");
          }

          @Override
          public void onReleased(Compartment bulkhead, long heldNanos) {
            calls.incrementAndGet();
            throw new OutOfMemoryError("pretend");
          }

          @Override
          public void onRejected(Compartment bulkhead, Reason reason) {
            calls.incrementAndGet();
            throw new IllegalStateException("listener bug");
          }
        };
    RecordingListener good = new RecordingListener();
    Bulkhead b = Bulkhead.builder("b").limit(1).listener(evil).listener(good).build();
    assertThat(b.call(() -> "ok")).isEqualTo("ok");
    Permit p = b.tryAcquire().orElseThrow();
    assertThat(b.tryAcquire()).isEmpty();
    p.close();
    assertThat(b.submit(() -> CompletableFuture.completedFuture(1)).join()).isEqualTo(1);
    assertThat(calls.get()).isEqualTo(7);
    assertThat(b.stats().listenerFailures()).isEqualTo(7);
    assertThat(good.events)
        .containsExactly(
            "admitted 0",
            "released",
            "admitted 0",
            "rejected QUEUE_FULL",
            "released",
            "admitted 0",
            "released");
    assertSettled(b, 1);
  }

  @Test
  void listeners_seeQueuedAdmittedAfterWaitAndCancelled() {
    RecordingListener events = new RecordingListener();
    Bulkhead b = fake(1, 2, Duration.ofSeconds(1));
    b.addListener(events);
    Held running = new Held().submitTo(b);
    Held waiter = new Held().submitTo(b);
    Held cancelled = new Held().submitTo(b);
    ticker.advance(Duration.ofMillis(250));
    cancelled.result.cancel(false);
    running.stage.complete("x");
    waiter.stage.complete("y");
    // The hand-off runs inline here (see fake()), so the waiter's admission comes inside the
    // release, before its onReleased; with the compartment's own threads the two are concurrent.
    assertThat(events.events)
        .containsExactly(
            "admitted 0",
            "queued",
            "queued",
            "cancelled 250",
            "admitted 250",
            "released",
            "released");
    assertThat(b.removeListener(events)).isTrue();
    assertThat(b.removeListener(events)).isFalse();
  }

  // --- setLimit
  // -----------------------------------------------------------------------------------

  @Test
  void raisingTheLimit_handsNewSlotsToWaitersAtOnce() {
    Bulkhead b = fake(1, 5, Duration.ofSeconds(1));
    Held running = new Held().submitTo(b);
    List<Held> waiters =
        List.of(new Held().submitTo(b), new Held().submitTo(b), new Held().submitTo(b));
    b.setLimit(3);
    assertThat(waiters.get(0).started).isTrue();
    assertThat(waiters.get(1).started).isTrue();
    assertThat(waiters.get(2).started).isFalse();
    assertThat(b.stats().inFlight()).isEqualTo(3);
    assertThat(b.stats().waiting()).isEqualTo(1);
    assertThat(b.config().limit()).isEqualTo(3);
    running.stage.complete("a");
    waiters.forEach(w -> w.stage.complete("b"));
    assertSettled(b, 3);
  }

  @Test
  void loweringTheLimit_letsInFlightFinish_andAdmitsNoOneUntilBelowTheNewLimit() {
    Bulkhead b = fake(4, 5, Duration.ofSeconds(1));
    List<Held> running = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      running.add(new Held().submitTo(b));
    }
    Held waiter = new Held().submitTo(b);
    b.setLimit(2); // returns at once: it never waits for calls to finish
    assertThat(b.stats().inFlight()).isEqualTo(4);
    running.get(0).stage.complete("x");
    running.get(1).stage.complete("x");
    assertThat(b.stats().inFlight()).isEqualTo(2);
    assertThat(waiter.started).as("2 in flight is not below the new limit of 2").isFalse();
    running.get(2).stage.complete("x");
    assertThat(waiter.started).as("now there is room").isTrue();
    assertThat(b.stats().inFlight()).isEqualTo(2);
    running.get(3).stage.complete("x");
    waiter.stage.complete("y");
    assertSettled(b, 2);
  }

  @Test
  void setLimit_rejectsNonsense() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    assertThatThrownBy(() -> b.setLimit(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("limit")
        .hasMessageContaining("0");
    assertThat(b.config().limit()).isEqualTo(1);
  }

  // --- stats
  // --------------------------------------------------------------------------------------

  @Test
  void stats_countEveryOutcome_andMeasureAdmittedLatencyOnTheFakeClock() throws Exception {
    Bulkhead b = fake(2, 1, Duration.ofSeconds(1));
    for (int i = 1; i <= 4; i++) {
      int millis = i * 100;
      b.call(
          () -> {
            ticker.advance(Duration.ofMillis(millis));
            return null;
          });
    }
    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(4);
    assertThat(s.completed()).isEqualTo(4);
    assertThat(s.latency().count()).isEqualTo(4);
    assertThat(s.latency().max()).isEqualTo(Duration.ofMillis(400));
    assertThat(s.latency().mean()).isEqualTo(Duration.ofMillis(250));
    // Percentiles come from buckets a quarter of a power of two wide: within 12.5% of the truth.
    assertThat(s.latency().p50().toMillis()).isBetween(175L, 225L);
    assertThat(s.latency().p99()).isEqualTo(Duration.ofMillis(400));
    assertThat(s.window()).isEqualTo(Duration.ofSeconds(10));
    ticker.advance(Duration.ofSeconds(11));
    assertThat(b.stats().latency().count()).as("the window moved on").isZero();
    assertThat(b.stats().completed()).as("counters never go down").isEqualTo(4);
  }

  @Test
  void latency_fastCallsWithRoomToSpareAreTimedSparsely_everythingThatCanMatterIsTimed()
      throws Exception {
    Bulkhead b = fake(4, 0, Duration.ZERO);
    // The first call is timed; it took no time on the fake clock, so fast calls become sparse.
    b.call(() -> null);
    assertThat(b.stats().latency().count()).isEqualTo(1);
    for (int i = 0; i < DefaultBulkhead.SPARSE_SAMPLE; i++) {
      b.call(() -> null); // 3 of 4 slots free after admission: room to spare
    }
    assertThat(b.stats().latency().count()).as("one in 256 of the fast calls").isEqualTo(2);
    assertThat(b.stats().completed())
        .as("counters stay exact")
        .isEqualTo(DefaultBulkhead.SPARSE_SAMPLE + 1L);

    // More than half full: every call is timed.
    Permit p1 = b.tryAcquire().orElseThrow();
    Permit p2 = b.tryAcquire().orElseThrow();
    long before = b.stats().latency().count();
    for (int i = 0; i < 10; i++) {
      b.call(() -> null);
    }
    assertThat(b.stats().latency().count() - before).isEqualTo(10);
    p1.close();
    p2.close();

    // A listener gets every call's duration, so every call is timed while one is attached.
    List<Long> durations = new ArrayList<>();
    BulkheadListener listener =
        new BulkheadListener() {
          @Override
          public void onReleased(Compartment bulkhead, long heldNanos) {
            durations.add(heldNanos);
          }
        };
    b.addListener(listener);
    for (int i = 0; i < 10; i++) {
      b.call(
          () -> {
            ticker.advance(Duration.ofNanos(500));
            return null;
          });
    }
    assertThat(durations).hasSize(10).allSatisfy(d -> assertThat(d).isEqualTo(500L));
    b.removeListener(listener);

    // A slow call switches timing back on for every call.
    long timedSoFar = b.stats().latency().count();
    for (int i = 0;
        i < DefaultBulkhead.SPARSE_SAMPLE && b.stats().latency().count() == timedSoFar;
        i++) {
      b.call(
          () -> {
            ticker.advance(Duration.ofMillis(5));
            return null;
          });
    }
    long afterSlow = b.stats().latency().count();
    for (int i = 0; i < 10; i++) {
      b.call(() -> null);
    }
    assertThat(b.stats().latency().count() - afterSlow)
        .as("after a slow call every call is timed, until a timed one is fast again")
        .isEqualTo(1);
  }

  @Test
  void retryAfter_followsObservedServiceTimeAndQueueDepth() throws Exception {
    Bulkhead b = fake(2, 2, Duration.ofMillis(500));
    // Before anything finished, the estimate is maxWait per queue position and slot.
    List<Held> held = new ArrayList<>();
    for (int i = 0; i < 4; i++) {
      held.add(new Held().submitTo(b));
    }
    CompletableFuture<String> rejected = b.submit(() -> CompletableFuture.completedFuture("x"));
    BulkheadFullException e = (BulkheadFullException) catchCause(rejected);
    // (2 waiting + 1) x 500 ms / 2 slots
    assertThat(e.retryAfter()).isEqualTo(Duration.ofMillis(750));
    ticker.advance(Duration.ofSeconds(4));
    held.get(0).stage.complete("a"); // served in 4 s
    held.add(new Held().submitTo(b)); // the queue is full again: 2 waiting
    CompletableFuture<String> rejected2 = b.submit(() -> CompletableFuture.completedFuture("x"));
    BulkheadFullException e2 = (BulkheadFullException) catchCause(rejected2);
    // (2 waiting + 1) x 4 s observed service time / 2 slots
    assertThat(e2.retryAfter()).isEqualTo(Duration.ofSeconds(6));
  }

  private static Throwable catchCause(CompletableFuture<?> f) {
    try {
      f.get();
      throw new AssertionError("expected a failure");
    } catch (ExecutionException e) {
      return e.getCause();
    } catch (InterruptedException e) {
      throw new AssertionError(e);
    }
  }

  // --- no recursion
  // -------------------------------------------------------------------------------

  @Test
  void aLongQueueOfInstantStages_isDrainedWithoutDeepRecursion() throws Exception {
    int waiters = 50_000;
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(waiters).unboundedWait().build();
    Held first = new Held().submitTo(b);
    AtomicInteger ran = new AtomicInteger();
    List<CompletableFuture<Integer>> results = new ArrayList<>();
    for (int i = 0; i < waiters; i++) {
      results.add(b.submit(() -> CompletableFuture.completedFuture(ran.incrementAndGet())));
    }
    first.stage.complete("go"); // each waiter's stage completes at once, handing on to the next
    // Each hand-off starts the next call on the compartment's own threads, not inside the release.
    assertThat(results.get(waiters - 1).get(60, SECONDS)).isEqualTo(waiters);
    assertThat(ran.get()).isEqualTo(waiters);
    assertSettled(b, 1);
  }

  @Test
  void stagesThatRefuseInspection_orCallbacks_stillFreeTheSlot() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    // minimalCompletionStage() is a CompletableFuture whose isDone() throws.
    CompletableFuture<String> done = CompletableFuture.completedFuture("x");
    assertThat(b.submit(done::minimalCompletionStage).join()).isEqualTo("x");
    CompletableFuture<String> later = new CompletableFuture<>();
    CompletableFuture<String> result = b.submit(later::minimalCompletionStage);
    assertThat(b.stats().inFlight()).isEqualTo(1);
    later.complete("y");
    assertThat(result.join()).isEqualTo("y");
    // A stage that throws when given a callback: the slot is freed and the call fails with it.
    java.util.concurrent.CompletionStage<String> hostile =
        new CompletableFuture<String>() {
          @Override
          public CompletableFuture<String> whenComplete(
              java.util.function.BiConsumer<? super String, ? super Throwable> action) {
            throw new IllegalStateException("no callbacks here");
          }
        };
    CompletableFuture<String> refused = b.submit(() -> hostile);
    assertThatThrownBy(refused::join).hasCauseInstanceOf(IllegalStateException.class);
    assertSettled(b, 1);
  }

  @Test
  void dependentStages_arePlainFutures() {
    Bulkhead b = Bulkhead.builder("b").limit(1).build();
    CompletableFuture<Integer> f = b.submit(() -> CompletableFuture.completedFuture(1));
    CompletableFuture<Integer> g = f.thenApply(x -> x + 1);
    assertThat(g.getClass()).isEqualTo(CompletableFuture.class);
    assertThat(g.join()).isEqualTo(2);
    assertThatThrownBy(
            () ->
                b.submit(() -> CompletableFuture.failedFuture(new CancellationException())).join())
        .isInstanceOf(CancellationException.class);
    assertThatThrownBy(
            () ->
                b.submit(
                        () ->
                            CompletableFuture.supplyAsync(
                                () -> {
                                  throw new IllegalStateException("async");
                                }))
                    .join())
        .isInstanceOf(CompletionException.class);
    assertSettled(b, 1);
  }

  static final class RecordingListener implements BulkheadListener {
    final List<String> events = java.util.Collections.synchronizedList(new ArrayList<>());

    @Override
    public void onAdmitted(Compartment bulkhead, long waitedNanos) {
      events.add("admitted " + waitedNanos / 1_000_000);
    }

    @Override
    public void onQueued(Compartment bulkhead) {
      events.add("queued");
    }

    @Override
    public void onRejected(Compartment bulkhead, Reason reason) {
      events.add("rejected " + reason);
    }

    @Override
    public void onCancelled(Compartment bulkhead, long waitedNanos) {
      events.add("cancelled " + waitedNanos / 1_000_000);
    }

    @Override
    public void onReleased(Compartment bulkhead, long heldNanos) {
      events.add("released");
    }
  }
}
