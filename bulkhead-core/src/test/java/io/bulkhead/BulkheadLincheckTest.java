package io.bulkhead;

import io.bulkhead.testing.FakeTicker;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ManagedStrategyGuaranteeKt;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.Validate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Model checking of the whole admission core with Lincheck: acquire, release, hand-off to async
 * waiters, timeout (on a fake clock, through the sweep), cancellation and limit changes, explored
 * over thread interleavings rather than left to luck.
 *
 * <p>The operations share harness state (permits and running stages handed between threads), so
 * their results are not a sequential specification: they return nothing, and Lincheck is used as a
 * model checker. After every explored execution {@link #validate} checks the invariants: the
 * compartment's counts match what the harness holds, every attempt is accounted for exactly once,
 * no more calls were ever inside the dependency than the highest limit, and once everything is
 * drained the compartment is empty and hands out exactly {@code limit} slots. {@link
 * PermitLincheckTest} checks linearizability of the permit API on its own.
 */
@Param(name = "limit", gen = IntGen.class, conf = "1:3")
public class BulkheadLincheckTest {

  private static final int INITIAL_LIMIT = 1;
  private static final int MAX_QUEUE = 2;
  private static final Duration MAX_WAIT = Duration.ofSeconds(1);

  private final FakeTicker ticker = new FakeTicker();
  private final ManualScheduler scheduler = new ManualScheduler(ticker);
  // Hand-offs and timeout rejections wait for runHandOffs(): a granted call that has not started
  // yet,
  // and a timed-out one whose future is not failed yet, are states other operations race with (R8).
  private final ManualExecutor handOffs = new ManualExecutor();
  private final Bulkhead bulkhead;

  private final ConcurrentLinkedDeque<Permit> permits = new ConcurrentLinkedDeque<>();
  private final ConcurrentLinkedDeque<Stage> running = new ConcurrentLinkedDeque<>();
  private final ConcurrentLinkedDeque<CompletableFuture<String>> submitted =
      new ConcurrentLinkedDeque<>();
  private final AtomicInteger attempts = new AtomicInteger();
  private final AtomicInteger inside = new AtomicInteger();
  private final AtomicInteger maxLimitEver;
  private final AtomicInteger started = new AtomicInteger();
  private final AtomicInteger acquired = new AtomicInteger();
  private final AtomicInteger violations = new AtomicInteger();

  public BulkheadLincheckTest() {
    AdaptiveLimit adaptive = adaptiveLimit();
    BulkheadBuilder b =
        Bulkhead.builder("lincheck")
            .limit(INITIAL_LIMIT)
            .maxQueue(MAX_QUEUE)
            .maxWait(MAX_WAIT)
            .scheduler(scheduler)
            .executor(handOffs);
    if (adaptive == null) {
      b.ticker(ticker);
      maxLimitEver = new AtomicInteger(INITIAL_LIMIT);
    } else {
      AtomicLong reads = new AtomicLong();
      b.ticker(() -> ticker.read() + reads.incrementAndGet()).adaptive(adaptive);
      maxLimitEver = new AtomicInteger(adaptive.max());
    }
    bulkhead = b.build();
  }

  /**
   * None here; with one, the limit also moves by itself: the compartment's ticker advances on every
   * reading, so with an interval of 1 ns every timed release asks the controller.
   */
  AdaptiveLimit adaptiveLimit() {
    return null;
  }

  private void enter() {
    if (inside.incrementAndGet() > maxLimitEver.get()) {
      violations.incrementAndGet();
    }
  }

  @Operation
  public void tryAcquire() {
    attempts.incrementAndGet();
    Optional<Permit> p = bulkhead.tryAcquire();
    if (p.isPresent()) {
      acquired.incrementAndGet();
      enter();
      permits.add(p.get());
    }
  }

  @Operation
  public void closePermit() {
    Permit p = permits.pollFirst();
    if (p != null) {
      inside.decrementAndGet();
      p.close();
    }
  }

  @Operation
  public void submit() {
    attempts.incrementAndGet();
    CompletableFuture<String> f =
        bulkhead.submit(
            () -> {
              started.incrementAndGet();
              enter();
              Stage stage = new Stage();
              running.add(stage);
              return stage;
            });
    submitted.add(f);
  }

  @Operation
  public void completeRunning() {
    Stage stage = running.pollFirst();
    if (stage != null) {
      stage.finish(() -> stage.complete("done"));
    }
  }

  /**
   * Cancels the oldest submitted call that is not done: queued (withdrawn) or running (forwarded).
   */
  @Operation
  public void cancelOldest() {
    for (CompletableFuture<String> f : submitted) {
      if (!f.isDone()) {
        f.cancel(true);
        return;
      }
    }
  }

  /**
   * The dependency's work for one async call. It leaves the dependency before its stage completes,
   * whether it finishes or is cancelled, because the stage's completion frees the slot.
   */
  final class Stage extends CompletableFuture<String> {
    private final java.util.concurrent.atomic.AtomicBoolean finished =
        new java.util.concurrent.atomic.AtomicBoolean();

    void finish(Runnable completion) {
      if (finished.compareAndSet(false, true)) {
        inside.decrementAndGet();
        completion.run();
      }
    }

    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
      finish(() -> Stage.super.cancel(mayInterruptIfRunning));
      return isCancelled();
    }
  }

  /** Cancels the newest submitted call that is not done: most often one still in the queue. */
  @Operation
  public void cancelNewest() {
    for (java.util.Iterator<CompletableFuture<String>> it = submitted.descendingIterator();
        it.hasNext(); ) {
      CompletableFuture<String> f = it.next();
      if (!f.isDone()) {
        f.cancel(true);
        return;
      }
    }
  }

  @Operation
  public void timePasses() {
    ticker.advance(MAX_WAIT);
    scheduler.runDue();
  }

  /** The compartment's own thread starts the granted calls and fails the timed-out ones. */
  @Operation
  public void runHandOffs() {
    handOffs.runPending();
  }

  @Operation
  public void setLimit(@Param(name = "limit") int limit) {
    maxLimitEver.accumulateAndGet(limit, Math::max);
    bulkhead.setLimit(limit);
  }

  @Validate
  public void validate() {
    if (violations.get() > 0) {
      throw new IllegalStateException("more calls inside the dependency than the highest limit");
    }
    runHandOffs(); // what is granted starts and what timed out fails, before the harness counts
    BulkheadStats s = bulkhead.stats();
    // A cancelled running stage is still in `running` but has released its slot.
    int runningNow = 0;
    for (Stage stage : running) {
      if (!stage.isDone()) {
        runningNow++;
      }
    }
    if (s.inFlight() != permits.size() + runningNow) {
      throw new IllegalStateException(
          "inFlight "
              + s.inFlight()
              + " but the harness holds "
              + permits.size()
              + " permits and "
              + runningNow
              + " running stages");
    }
    int queued = 0;
    for (CompletableFuture<String> f : submitted) {
      if (!f.isDone()) {
        queued++;
      }
    }
    // A call whose stage runs is not done either: queued = not done - running.
    int waitingByHarness = queued - runningNow;
    if (s.waiting() != waitingByHarness) {
      throw new IllegalStateException(
          "waiting " + s.waiting() + " but the harness sees " + waitingByHarness);
    }
    if (s.admitted() + s.rejected() + s.cancelled() + s.waiting() != attempts.get()) {
      throw new IllegalStateException(
          "accounting: admitted "
              + s.admitted()
              + " + rejected "
              + s.rejected()
              + " + cancelled "
              + s.cancelled()
              + " + waiting "
              + s.waiting()
              + " != attempts "
              + attempts.get());
    }
    // Drain: finish everything; queued calls get the freed slots and finish too.
    for (int guard = 0; guard < 100; guard++) {
      closePermit();
      completeRunning();
      runHandOffs();
      if (permits.isEmpty()
          && running.stream().allMatch(CompletableFuture::isDone)
          && bulkhead.stats().waiting() == 0) {
        break;
      }
    }
    for (Stage stage : running) {
      stage.finish(() -> stage.complete("drained"));
    }
    runHandOffs();
    BulkheadStats end = bulkhead.stats();
    if (end.inFlight() != 0 || end.waiting() != 0) {
      throw new IllegalStateException("not settled: " + end);
    }
    if (end.admitted() != end.completed() || end.admitted() != started.get() + countAcquired()) {
      throw new IllegalStateException(
          "admitted "
              + end.admitted()
              + ", completed "
              + end.completed()
              + ", suppliers run "
              + started.get());
    }
    List<Permit> all = new ArrayList<>();
    for (int i = 0; i < end.limit(); i++) {
      Optional<Permit> p = bulkhead.tryAcquire();
      if (p.isEmpty()) {
        throw new IllegalStateException("only " + i + " of " + end.limit() + " slots came back");
      }
      all.add(p.get());
    }
    if (bulkhead.tryAcquire().isPresent()) {
      throw new IllegalStateException("a slot beyond the limit of " + end.limit());
    }
    all.forEach(Permit::close);
  }

  private long countAcquired() {
    return acquired.get();
  }

  // Model checking is slow on a loaded 2-core machine; a deeper run:
  // -Dbulkhead.lincheck.iterations=30 -Dbulkhead.lincheck.invocations=2000
  @Test
  @Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
  void modelCheck() {
    modelCheck(BulkheadLincheckTest.class, 4);
  }

  static void modelCheck(Class<?> testClass, int iterations) {
    ModelCheckingOptions options =
        new ModelCheckingOptions()
            .iterations(Integer.getInteger("bulkhead.lincheck.iterations", iterations))
            .invocationsPerIteration(Integer.getInteger("bulkhead.lincheck.invocations", 200))
            .threads(3)
            .actorsPerThread(3)
            .actorsBefore(2)
            .actorsAfter(1)
            // An adaptive limit's measurements are not what is checked here: draining its histogram
            // (a loop over 130 buckets) is one step, which Lincheck would otherwise take for a
            // spin lock. Its record() and the limit changes it causes are explored like the rest.
            .addGuarantee(
                ManagedStrategyGuaranteeKt.forClasses(Adaptation.class.getName())
                    .methods("drainLatency")
                    .treatAsAtomic());
    // The races of DefaultBulkhead's design comment, set up so that every interleaving of each is
    // explored, in addition to the random scenarios.
    // R1/R3/R4: withdrawal of a queued call against the hand-off of a freed slot.
    options.addCustomScenario(
        race(List.of("submit", "submit"), List.of("cancelNewest"), List.of("completeRunning")));
    // R1: the sweep's timeout against the hand-off.
    options.addCustomScenario(
        race(List.of("submit", "submit"), List.of("timePasses"), List.of("completeRunning")));
    // Withdrawal against the timeout, with a permit released meanwhile.
    options.addCustomScenario(
        race(
            List.of("tryAcquire", "submit"),
            List.of("cancelNewest"),
            List.of("timePasses"),
            List.of("closePermit")));
    // setLimit raising against a withdrawal and a release.
    options.addCustomScenario(
        race(
            List.of("submit", "submit", "submit"),
            List.of("raiseLimit"),
            List.of("cancelNewest"),
            List.of("completeRunning")));
    // R8: a granted call not started yet (its start waits on the compartment's executor) against a
    // withdrawal, and a timed-out one not failed yet against a release; both then run.
    options.addCustomScenario(
        race(
            List.of("submit", "submit", "completeRunning"),
            List.of("cancelNewest"),
            List.of("runHandOffs"),
            List.of("completeRunning")));
    options.addCustomScenario(
        race(
            List.of("submit", "submit", "timePasses"),
            List.of("completeRunning"),
            List.of("runHandOffs"),
            List.of("cancelNewest")));
    // R6: lowering against fast acquire and release.
    options.addCustomScenario(
        race(
            List.of("raiseLimit", "tryAcquire"),
            List.of("lowerLimit"),
            List.of("tryAcquire"),
            List.of("closePermit", "tryAcquire")));
    options.check(testClass);
  }

  @Operation
  public void raiseLimit() {
    setLimit(3);
  }

  @Operation
  public void lowerLimit() {
    setLimit(1);
  }

  /** A scenario: the initial operations, then each list run by its own thread in parallel. */
  @SafeVarargs
  private static kotlin.jvm.functions.Function1<
          org.jetbrains.lincheck.datastructures.DSLScenarioBuilder, kotlin.Unit>
      race(List<String> initial, List<String>... threads) {
    return builder -> {
      builder.initial(t -> actors(t, initial));
      builder.parallel(
          p -> {
            for (List<String> ops : threads) {
              p.thread(t -> actors(t, ops));
            }
            return kotlin.Unit.INSTANCE;
          });
      return kotlin.Unit.INSTANCE;
    };
  }

  private static kotlin.Unit actors(
      org.jetbrains.lincheck.datastructures.DSLThreadScenario t, List<String> ops) {
    for (String op : ops) {
      try {
        t.actor(
            kotlin.reflect.jvm.ReflectJvmMapping.getKotlinFunction(
                BulkheadLincheckTest.class.getMethod(op)));
      } catch (NoSuchMethodException e) {
        throw new IllegalArgumentException("no operation named " + op, e);
      }
    }
    return kotlin.Unit.INSTANCE;
  }
}
