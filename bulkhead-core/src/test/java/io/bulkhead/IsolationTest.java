package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;
import java.util.function.BiConsumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * One compartment's users cannot stall another compartment, nor a call that was handed a slot:
 * every scenario holds a callback blocked on a latch that is released only at the end, and asserts
 * that the other party finishes while it is still held. The bound on each wait fires only on the
 * bug.
 */
class IsolationTest {

  private static final long BUG_BOUND_SECONDS = 10;
  private static final Duration SHORT_WAIT = Duration.ofMillis(100);

  private final CountDownLatch blocker = new CountDownLatch(1);
  private final List<Permit> held = new ArrayList<>();
  private final List<WorkerPool> pools = new ArrayList<>();

  @AfterEach
  void releaseEverything() throws InterruptedException {
    blocker.countDown();
    held.forEach(Permit::close);
    for (WorkerPool pool : pools) {
      pool.shutdown(Duration.ZERO);
    }
  }

  /** A compartment with one slot, taken by the test, and room for one waiter of maxWait. */
  private Bulkhead full(String name, BulkheadListener... listeners) {
    BulkheadBuilder builder = Bulkhead.builder(name).limit(1).maxQueue(1).maxWait(SHORT_WAIT);
    for (BulkheadListener l : listeners) {
      builder.listener(l);
    }
    Bulkhead b = builder.build();
    held.add(b.acquire());
    return b;
  }

  /**
   * Blocks the thread that runs it until the test ends; says where it ran through {@code where}.
   */
  private BiConsumer<Object, Throwable> blockingCallback(
      CountDownLatch entered, AtomicReference<Thread> where) {
    return (value, failure) -> {
      where.set(Thread.currentThread());
      entered.countDown();
      awaitQuietly(blocker);
    };
  }

  private static void awaitQuietly(CountDownLatch latch) {
    try {
      latch.await();
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  private static Throwable failureOf(CompletableFuture<?> f) throws Exception {
    try {
      f.get(BUG_BOUND_SECONDS, SECONDS);
    } catch (ExecutionException e) {
      return e.getCause();
    }
    throw new AssertionError("completed normally");
  }

  // --- D1: a compartment's timeouts fire whatever another compartment's users do
  // -------------------

  @Test
  void anOnRejectedListenerThatBlocks_doesNotDelayAnotherCompartmentsMaxWait() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicReference<Thread> where = new AtomicReference<>();
    BulkheadListener blocking =
        new BulkheadListener() {
          @Override
          public void onRejected(Compartment c, Reason reason) {
            blockingCallback(entered, where).accept(null, null);
          }
        };
    Bulkhead audit = full("audit", blocking);
    Bulkhead checkout = full("checkout");

    audit.submit(() -> CompletableFuture.completedFuture("never"));
    assertThat(entered.await(BUG_BOUND_SECONDS, SECONDS)).as("audit's waiter timed out").isTrue();

    long start = System.nanoTime();
    CompletableFuture<String> other = checkout.submit(() -> CompletableFuture.completedFuture("x"));
    assertThat(failureOf(other))
        .isInstanceOf(BulkheadFullException.class)
        .extracting(e -> ((BulkheadFullException) e).reason())
        .isEqualTo(Reason.WAIT_TIMEOUT);
    System.out.printf(
        "D1 listener: checkout's %d ms maxWait fired after %d ms while audit's"
            + " onRejected was blocked%n",
        SHORT_WAIT.toMillis(), TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start));
    assertThat(where.get().getName())
        .as("the thread that ran audit's listener")
        .doesNotContain("bulkhead-timer");
  }

  @Test
  void aDependentThatBlocks_doesNotDelayAnotherCompartmentsMaxWait() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicReference<Thread> where = new AtomicReference<>();
    Bulkhead audit = full("audit");
    Bulkhead checkout = full("checkout");

    audit
        .submit(() -> CompletableFuture.completedFuture("never"))
        .whenComplete(blockingCallback(entered, where));
    assertThat(entered.await(BUG_BOUND_SECONDS, SECONDS)).as("audit's waiter timed out").isTrue();

    CompletableFuture<String> other = checkout.submit(() -> CompletableFuture.completedFuture("x"));
    assertThat(failureOf(other)).isInstanceOf(BulkheadFullException.class);
    assertThat(where.get().getName()).doesNotContain("bulkhead-timer");
  }

  @Test
  void aWorkerPoolJobsDependentThatBlocks_doesNotDelayAnotherPoolsMaxWait() throws Exception {
    CountDownLatch entered = new CountDownLatch(1);
    AtomicReference<Thread> where = new AtomicReference<>();
    WorkerPool audit = pool("audit");
    WorkerPool checkout = pool("checkout");
    CountDownLatch busy = new CountDownLatch(2);
    audit.submit(
        () -> {
          busy.countDown();
          awaitQuietly(blocker);
        });
    checkout.submit(
        () -> {
          busy.countDown();
          awaitQuietly(blocker);
        });
    assertThat(busy.await(BUG_BOUND_SECONDS, SECONDS)).isTrue();

    audit.submit(() -> "never").whenComplete(blockingCallback(entered, where));
    assertThat(entered.await(BUG_BOUND_SECONDS, SECONDS)).as("audit's job timed out").isTrue();

    CompletableFuture<String> other = checkout.submit(() -> "never");
    assertThat(failureOf(other)).isInstanceOf(BulkheadFullException.class);
    assertThat(where.get().getName()).doesNotContain("bulkhead-timer");
  }

  private WorkerPool pool(String name) {
    WorkerPool p = WorkerPool.builder(name).limit(1).maxQueue(1).maxWait(SHORT_WAIT).build();
    pools.add(p);
    return p;
  }

  // --- D3: a granted waiter starts without waiting for the releaser's user code
  // --------------------

  @Test
  void aDependentOfTheReleasingCall_canJoinTheCallThatWasHandedItsSlot() throws Exception {
    Bulkhead b = Bulkhead.builder("b").limit(1).maxQueue(1).unboundedWait().build();
    CompletableFuture<String> firstStage = new CompletableFuture<>();
    CompletableFuture<String> first = b.submit(() -> firstStage);
    CompletableFuture<String> second = b.submit(() -> CompletableFuture.completedFuture("second"));
    CompletableFuture<Object> joined =
        first.handle(
            (v, f) -> {
              try {
                return second.get(BUG_BOUND_SECONDS, SECONDS);
              } catch (Exception e) {
                return e;
              }
            });

    firstStage.complete("first"); // its release hands the slot to `second`, then runs `handle`

    assertThat(joined.get(2 * BUG_BOUND_SECONDS, SECONDS)).isEqualTo("second");
    assertThat(b.stats().inFlight()).isZero();
  }

  @Test
  void anOnReleasedListener_canMakeASynchronousCallOnTheSameCompartment() throws Exception {
    AtomicBoolean once = new AtomicBoolean();
    AtomicReference<Object> inner = new AtomicReference<>();
    AtomicReference<Bulkhead> self = new AtomicReference<>();
    BulkheadListener callsBack =
        new BulkheadListener() {
          @Override
          public void onReleased(Compartment c, long heldNanos) {
            if (once.compareAndSet(false, true)) {
              try {
                inner.set(self.get().call(() -> "inner"));
              } catch (Exception e) {
                inner.set(e);
              }
            }
          }
        };
    Bulkhead b =
        Bulkhead.builder("b")
            .limit(1)
            .maxQueue(2)
            .maxWait(Duration.ofSeconds(BUG_BOUND_SECONDS))
            .listener(callsBack)
            .build();
    self.set(b);
    CompletableFuture<String> firstStage = new CompletableFuture<>();
    CompletableFuture<String> first = b.submit(() -> firstStage);
    CompletableFuture<String> second = b.submit(() -> CompletableFuture.completedFuture("second"));

    firstStage.complete("first"); // its release grants `second`, then calls the listener

    assertThat(first.get(2 * BUG_BOUND_SECONDS, SECONDS)).isEqualTo("first");
    assertThat(inner.get()).isEqualTo("inner");
    assertThat(second.get(BUG_BOUND_SECONDS, SECONDS)).isEqualTo("second");
  }

  @Test
  void aCallHandedASlot_startsOnTheCompartmentsOwnThread_notOnTheReleasersOrTheTimers()
      throws Exception {
    Bulkhead b = Bulkhead.builder("payments").limit(1).maxQueue(1).unboundedWait().build();
    Permit holder = b.acquire();
    AtomicReference<Thread> where = new AtomicReference<>();
    CompletableFuture<String> waiter =
        b.submit(
            () -> {
              where.set(Thread.currentThread());
              return CompletableFuture.completedFuture("ran");
            });
    holder.close();
    assertThat(waiter.get(BUG_BOUND_SECONDS, SECONDS)).isEqualTo("ran");
    assertThat(where.get()).isNotSameAs(Thread.currentThread());
    assertThat(where.get().getName()).startsWith("bulkhead-payments-");
    assertThat(where.get().isDaemon()).isTrue();
  }
}
