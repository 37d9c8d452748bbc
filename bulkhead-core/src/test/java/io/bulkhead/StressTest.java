package io.bulkhead;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadFullException.Reason;
import java.lang.reflect.Method;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.Queue;
import java.util.SplittableRandom;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;
import org.junit.jupiter.api.Test;

/**
 * Randomized stress: many threads mix call, submit, acquire and tryAcquire with random durations,
 * timeouts, interrupts, cancellations, exceptions and limit changes, and the dependency stalls for
 * twice maxWait about every 100 ms, while an observer checks the invariants throughout. At the end
 * every attempt must be accounted for exactly once and every slot must be back.
 *
 * <p>Bounded in time: {@code -Dbulkhead.stress.seconds} per variant (default 8). The seed of each
 * run is printed so a failure can be replayed with {@code -Dbulkhead.stress.seed}.
 */
class StressTest {

  private static final long SECONDS = Long.getLong("bulkhead.stress.seconds", 8);
  private static final int MAX_LIMIT = 6;

  /** About every 100 ms: the observer pauses 200 µs between looks. */
  private static final int STALL_EVERY_OBSERVATIONS = 400;

  @Test
  void platformThreads() throws Exception {
    run(Executors.newFixedThreadPool(12), 12, "platform", false);
  }

  /**
   * The same, with a limit that also moves by itself: a controller asked every millisecond (on the
   * first release past it) picks a random limit in [1, MAX_LIMIT], racing with the observer's
   * setLimit, the stalls, the timeouts and the interrupts.
   */
  @Test
  void platformThreads_adaptiveLimit() throws Exception {
    run(Executors.newFixedThreadPool(12), 12, "platform-adaptive", true);
  }

  @Test
  void virtualThreads_whenTheJdkHasThem() throws Exception {
    ExecutorService virtual = newVirtualThreadPerTaskExecutor();
    if (Runtime.version().feature() >= 21) {
      assertThat(virtual).as("JDK %s must provide virtual threads", Runtime.version()).isNotNull();
    }
    if (virtual == null) {
      // JDK 17: there are no virtual threads to exercise; .ci/run runs this class again on JDK 25.
      assertThat(Runtime.version().feature()).isLessThan(21);
      return;
    }
    run(virtual, 64, "virtual", false);
  }

  private static ExecutorService newVirtualThreadPerTaskExecutor() throws Exception {
    try {
      Method m = Executors.class.getMethod("newVirtualThreadPerTaskExecutor");
      return (ExecutorService) m.invoke(null);
    } catch (NoSuchMethodException notOnThisJdk) {
      return null;
    }
  }

  private void run(ExecutorService workers, int workerCount, String kind, boolean adaptive)
      throws Exception {
    long seed = Long.getLong("bulkhead.stress.seed", System.nanoTime());
    System.out.printf(
        "StressTest[%s] seed=%d seconds=%d workers=%d%n", kind, seed, SECONDS, workerCount);
    SplittableRandom root = new SplittableRandom(seed);
    int initialLimit = 1 + root.nextInt(MAX_LIMIT);
    int maxQueue = root.nextInt(6);
    Duration maxWait = Duration.ofMillis(1 + root.nextInt(20));

    Accounting acct = new Accounting();
    BulkheadBuilder builder =
        Bulkhead.builder("stress")
            .limit(initialLimit)
            .maxQueue(maxQueue)
            .maxWait(maxWait)
            .listener(acct.listener);
    RandomLimit controller = new RandomLimit(root.split());
    if (adaptive) {
      builder.adaptive(new AdaptiveLimit(controller, 1, MAX_LIMIT, Duration.ofMillis(1)));
    }
    Bulkhead b = builder.build();
    ScheduledExecutorService completer = Executors.newScheduledThreadPool(2);
    Queue<CompletableFuture<?>> outstanding = new ConcurrentLinkedQueue<>();
    Queue<String> violations = new ConcurrentLinkedQueue<>();
    AtomicInteger inside = new AtomicInteger(); // calls running in the dependency right now
    AtomicInteger maxLimitEver = new AtomicInteger(adaptive ? MAX_LIMIT : initialLimit);
    long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(SECONDS);
    Queue<Thread> running = new ConcurrentLinkedQueue<>();
    CountDownLatch done = new CountDownLatch(workerCount);
    // Until when the dependency is stalled: every call in it then takes at least that long.
    AtomicLong stallUntil = new AtomicLong(System.nanoTime());
    long stallNanos = 2 * maxWait.toNanos();
    long stalls = 0;

    Runnable enter =
        () -> {
          int now = inside.incrementAndGet();
          if (now > maxLimitEver.get()) {
            violations.add("in the dependency: " + now + " > max limit " + maxLimitEver.get());
          }
        };

    for (int w = 0; w < workerCount; w++) {
      SplittableRandom rnd = root.split();
      workers.execute(
          () -> {
            running.add(Thread.currentThread());
            try {
              while (System.nanoTime() < deadline) {
                oneOperation(b, rnd, acct, enter, inside, completer, outstanding, stallUntil);
                Thread.interrupted(); // an interrupt aimed at one operation must not leak into the
                // next
              }
            } catch (Throwable t) {
              violations.add("worker died: " + t);
            } finally {
              done.countDown();
            }
          });
    }

    // Interrupter and limit changer, plus the observer, on this thread.
    SplittableRandom rnd = root.split();
    long observations = 0;
    while (done.getCount() > 0) {
      BulkheadStats s = b.stats();
      observations++;
      if (s.waiting() > maxQueue) {
        violations.add("waiting " + s.waiting() + " > maxQueue " + maxQueue);
      }
      if (s.inFlight() > maxLimitEver.get()) {
        violations.add("inFlight " + s.inFlight() + " > max limit " + maxLimitEver.get());
      }
      if (observations % STALL_EVERY_OBSERVATIONS == 0) {
        // The dependency stalls for twice maxWait: its calls hold every slot, whoever waits behind
        // them times out, and when they end the timeouts race with the hand-offs.
        stallUntil.set(System.nanoTime() + stallNanos);
        stalls++;
      }
      int r = rnd.nextInt(100);
      if (r < 3) {
        int newLimit = 1 + rnd.nextInt(MAX_LIMIT);
        maxLimitEver.accumulateAndGet(newLimit, Math::max);
        b.setLimit(newLimit);
      } else if (r < 10) {
        Thread[] ts = running.toArray(new Thread[0]);
        if (ts.length > 0) {
          ts[rnd.nextInt(ts.length)].interrupt();
        }
      }
      LockSupportPause.pauseMicros(200);
    }
    workers.shutdown();
    assertThat(workers.awaitTermination(60, TimeUnit.SECONDS)).isTrue();

    // Settle: every outstanding async call must finish, then the completer may stop. Not the other
    // way round: a submit still queued when the workers stop is admitted later, and its supplier
    // schedules its work on the completer; a completer already shut down would refuse it, leaving
    // that call counted inside the dependency for ever.
    for (CompletableFuture<?> f : outstanding) {
      try {
        f.get(60, TimeUnit.SECONDS);
      } catch (Exception expected) {
        // rejections, cancellations and failures are all legitimate outcomes
      }
    }
    completer.shutdown();
    assertThat(completer.awaitTermination(60, TimeUnit.SECONDS)).isTrue();
    org.awaitility.Awaitility.await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> b.stats().inFlight() == 0 && b.stats().waiting() == 0);

    BulkheadStats s = b.stats();
    System.out.printf(
        "StressTest[%s] ops=%d admitted=%d rejected=%d (QUEUE_FULL=%d WAIT_TIMEOUT=%d"
            + " INTERRUPTED=%d) cancelled=%d observations=%d stalls=%d limit=%d/%d queue=%d"
            + " wait=%s controllerMoves=%d%n",
        kind,
        acct.attempts.sum(),
        s.admitted(),
        s.rejected(),
        s.rejected(Reason.QUEUE_FULL),
        s.rejected(Reason.WAIT_TIMEOUT),
        s.rejected(Reason.INTERRUPTED),
        s.cancelled(),
        observations,
        stalls,
        initialLimit,
        s.limit(),
        maxQueue,
        maxWait,
        b.adaptive().map(AdaptiveLimit.Status::changes).orElse(0L));
    if (adaptive) {
      assertThat(controller.decisions).as("the controller was asked (seed %d)", seed).isPositive();
      assertThat(b.adaptive().orElseThrow().changes()).isPositive();
    }

    assertThat(violations).as("invariant violations (seed %d)", seed).isEmpty();
    assertThat(inside.get()).isZero();
    assertThat(s.admitted()).as("admitted == completed once settled").isEqualTo(s.completed());
    assertThat(s.admitted() + s.rejected() + s.cancelled())
        .as("every attempt is admitted, rejected or withdrawn exactly once (seed %d)", seed)
        .isEqualTo(acct.attempts.sum());
    assertThat(acct.admittedEvents.sum()).isEqualTo(s.admitted());
    assertThat(acct.releasedEvents.sum()).isEqualTo(s.completed());
    assertThat(acct.rejectedEvents.sum()).isEqualTo(s.rejected());
    assertThat(acct.cancelledEvents.sum()).isEqualTo(s.cancelled());
    assertThat(acct.callerSawAdmission.sum()).isEqualTo(s.admitted());
    assertThat(s.listenerFailures()).isZero();
    // A full set of slots can be taken again, and no more.
    List<Permit> permits = new ArrayList<>();
    for (int i = 0; i < s.limit(); i++) {
      Optional<Permit> p = b.tryAcquire();
      assertThat(p).as("slot %d of %d", i + 1, s.limit()).isPresent();
      permits.add(p.get());
    }
    assertThat(b.tryAcquire()).isEmpty();
    permits.forEach(Permit::close);
    assertThat(acct.attempts.sum()).as("the stress test did some work").isGreaterThan(1000);
    // Every way of ending was exercised, or this run proved less than it claims.
    assertThat(s.rejected(Reason.QUEUE_FULL))
        .as("QUEUE_FULL rejections (seed %d)", seed)
        .isPositive();
    if (maxQueue > 0) {
      assertThat(s.rejected(Reason.WAIT_TIMEOUT))
          .as("waiters timed out behind the stalls (seed %d)", seed)
          .isPositive();
      assertThat(s.cancelled()).as("queued async calls withdrawn (seed %d)", seed).isPositive();
    }
  }

  /** Holds the calling thread in the dependency until a stall, if one is on, is over. */
  private static void waitOutStall(AtomicLong stallUntil) {
    boolean interrupted = false;
    long remaining;
    while ((remaining = stallUntil.get() - System.nanoTime()) > 0) {
      java.util.concurrent.locks.LockSupport.parkNanos(remaining);
      interrupted |= Thread.interrupted(); // a stalled dependency does not notice interrupts
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /** How long an async call's work takes: {@code micros}, or until the stall is over. */
  private static long workMicros(AtomicLong stallUntil, int micros) {
    long stalled = (stallUntil.get() - System.nanoTime()) / 1_000;
    return Math.max(micros, stalled);
  }

  private static void oneOperation(
      Bulkhead b,
      SplittableRandom rnd,
      Accounting acct,
      Runnable enter,
      AtomicInteger inside,
      ScheduledExecutorService completer,
      Queue<CompletableFuture<?>> outstanding,
      AtomicLong stallUntil) {
    int op = rnd.nextInt(100);
    acct.attempts.increment();
    if (op < 30) { // call
      try {
        b.call(
            () -> {
              acct.callerSawAdmission.increment();
              enter.run();
              try {
                spin(rnd.nextInt(300));
                waitOutStall(stallUntil);
                if (rnd.nextInt(10) == 0) {
                  throw new IllegalStateException("dependency failed");
                }
                return null;
              } finally {
                inside.decrementAndGet();
              }
            });
      } catch (BulkheadFullException expected) {
        backOff(rnd); // counted by the compartment
      } catch (IllegalStateException expected) {
        // the dependency's own failure
      } catch (Exception e) {
        throw new AssertionError(e);
      }
    } else if (op < 70) { // submit
      CompletableFuture<String> f =
          b.submit(
              () -> {
                acct.callerSawAdmission.increment();
                enter.run();
                int how = rnd.nextInt(10);
                if (how == 0) {
                  inside.decrementAndGet();
                  throw new IllegalStateException("supplier failed");
                }
                Work stage = new Work(inside);
                if (how == 1) {
                  stage.finish(() -> stage.complete("now"));
                } else if (how == 2) {
                  later(
                      completer,
                      () ->
                          stage.finish(
                              () -> stage.completeExceptionally(new IllegalStateException("late"))),
                      workMicros(stallUntil, rnd.nextInt(2_000)));
                } else {
                  later(
                      completer,
                      () -> stage.finish(() -> stage.complete("later")),
                      workMicros(stallUntil, rnd.nextInt(2_000)));
                }
                return stage;
              });
      if (f.isCompletedExceptionally()) {
        backOff(rnd);
      }
      if (!f.isDone()) {
        outstanding.add(f);
      }
      int after = rnd.nextInt(10);
      if (after == 0) {
        f.cancel(true);
      } else if (after == 1) {
        f.orTimeout(rnd.nextInt(3_000), TimeUnit.MICROSECONDS);
      } else if (after == 2) {
        completer.schedule(() -> f.cancel(true), rnd.nextInt(3_000), TimeUnit.MICROSECONDS);
      }
    } else if (op < 85) { // tryAcquire
      Optional<Permit> p = b.tryAcquire();
      if (p.isPresent()) {
        acct.callerSawAdmission.increment();
        enter.run();
        spin(rnd.nextInt(200));
        waitOutStall(stallUntil);
        inside.decrementAndGet();
        p.get().close();
        if (rnd.nextBoolean()) {
          p.get().close();
        }
      } else {
        backOff(rnd);
      }
    } else { // acquire
      try (Permit p = b.acquire()) {
        acct.callerSawAdmission.increment();
        enter.run();
        spin(rnd.nextInt(300));
        waitOutStall(stallUntil);
        inside.decrementAndGet();
      } catch (BulkheadFullException expected) {
        backOff(rnd); // counted by the compartment
      }
    }
  }

  /**
   * After a "no", a caller backs off for a moment, as a real one would; keeps admissions frequent.
   */
  private static void backOff(SplittableRandom rnd) {
    java.util.concurrent.locks.LockSupport.parkNanos(rnd.nextInt(100_000));
  }

  /**
   * The dependency's work for an async call: leaves the dependency (decrements {@code inside})
   * before its stage completes, whether it finishes or is cancelled, because the compartment frees
   * the slot from the stage's completion and the next call may enter at once.
   */
  /** Any limit in [1, MAX_LIMIT]; asked by one thread at a time (Adaptation A1). */
  static final class RandomLimit implements LimitController {
    private final SplittableRandom rnd;
    volatile long decisions;

    RandomLimit(SplittableRandom rnd) {
      this.rnd = rnd;
    }

    @Override
    public String name() {
      return "random";
    }

    @Override
    public Decision next(Sample sample) {
      decisions++; // one thread at a time
      return new Decision(1 + rnd.nextInt(MAX_LIMIT), "random");
    }
  }

  static final class Work extends CompletableFuture<String> {
    private final AtomicInteger inside;
    private final java.util.concurrent.atomic.AtomicBoolean finished =
        new java.util.concurrent.atomic.AtomicBoolean();

    Work(AtomicInteger inside) {
      this.inside = inside;
    }

    void finish(Runnable completion) {
      if (finished.compareAndSet(false, true)) {
        inside.decrementAndGet();
        completion.run();
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      finish(() -> Work.super.cancel(mayInterruptIfRunning));
      return isCancelled();
    }
  }

  /**
   * Runs {@code work} on the completer after {@code micros}, or now if the completer has stopped: a
   * call whose future was completed from outside (orTimeout) between its grant and its start still
   * starts, possibly after the test stopped the completer, and its work must still end.
   */
  private static void later(ScheduledExecutorService completer, Runnable work, long micros) {
    try {
      completer.schedule(work, micros, TimeUnit.MICROSECONDS);
    } catch (java.util.concurrent.RejectedExecutionException stopped) {
      work.run();
    }
  }

  private static void spin(int micros) {
    long until = System.nanoTime() + micros * 1_000L;
    while (System.nanoTime() < until) {
      Thread.onSpinWait();
    }
  }

  /** Independent accounting fed by a listener and by the callers themselves. */
  static final class Accounting {
    final LongAdder attempts = new LongAdder();
    final LongAdder callerSawAdmission = new LongAdder();
    final LongAdder admittedEvents = new LongAdder();
    final LongAdder releasedEvents = new LongAdder();
    final LongAdder rejectedEvents = new LongAdder();
    final LongAdder cancelledEvents = new LongAdder();
    final BulkheadListener listener =
        new BulkheadListener() {
          @Override
          public void onAdmitted(Compartment bulkhead, long waitedNanos) {
            admittedEvents.increment();
          }

          @Override
          public void onRejected(Compartment bulkhead, Reason reason) {
            rejectedEvents.increment();
          }

          @Override
          public void onCancelled(Compartment bulkhead, long waitedNanos) {
            cancelledEvents.increment();
          }

          @Override
          public void onReleased(Compartment bulkhead, long heldNanos) {
            releasedEvents.increment();
          }
        };
  }

  /** The observer's pause between looks; a pause for pacing, not for synchronisation. */
  static final class LockSupportPause {
    static void pauseMicros(long micros) {
      java.util.concurrent.locks.LockSupport.parkNanos(micros * 1_000L);
    }
  }
}
