package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.BulkheadSemanticsTest.RecordingListener;
import io.bulkhead.spi.ProvisionalAdmission;
import io.bulkhead.spi.ProvisionalSlot;
import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CancellationException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * The two-step admission of io.bulkhead.spi: a provisional slot counts exactly what the compartment
 * would have counted had the call's whole wait happened in its own queue. Decided by a fake clock,
 * held stages and the test's own thread; the one concurrent test counts outcomes, not timings.
 */
class ProvisionalAdmissionTest {

  private final FakeTicker ticker = new FakeTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  private final RecordingListener events = new RecordingListener();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, SECONDS)).isTrue();
  }

  /**
   * Hand-offs and timeouts run on the test's thread, inside the release or sweep that causes them.
   */
  private Bulkhead fake(int limit, int maxQueue, Duration maxWait) {
    Bulkhead b =
        Bulkhead.builder("gate")
            .limit(limit)
            .maxQueue(maxQueue)
            .maxWait(maxWait)
            .ticker(ticker)
            .scheduler(scheduler)
            .executor(Runnable::run)
            .build();
    b.addListener(events);
    return b;
  }

  private static ProvisionalAdmission admission(Bulkhead b) {
    return ProvisionalAdmission.of(b).orElseThrow();
  }

  /** Sets the service estimate behind retryAfter: one call that held its slot for {@code held}. */
  private void oneCallOf(Bulkhead b, Duration held) {
    try (Permit p = b.acquire()) {
      ticker.advance(held);
    }
    events.events.clear();
  }

  @Test
  void aConfirmedSlotCountsOneAdmissionWithItsWholeWait() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalSlot slot = admission(b).tryAcquireProvisionally().orElseThrow();
    assertThat(b.stats().admitted()).as("nothing admitted while provisional").isZero();
    assertThat(b.stats().inFlight()).as("it holds the slot").isEqualTo(1);

    assertThat(slot.queued()).isTrue();
    assertThat(b.stats().inFlight()).as("waiting for something else: not in flight").isZero();
    assertThat(b.stats().waiting()).isEqualTo(1);
    assertThat(b.tryAcquire()).as("its slot is still taken").isEmpty();

    ticker.advance(Duration.ofMillis(300));
    assertThat(slot.confirm()).isTrue();
    ticker.advance(Duration.ofMillis(50));
    slot.close();
    slot.close();

    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(1);
    assertThat(s.completed()).isEqualTo(1);
    assertThat(s.rejected()).as("the tryAcquire above").isEqualTo(1);
    assertThat(s.cancelled()).isZero();
    assertThat(s.queueWait().count()).isEqualTo(1);
    assertThat(s.queueWait().max()).isEqualTo(Duration.ofMillis(300));
    assertThat(s.latency().max()).as("held from the confirmation").isEqualTo(Duration.ofMillis(50));
    assertThat(events.events)
        .containsExactly("queued", "rejected QUEUE_FULL", "admitted 300", "released");
    assertThat(slot.isClosed()).isTrue();
    assertThat(b.tryAcquire()).isPresent();
  }

  @Test
  void aSlotConfirmedAtOnceIsAnAdmissionWithoutWait() {
    Bulkhead b = fake(1, 0, Duration.ZERO);
    ProvisionalSlot slot = admission(b).acquireProvisionally();
    ticker.advance(Duration.ofMillis(7)); // the integration's own round trip: not a queue wait
    assertThat(slot.confirm()).isTrue();
    slot.close();
    assertThat(events.events).containsExactly("admitted 0", "released");
    assertThat(b.stats().queueWait().count()).isZero();
    assertThat(b.stats().admitted()).isEqualTo(1);
    assertThat(b.stats().completed()).isEqualTo(1);
  }

  @Test
  void aCallAdmittedAtOnceWithoutAnObjectCountsAsTryAcquiresDoes() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalAdmission admission = admission(b);
    int admitted = admission.admitAtOnce();
    assertThat(admitted).isNotEqualTo(ProvisionalAdmission.NOT_TAKEN);
    long admittedAt = admission.admittedAt(admitted);
    assertThat(b.stats().admitted()).as("counted by the CAS that took the slot").isEqualTo(1);
    assertThat(b.stats().inFlight()).as("it holds the slot").isEqualTo(1);
    assertThat(admission.admitAtOnce()).as("none free").isEqualTo(ProvisionalAdmission.NOT_TAKEN);
    assertThat(b.stats().rejected()).as("admitAtOnce counts no rejection").isZero();
    assertThat(b.tryAcquire()).as("its slot is still taken").isEmpty();

    ticker.advance(Duration.ofMillis(50));
    admission.releaseTaken(admitted, admittedAt);

    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(1);
    assertThat(s.completed()).isEqualTo(1);
    assertThat(s.inFlight()).isZero();
    assertThat(s.rejected()).as("the tryAcquire above").isEqualTo(1);
    assertThat(s.queueWait().count()).isZero();
    assertThat(s.latency().max())
        .as("timed, a listener being attached: held from admittedAt's reading")
        .isEqualTo(Duration.ofMillis(50));
    assertThat(events.events).containsExactly("admitted 0", "rejected QUEUE_FULL", "released");
    assertThat(b.tryAcquire()).isPresent();
  }

  @Test
  void admitAtOnceTakesNoSlotASlowerCallerIsOwedAndCountsNothingWhenNoneIsFree() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalAdmission admission = admission(b);
    Permit held = b.acquire();
    CompletableFuture<String> stage = new CompletableFuture<>();
    CompletableFuture<String> queued = b.submit(() -> stage);
    assertThat(b.stats().waiting()).isEqualTo(1);
    assertThat(admission.admitAtOnce()).isEqualTo(ProvisionalAdmission.NOT_TAKEN);

    held.close(); // handed to the waiter, not freed
    assertThat(admission.admitAtOnce())
        .as("the slot went to the waiter")
        .isEqualTo(ProvisionalAdmission.NOT_TAKEN);
    stage.complete("done");
    assertThat(queued).isCompletedWithValue("done");

    int admitted = admission.admitAtOnce();
    assertThat(admitted).isNotEqualTo(ProvisionalAdmission.NOT_TAKEN);
    admission.releaseTaken(admitted, admission.admittedAt(admitted));
    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(3);
    assertThat(s.completed()).isEqualTo(3);
    assertThat(s.rejected()).as("admitAtOnce's refusals are not counted").isZero();
  }

  @Test
  void aCodeAdmitAtOnceDidNotReturnIsRefused() {
    ProvisionalAdmission admission = admission(fake(1, 0, Duration.ZERO));
    assertThatThrownBy(() -> admission.admittedAt(ProvisionalAdmission.NOT_TAKEN))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("not a code admitAtOnce() returned: 0");
    assertThatThrownBy(() -> admission.releaseTaken(-1, 0L))
        .isInstanceOf(IllegalArgumentException.class);
  }

  @Test
  void anAbandonedSlotIsARejectionAndGoesToTheNextWaiterInLine() {
    Bulkhead b = fake(1, 2, Duration.ofSeconds(1));
    oneCallOf(b, Duration.ofMillis(200));
    ProvisionalSlot slot = admission(b).acquireProvisionally();
    assertThat(slot.queued()).isTrue();
    CompletableFuture<String> stage = new CompletableFuture<>();
    CompletableFuture<String> next = b.submit(() -> stage); // queues behind the provisional slot
    assertThat(b.stats().waiting()).isEqualTo(2);
    long admittedBefore = b.stats().admitted();

    ticker.advance(Duration.ofSeconds(1));
    BulkheadFullException e = slot.abandon(Reason.WAIT_TIMEOUT);

    assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
    assertThat(e.bulkheadName()).isEqualTo("gate");
    // The compartment's estimate: nobody left ahead, one 200 ms service time on one slot.
    assertThat(e.retryAfter()).isEqualTo(Duration.ofMillis(200));
    BulkheadStats s = b.stats();
    assertThat(s.rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
    assertThat(s.admitted()).as("only the waiter it was handed to").isEqualTo(admittedBefore + 1);
    assertThat(s.inFlight()).isEqualTo(1);
    assertThat(s.waiting()).isZero();
    // The slot is passed on before the rejection is reported, as a release passes it on first.
    assertThat(events.events)
        .containsExactly("queued", "queued", "admitted 1000", "rejected WAIT_TIMEOUT");

    slot.close(); // nothing: it was abandoned
    assertThat(slot.confirm()).isFalse();
    assertThat(slot.abandon(Reason.WAIT_TIMEOUT).reason()).isEqualTo(Reason.WAIT_TIMEOUT);
    assertThat(b.stats().rejected()).as("an abandoned slot is counted once").isEqualTo(1);
    stage.complete("done");
    assertThat(next.join()).isEqualTo("done");
    assertThat(events.events).endsWith("rejected WAIT_TIMEOUT", "released");
    assertThat(b.stats().completed()).isEqualTo(b.stats().admitted());
  }

  @Test
  void aSlotClosedBeforeItWasConfirmedCountsAsCancelled() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalSlot slot = admission(b).tryAcquireProvisionally().orElseThrow();
    assertThat(slot.queued()).isTrue();
    ticker.advance(Duration.ofMillis(100));
    slot.close();
    assertThat(slot.confirm()).as("withdrawn first").isFalse();

    BulkheadStats s = b.stats();
    assertThat(s.cancelled()).isEqualTo(1);
    assertThat(s.admitted()).isZero();
    assertThat(s.completed()).isZero();
    assertThat(s.rejected()).isZero();
    assertThat(s.waiting()).isZero();
    assertThat(events.events).containsExactly("queued", "cancelled 100");
    assertThat(b.tryAcquire()).as("the slot is free again").isPresent();
  }

  @Test
  void aConfirmedSlotCannotBeAbandoned() {
    Bulkhead b = fake(1, 0, Duration.ZERO);
    ProvisionalSlot slot = admission(b).acquireProvisionally();
    slot.confirm();
    assertThatThrownBy(() -> slot.abandon(Reason.QUEUE_FULL))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'gate'");
    slot.close();
    assertThat(b.stats().rejected()).isZero();
    assertThat(b.stats().completed()).isEqualTo(1);
  }

  @Test
  void queuedSharesMaxQueueWithTheCompartmentsOwnQueue() {
    Bulkhead b = fake(3, 2, Duration.ofSeconds(1));
    ProvisionalAdmission a = admission(b);
    ProvisionalSlot first = a.acquireProvisionally();
    ProvisionalSlot second = a.acquireProvisionally();
    Permit third = b.acquire();
    CompletableFuture<String> queuedHere = b.submit(() -> CompletableFuture.completedFuture("x"));
    assertThat(first.queued()).isTrue();
    assertThat(second.queued()).as("one here and one in the queue make maxQueue 2").isFalse();
    assertThat(b.stats().waiting()).isEqualTo(2);
    assertThat(second.abandon(Reason.QUEUE_FULL).reason()).isEqualTo(Reason.QUEUE_FULL);
    assertThat(queuedHere.join()).as("handed the abandoned slot").isEqualTo("x");

    Bulkhead noQueue = fake(1, 0, Duration.ZERO);
    ProvisionalSlot alone = admission(noQueue).acquireProvisionally();
    assertThat(alone.queued()).as("maxQueue 0: nobody waits").isFalse();
    alone.abandon(Reason.QUEUE_FULL);
    assertThat(noQueue.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(1);
    first.close();
    third.close();
  }

  @Test
  void aSlotThatWaitedInTheQueueIsQueuedOnceAndItsWaitRunsFromTheRequest() throws Exception {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(5));
    Permit held = b.acquire();
    events.events.clear();
    Future<ProvisionalSlot> waiter = threads.submit(() -> admission(b).acquireProvisionally());
    await().atMost(Duration.ofSeconds(10)).until(() -> b.stats().waiting() == 1);
    ticker.advance(Duration.ofMillis(100));
    held.close(); // hands the slot to the parked thread
    ProvisionalSlot slot = waiter.get(10, SECONDS);
    assertThat(b.stats().admitted()).as("the handed slot is provisional").isEqualTo(1);
    assertThat(slot.queued()).isTrue(); // waits on, for something else: no second onQueued
    ticker.advance(Duration.ofMillis(200));
    assertThat(slot.confirm()).isTrue();
    slot.close();
    // The parked thread reports onQueued itself, so it may come before or after the release.
    assertThat(events.events.subList(0, 2)).containsExactlyInAnyOrder("queued", "released");
    assertThat(events.events.subList(2, 4)).containsExactly("admitted 300", "released");
    assertThat(events.events).hasSize(4);
    assertThat(b.stats().admitted()).isEqualTo(2);
  }

  @Test
  void remainingWaitRunsFromTheRequestOrTheFirstWaitOfASlotTakenAtOnce() throws Exception {
    Bulkhead b = fake(1, 1, Duration.ofMillis(500));
    ProvisionalSlot atOnce = admission(b).acquireProvisionally();
    ticker.advance(Duration.ofMillis(100)); // the integration's in-memory attempt: not a wait
    assertThat(atOnce.queued()).isTrue();
    ticker.advance(Duration.ofMillis(200));
    assertThat(atOnce.remainingWaitNanos()).isEqualTo(Duration.ofMillis(300).toNanos());

    Future<ProvisionalSlot> waiter = threads.submit(() -> admission(b).acquireProvisionally());
    await().atMost(Duration.ofSeconds(10)).until(() -> b.stats().waiting() == 2);
    ticker.advance(Duration.ofMillis(150));
    assertThat(atOnce.confirm()).isTrue();
    atOnce.close(); // hands the slot to the parked thread
    ProvisionalSlot waited = waiter.get(10, SECONDS);
    ticker.advance(Duration.ofMillis(50));
    assertThat(waited.remainingWaitNanos())
        .as("its wait in the queue counts")
        .isEqualTo(Duration.ofMillis(300).toNanos());
    waited.close();

    ProvisionalSlot unbounded =
        admission(Bulkhead.builder("unbounded").limit(1).maxQueue(1).unboundedWait().build())
            .acquireProvisionally();
    assertThat(unbounded.remainingWaitNanos()).isEqualTo(Long.MAX_VALUE);
    unbounded.close();
  }

  @Test
  void lowerLimitWhileProvisionalSlotsAreHeldThenAbandonAndWithdrawThem() {
    Bulkhead b = fake(2, 0, Duration.ZERO);
    ProvisionalAdmission a = admission(b);
    ProvisionalSlot one = a.acquireProvisionally();
    ProvisionalSlot two = a.acquireProvisionally();
    b.setLimit(1);
    one.abandon(Reason.QUEUE_FULL); // absorbed by the lowering: no slot frees
    assertThat(b.tryAcquire()).isEmpty();
    two.close();
    Optional<Permit> p = b.tryAcquire();
    assertThat(p).isPresent();
    assertThat(b.tryAcquire()).as("never more than the new limit").isEmpty();
    p.get().close();
    BulkheadStats s = b.stats();
    assertThat(s.inFlight()).isZero();
    assertThat(s.cancelled()).isEqualTo(1);
    assertThat(s.rejected(Reason.QUEUE_FULL)).isEqualTo(3);
  }

  // --- submitProvisionally -----------------------------------------------------------------------

  @Test
  void submitProvisionally_confirmedAtOnce_isAnOrdinaryCall() {
    Bulkhead b = fake(1, 0, Duration.ZERO);
    CompletableFuture<String> work = new CompletableFuture<>();
    CompletableFuture<String> f =
        admission(b)
            .submitProvisionally(
                slot -> {
                  assertThat(slot.confirm()).isTrue();
                  return work;
                });
    assertThat(b.stats().inFlight()).isEqualTo(1);
    ticker.advance(Duration.ofMillis(40));
    work.complete("ok");
    assertThat(f.join()).isEqualTo("ok");
    assertThat(events.events).containsExactly("admitted 0", "released");
    assertThat(b.stats().latency().max()).isEqualTo(Duration.ofMillis(40));
    assertThat(b.stats().completed()).isEqualTo(1);
  }

  @Test
  void submitProvisionally_abandonedAfterWaitingInTheQueue_failsWithTheCountedRejection() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    Permit held = b.acquire();
    AtomicReference<ProvisionalSlot> given = new AtomicReference<>();
    CompletableFuture<String> leaseWait = new CompletableFuture<>();
    CompletableFuture<String> f =
        admission(b)
            .submitProvisionally(
                slot -> {
                  given.set(slot);
                  assertThat(slot.queued()).isTrue();
                  return leaseWait;
                });
    ticker.advance(Duration.ofMillis(400));
    held.close(); // hands the slot over; the task runs on the compartment's executor (here, inline)
    ProvisionalSlot slot = given.get();
    assertThat(b.stats().waiting()).as("still waiting, for the lease now").isEqualTo(1);
    assertThat(b.stats().inFlight()).isZero();

    ticker.advance(Duration.ofMillis(600));
    leaseWait.completeExceptionally(slot.abandon(Reason.WAIT_TIMEOUT));

    assertThatThrownBy(f::join).hasCauseInstanceOf(BulkheadFullException.class);
    BulkheadFullException e = (BulkheadFullException) catchCause(f);
    assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT);
    BulkheadStats s = b.stats();
    assertThat(s.admitted()).as("only the held permit").isEqualTo(1);
    assertThat(s.completed()).isEqualTo(1);
    assertThat(s.rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
    assertThat(s.inFlight()).isZero();
    assertThat(s.waiting()).isZero();
    assertThat(events.events)
        .containsExactly("admitted 0", "queued", "released", "rejected WAIT_TIMEOUT");
  }

  @Test
  void submitProvisionally_cancelledWhileProvisional_isWithdrawnAndTheLateConfirmationFails() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    AtomicReference<ProvisionalSlot> given = new AtomicReference<>();
    CompletableFuture<String> leaseWait = new CompletableFuture<>();
    CompletableFuture<String> f =
        admission(b)
            .submitProvisionally(
                slot -> {
                  given.set(slot);
                  slot.queued();
                  return leaseWait;
                });
    ticker.advance(Duration.ofMillis(250));
    assertThat(f.cancel(true)).isTrue();
    assertThat(leaseWait).as("the cancellation is forwarded to the task's stage").isCancelled();
    assertThat(given.get().confirm()).as("the lease that comes now is given back").isFalse();

    BulkheadStats s = b.stats();
    assertThat(s.cancelled()).isEqualTo(1);
    assertThat(s.admitted()).isZero();
    assertThat(s.rejected()).isZero();
    assertThat(s.inFlight()).isZero();
    assertThat(s.waiting()).isZero();
    assertThat(events.events).containsExactly("queued", "cancelled 250");
    assertThat(b.tryAcquire()).isPresent();
  }

  @Test
  void submitProvisionally_rejectedAndWithdrawnInTheQueueAsSubmitIs() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    Permit held = b.acquire();
    ProvisionalAdmission a = admission(b);
    CompletableFuture<String> queued =
        a.submitProvisionally(
            slot -> {
              throw new AssertionError("never started");
            });
    CompletableFuture<String> full =
        a.submitProvisionally(
            slot -> {
              throw new AssertionError("never started");
            });
    assertThat(((BulkheadFullException) catchCause(full)).reason()).isEqualTo(Reason.QUEUE_FULL);
    queued.cancel(true);
    held.close();
    assertThatThrownBy(queued::join).isInstanceOf(CancellationException.class);
    BulkheadStats s = b.stats();
    assertThat(s.cancelled()).isEqualTo(1);
    assertThat(s.rejected(Reason.QUEUE_FULL)).isEqualTo(1);
    assertThat(s.admitted()).isEqualTo(1);
    assertThat(s.inFlight()).isZero();
  }

  @Test
  void confirmRacingCloseCountsEachSlotOnceAndFreesItOnce() throws Exception {
    Bulkhead b = Bulkhead.builder("race").limit(1).build();
    ProvisionalAdmission a = admission(b);
    int rounds = 2_000;
    CyclicBarrier start = new CyclicBarrier(2);
    int confirmedWins = 0;
    for (int i = 0; i < rounds; i++) {
      ProvisionalSlot slot = a.tryAcquireProvisionally().orElseThrow();
      Future<Boolean> confirmer =
          threads.submit(
              () -> {
                start.await();
                return slot.confirm();
              });
      start.await(10, SECONDS);
      slot.close();
      if (confirmer.get(10, SECONDS)) {
        confirmedWins++; // the confirmation won: the close released an admitted call
      }
      assertThat(b.stats().inFlight()).as("round %d frees its slot", i).isZero();
    }
    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(confirmedWins);
    assertThat(s.completed()).isEqualTo(confirmedWins);
    assertThat(s.cancelled()).isEqualTo(rounds - confirmedWins);
    assertThat(s.rejected()).isZero();
  }

  @Test
  void confirmOwnedCountsAsConfirmDoes_withTheWholeWaitOfAQueuedSlot() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalSlot slot = admission(b).tryAcquireProvisionally().orElseThrow();
    assertThat(slot.queued()).isTrue();
    ticker.advance(Duration.ofMillis(120));
    slot.confirmOwned();
    assertThat(b.stats().waiting()).as("it left the wait (P3)").isZero();
    assertThat(b.stats().inFlight()).isEqualTo(1);
    ticker.advance(Duration.ofMillis(30));
    slot.close();

    BulkheadStats s = b.stats();
    assertThat(s.admitted()).isEqualTo(1);
    assertThat(s.completed()).isEqualTo(1);
    assertThat(s.queueWait().max()).isEqualTo(Duration.ofMillis(120));
    assertThat(s.latency().max()).isEqualTo(Duration.ofMillis(30));
    assertThat(events.events).containsExactly("queued", "admitted 120", "released");
    assertThatThrownBy(slot::confirmOwned)
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'gate'")
        .hasMessageContaining("left its provisional state");
  }

  @Test
  void closeRunsItsFirstStepOnceBeforeTheSlotGoesToTheNextWaiter() {
    Bulkhead b = fake(1, 1, Duration.ofSeconds(1));
    ProvisionalSlot slot = admission(b).acquireProvisionally();
    slot.confirmOwned();
    CompletableFuture<Object> next = b.submit(() -> CompletableFuture.completedFuture("ran"));
    assertThat(next).as("queued behind the slot").isNotDone();
    List<String> steps = new ArrayList<>();
    Consumer<String> first =
        label -> steps.add(label + (next.isDone() ? " after" : " before") + " the hand-off");

    slot.close(first, "given back");
    slot.close(first, "again");
    slot.close();

    assertThat(steps).containsExactly("given back before the hand-off");
    assertThat(next).isCompletedWithValue("ran");
    assertThat(b.stats().completed()).isEqualTo(2);
  }

  @Test
  void closeOfAProvisionalSlotRunsItsFirstStepAndCountsTheCallCancelled() {
    Bulkhead b = fake(1, 0, Duration.ZERO);
    ProvisionalSlot slot = admission(b).acquireProvisionally();
    List<String> steps = new ArrayList<>();
    slot.close(steps::add, "withdrawn");
    slot.close(steps::add, "again");
    assertThat(steps).containsExactly("withdrawn");
    assertThat(b.stats().cancelled()).isEqualTo(1);
    assertThat(b.stats().admitted()).isZero();
  }

  @Test
  void racingClosesRunTheFirstStepOnceAndFreeTheSlotOnce() throws Exception {
    Bulkhead b = Bulkhead.builder("race").limit(1).build();
    ProvisionalAdmission a = admission(b);
    int rounds = 2_000;
    CyclicBarrier start = new CyclicBarrier(2);
    AtomicInteger firstSteps = new AtomicInteger();
    for (int i = 0; i < rounds; i++) {
      ProvisionalSlot slot = a.tryAcquireProvisionally().orElseThrow();
      slot.confirmOwned();
      Future<?> other =
          threads.submit(
              () -> {
                start.await();
                slot.close(AtomicInteger::incrementAndGet, firstSteps);
                return null;
              });
      start.await(10, SECONDS);
      slot.close(AtomicInteger::incrementAndGet, firstSteps);
      other.get(10, SECONDS);
      assertThat(firstSteps.get()).as("round %d runs its first step once", i).isEqualTo(i + 1);
      assertThat(b.stats().inFlight()).as("round %d frees its slot", i).isZero();
    }
    assertThat(b.stats().admitted()).isEqualTo(rounds);
    assertThat(b.stats().completed()).isEqualTo(rounds);
  }

  private static Throwable catchCause(CompletableFuture<?> f) {
    try {
      f.join();
      throw new AssertionError("expected a failure");
    } catch (CompletionException e) {
      return e.getCause();
    }
  }
}
