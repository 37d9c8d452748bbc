package io.bulkhead;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.BulkheadFullException.Reason;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/** Worker pools: order is decided by latches and held jobs, never by sleeping. */
class WorkerPoolTest {

  private final List<WorkerPool> pools = new ArrayList<>();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stop() throws InterruptedException {
    for (WorkerPool p : pools) {
      p.shutdown(Duration.ZERO).forEach(Runnable::run);
      assertThat(p.awaitTermination(Duration.ofSeconds(10))).as("%s terminates", p.name()).isTrue();
    }
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, SECONDS)).isTrue();
  }

  private WorkerPool pool(WorkerPoolBuilder b) {
    WorkerPool p = b.build();
    pools.add(p);
    return p;
  }

  /** A job that says when it started and runs until released (or interrupted). */
  private static final class Held implements Runnable {
    final CountDownLatch started = new CountDownLatch(1);
    final CountDownLatch release = new CountDownLatch(1);
    final String name;
    final List<String> log;

    Held(String name, List<String> log) {
      this.name = name;
      this.log = log;
    }

    @Override
    public void run() {
      log.add(name);
      started.countDown();
      try {
        release.await();
      } catch (InterruptedException e) {
        log.add(name + " interrupted");
        throw new IllegalStateException(name + " was interrupted", e);
      }
    }

    @Override
    public String toString() {
      return name;
    }
  }

  @Test
  void runsJobsOnNamedWorkers_andCountsThemLikeAnyCompartment() throws Exception {
    WorkerPool emails = pool(WorkerPool.builder("emails").limit(2).maxQueue(5).unboundedWait());
    CompletableFuture<String> f = emails.submit(() -> Thread.currentThread().getName());
    assertThat(f.get(10, SECONDS)).startsWith("emails-worker-");
    CompletableFuture<Void> r = emails.submit(() -> {});
    r.get(10, SECONDS);
    BulkheadStats s = emails.stats();
    assertThat(s.name()).isEqualTo("emails");
    assertThat(s.limit()).isEqualTo(2);
    assertThat(s.maxQueue()).hasValue(5);
    assertThat(s.admitted()).isEqualTo(2);
    assertThat(s.completed()).isEqualTo(2);
    // The first call is always timed; the compartment may sample later sub-20 µs ones
    // (DefaultBulkhead).
    assertThat(s.latency().count()).isBetween(1L, 2L);
    assertThat(emails.limit()).isEqualTo(2);
    assertThat(emails.virtualThreads()).isFalse();
  }

  @Test
  void listenersAddedThroughTheRegisteredView_seeThatViewInEveryEvent() throws Exception {
    WorkerPool emails = pool(WorkerPool.builder("emails").limit(1));
    Compartment view = emails.compartment();
    List<Compartment> seen = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch released = new CountDownLatch(1);
    view.addListener(
        new BulkheadListener() {
          @Override
          public void onAdmitted(Compartment bulkhead, long waitedNanos) {
            seen.add(bulkhead);
          }

          @Override
          public void onReleased(Compartment bulkhead, long heldNanos) {
            seen.add(bulkhead);
            released.countDown();
          }
        });
    emails.submit(() -> {}).get(10, SECONDS);
    assertThat(released.await(10, SECONDS)).isTrue();
    assertThat(seen).hasSize(2).allSatisfy(b -> assertThat(b).isSameAs(view));
  }

  @Test
  void aFailingJob_failsItsFuture_andFreesItsWorker() throws Exception {
    WorkerPool p = pool(WorkerPool.builder("p").limit(1));
    CompletableFuture<Object> f =
        p.submit(
            () -> {
              throw new IllegalStateException("boom");
            });
    assertThatThrownBy(() -> f.get(10, SECONDS))
        .isInstanceOf(ExecutionException.class)
        .hasCauseInstanceOf(IllegalStateException.class)
        .hasRootCauseMessage("boom");
    assertThat(p.submit(() -> 42).get(10, SECONDS)).isEqualTo(42);
  }

  @Test
  void whenEveryWorkerIsBusyAndTheQueueFull_submitThrowsAtOnce_andTheJobNeverRuns()
      throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    WorkerPool exports = pool(WorkerPool.builder("exports").limit(1).maxQueue(1).unboundedWait());
    Held a = new Held("a", log);
    CompletableFuture<Void> fa = exports.submit(a);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    CompletableFuture<?> fb = exports.submit(() -> log.add("b"));
    assertThat(exports.stats().waiting()).isEqualTo(1);

    assertThatThrownBy(() -> exports.submit(() -> log.add("c")))
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> {
              assertThat(e.bulkheadName()).isEqualTo("exports");
              assertThat(e.reason()).isEqualTo(Reason.QUEUE_FULL);
            });
    assertThat(exports.stats().rejected(Reason.QUEUE_FULL)).isEqualTo(1);

    a.release.countDown();
    fa.get(10, SECONDS);
    fb.get(10, SECONDS);
    assertThat(log).containsExactly("a", "b");
  }

  @Test
  void shutdown_finishesQueuedWorkWithinTheDeadline_andRefusesNewWork() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Budget db = Budget.of("postgres", 10);
    WorkerPool p =
        pool(WorkerPool.builder("webhooks").limit(1).maxQueue(3).unboundedWait().budget(db));
    Held a = new Held("a", log);
    CompletableFuture<Void> fa = p.submit(a);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    CompletableFuture<?> fb = p.submit(() -> log.add("b"));
    CompletableFuture<?> fc = p.submit(() -> log.add("c"));

    Future<List<Runnable>> leftovers = threads.submit(() -> p.shutdown(Duration.ofSeconds(60)));
    await().atMost(Duration.ofSeconds(10)).until(p::isShutdown);
    assertThatThrownBy(() -> p.submit(() -> log.add("late")))
        .isInstanceOf(RejectedExecutionException.class)
        .hasMessageContaining("'webhooks'");
    assertThat(p.isTerminated()).isFalse();
    assertThat(db.allocated()).as("share kept while work remains").isEqualTo(1);

    a.release.countDown();
    assertThat(leftovers.get(10, SECONDS)).isEmpty();
    assertThat(fa).isCompleted();
    assertThat(fb).isCompleted();
    assertThat(fc).isCompleted();
    assertThat(log).containsExactly("a", "b", "c");
    assertThat(p.isTerminated()).isTrue();
    assertThat(db.allocated()).as("share returned at termination").isZero();
  }

  @Test
  void shutdown_atTheDeadline_handsBackQueuedJobsInOrder_andInterruptsTheRunningOne()
      throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Budget db = Budget.of("postgres", 10);
    WorkerPool p =
        pool(WorkerPool.builder("reports").limit(1).maxQueue(3).unboundedWait().budget(db));
    Held a = new Held("a", log);
    CompletableFuture<Void> fa = p.submit(a);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    AtomicInteger bRuns = new AtomicInteger();
    CompletableFuture<Integer> fb = p.submit(bRuns::incrementAndGet);
    CompletableFuture<Void> fc =
        p.submit(
            new Runnable() {
              @Override
              public void run() {
                log.add("c");
              }

              @Override
              public String toString() {
                return "job c";
              }
            });

    // a never finishes by itself: the deadline (a real 200 ms wait, the feature under test) passes.
    List<Runnable> left = p.shutdown(Duration.ofMillis(200));

    assertThat(left).hasSize(2);
    assertThat(left.get(1).toString()).contains("'reports'").contains("job c");
    assertThatThrownBy(() -> fa.get(10, SECONDS))
        .hasRootCauseInstanceOf(InterruptedException.class);
    assertThat(log).containsExactly("a", "a interrupted");
    assertThat(fb).as("handed back, not failed: nothing is dropped").isNotDone();
    assertThat(fc).isNotDone();
    assertThat(p.stats().waiting()).isZero();
    assertThat(p.awaitTermination(Duration.ofSeconds(10))).isTrue();
    assertThat(db.allocated()).isZero();

    left.forEach(Runnable::run); // the caller runs them here instead
    left.forEach(Runnable::run); // at most once
    assertThat(fb.get(10, SECONDS)).isEqualTo(1);
    assertThat(bRuns).hasValue(1);
    assertThat(fc).isCompleted();
    assertThat(log).containsExactly("a", "a interrupted", "c");
  }

  @Test
  void shutdownOfAnIdlePool_returnsAtOnce_andTerminates() throws Exception {
    Budget db = Budget.of("postgres", 10);
    WorkerPool p = pool(WorkerPool.builder("idle").limit(3).budget(db));
    assertThat(db.allocated()).isEqualTo(3);
    assertThat(p.shutdown(Duration.ofDays(1))).isEmpty();
    assertThat(p.isTerminated()).isTrue();
    assertThat(db.allocated()).isZero();
    assertThat(p.shutdown(Duration.ZERO)).as("again").isEmpty();
    assertThatThrownBy(() -> p.compartment().setLimit(5))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("shut down");
    assertThat(db.allocated()).as("a shut pool does not take its share back").isZero();
  }

  @Test
  void cancellingAQueuedJobsFuture_withdrawsIt() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    WorkerPool p = pool(WorkerPool.builder("p").limit(1).maxQueue(2).unboundedWait());
    Held a = new Held("a", log);
    CompletableFuture<Void> fa = p.submit(a);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    CompletableFuture<?> fb = p.submit(() -> log.add("b"));
    assertThat(p.stats().waiting()).isEqualTo(1);
    assertThat(fb.cancel(false)).isTrue();
    assertThat(p.stats().waiting()).isZero();
    assertThat(p.stats().cancelled()).isEqualTo(1);
    a.release.countDown();
    fa.get(10, SECONDS);
    CompletableFuture<?> fc = p.submit(() -> log.add("c"));
    fc.get(10, SECONDS);
    assertThat(log).containsExactly("a", "c");
  }

  @Test
  void aJobThatWaitsLongerThanMaxWait_isNotRun_andItsFutureSaysWhy() throws Exception {
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    WorkerPool p =
        pool(WorkerPool.builder("p").limit(1).maxQueue(1).maxWait(Duration.ofMillis(20)));
    Held a = new Held("a", log);
    CompletableFuture<Void> fa = p.submit(a);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    CompletableFuture<?> fb = p.submit(() -> log.add("b"));
    assertThatThrownBy(() -> fb.get(10, SECONDS))
        .isInstanceOf(ExecutionException.class)
        .cause()
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> assertThat(e.reason()).isEqualTo(Reason.WAIT_TIMEOUT));
    a.release.countDown();
    fa.get(10, SECONDS);
    assertThat(log).containsExactly("a");
    assertThat(p.stats().rejected(Reason.WAIT_TIMEOUT)).isEqualTo(1);
  }

  @Test
  void theCompartmentView_registers_reportsTheSameStats_andResizesTheWorkers() throws Exception {
    Budget db = Budget.of("postgres", 10);
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(Bulkhead.builder("checkout").limit(6).budget(db).build());
    WorkerPool exports =
        pool(WorkerPool.builder("exports").limit(1).maxQueue(4).unboundedWait().budget(db));
    Compartment view = registry.register(exports.compartment());
    assertThat(registry.find("exports")).containsSame(view);
    assertThat(view.config().limit()).isEqualTo(1);
    assertThatThrownBy(() -> WorkerPool.builder("emails").limit(4).budget(db).build())
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "budget 'postgres' is over-subscribed: giving 'emails' a limit of 4 makes"
                + " checkout 6 + exports 1 + emails 4 = 11, more than its capacity of 10");

    assertThat(view)
        .as("a worker pool's view has no admission methods to misuse")
        .isNotInstanceOf(Bulkhead.class);

    List<String> log = Collections.synchronizedList(new ArrayList<>());
    Held a = new Held("a", log);
    Held b = new Held("b", log);
    exports.submit(a);
    exports.submit(b);
    assertThat(a.started.await(10, SECONDS)).isTrue();
    assertThat(view.stats().inFlight()).isEqualTo(1);
    assertThat(view.stats().waiting()).isEqualTo(1);

    view.setLimit(2); // a second worker takes b at once
    assertThat(b.started.await(10, SECONDS)).isTrue();
    assertThat(exports.limit()).isEqualTo(2);
    assertThat(db.allocated()).isEqualTo(8);
    assertThatThrownBy(() -> view.setLimit(5))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("checkout 6 + exports 5 = 11");

    a.release.countDown();
    b.release.countDown();
    registry.remove("exports");
    assertThat(db.allocated()).as("removal returns the share").isEqualTo(6);
  }

  @Test
  void resizedThroughTheRegistry_theNumberOfJobsRunningAtOnceFollows_upAndDown() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    WorkerPool reports = pool(WorkerPool.builder("reports").limit(2).maxQueue(20).unboundedWait());
    List<String> log = Collections.synchronizedList(new ArrayList<>());
    List<Held> jobs = new ArrayList<>();
    List<CompletableFuture<Void>> done = new ArrayList<>();
    for (int i = 0; i < 10; i++) {
      Held job = new Held("job" + i, log);
      jobs.add(job);
      done.add(reports.submit(job));
    }
    assertThat(jobs.get(0).started.await(10, SECONDS)).isTrue();
    assertThat(jobs.get(1).started.await(10, SECONDS)).isTrue();
    assertThat(reports.stats().inFlight()).isEqualTo(2);
    assertThat(reports.stats().waiting()).isEqualTo(8);

    // The README's two lines:
    registry.register(reports.compartment());
    registry.find("reports").orElseThrow().setLimit(8); // 8 workers now

    for (int i = 2; i < 8; i++) {
      assertThat(jobs.get(i).started.await(10, SECONDS)).as("job%d starts", i).isTrue();
    }
    // Eight jobs are running at once, each blocked on its own worker thread.
    assertThat(reports.limit()).isEqualTo(8);
    assertThat(reports.stats().inFlight()).isEqualTo(8);
    assertThat(reports.stats().waiting()).isEqualTo(2);

    registry.find("reports").orElseThrow().setLimit(3);
    assertThat(reports.limit()).isEqualTo(3);
    // The eight running jobs go on; as they end, no queued job starts until fewer than 3 run.
    // A job's slot is freed, and any queued job started, before its future completes.
    for (int i = 0; i < 5; i++) {
      jobs.get(i).release.countDown();
      done.get(i).get(10, SECONDS);
      assertThat(reports.stats().inFlight()).isEqualTo(7 - i);
      assertThat(reports.stats().waiting()).as("nothing starts above the new limit").isEqualTo(2);
    }
    assertThat(jobs.get(8).started.getCount()).isEqualTo(1);
    jobs.get(5).release.countDown();
    done.get(5).get(10, SECONDS);
    assertThat(reports.stats().waiting())
        .as("one below the limit: the next job starts")
        .isEqualTo(1);
    assertThat(reports.stats().inFlight()).isEqualTo(3);
    assertThat(jobs.get(8).started.await(10, SECONDS)).isTrue();
    assertThat(jobs.get(9).started.getCount()).isEqualTo(1);

    for (int i = 6; i < 10; i++) {
      jobs.get(i).release.countDown();
    }
    for (CompletableFuture<Void> f : done) {
      f.get(10, SECONDS);
    }
    assertThat(reports.stats().completed()).isEqualTo(10);
    assertThat(log).doesNotContain("interrupted");
  }

  @Test
  void virtualThreads_onJava21AndLater_orAClearErrorBefore() throws Exception {
    if (Runtime.version().feature() >= 21) {
      WorkerPool p =
          pool(WorkerPool.builder("vt").limit(2).maxQueue(10).unboundedWait().virtualThreads());
      CompletableFuture<Boolean> virtual =
          p.submit(() -> VirtualThreads.isVirtual(Thread.currentThread()));
      CompletableFuture<String> name = p.submit(() -> Thread.currentThread().getName());
      assertThat(virtual.get(10, SECONDS)).isTrue();
      assertThat(name.get(10, SECONDS)).startsWith("vt-worker-");
      assertThat(p.virtualThreads()).isTrue();
      assertThat(p.stats().completed()).isEqualTo(2);
    } else {
      assertThatThrownBy(() -> WorkerPool.builder("vt").limit(2).virtualThreads())
          .isInstanceOf(UnsupportedOperationException.class)
          .hasMessageContaining("worker pool 'vt'")
          .hasMessageContaining("Java 21 or later")
          .hasMessageContaining("platformThreads()");
    }
  }

  @Test
  void builderRejectsNonsense() {
    assertThatThrownBy(() -> WorkerPool.builder("x").limit(0))
        .hasMessage("limit must be at least 1 but was 0");
    assertThatThrownBy(() -> WorkerPool.builder("x").maxQueue(-1))
        .hasMessage("maxQueue must not be negative but was -1");
    assertThatThrownBy(() -> WorkerPool.builder("x").maxWait(Duration.ofMillis(-1)))
        .hasMessage("maxWait must not be negative but was PT-0.001S");
    assertThatThrownBy(() -> WorkerPool.builder("x").limit(1).maxQueue(5).build())
        .hasMessageStartingWith("worker pool 'x' lets 5 callers wait but its maxWait is 0");
    assertThatThrownBy(() -> WorkerPool.builder("x").build())
        .hasMessageContaining("limit was not set for worker pool");
    assertThatThrownBy(() -> WorkerPool.builder(" ")).isInstanceOf(IllegalArgumentException.class);
  }

  /**
   * Many submitters race each other and a shutdown with no grace. Every job must be accounted for
   * exactly once: ran, rejected at submit, refused after shutdown, or handed back; none runs twice,
   * and never more than the worker count run at once.
   */
  @Test
  void underContention_withAShutdownRacingIn_noJobIsLostOrRunTwice() throws Exception {
    int workers = 3;
    int submitters = 4;
    int perSubmitter = 2_000;
    WorkerPool p = pool(WorkerPool.builder("race").limit(workers).maxQueue(8).unboundedWait());
    AtomicInteger running = new AtomicInteger();
    AtomicInteger maxRunning = new AtomicInteger();
    AtomicInteger ran = new AtomicInteger();
    AtomicInteger rejected = new AtomicInteger();
    AtomicInteger refused = new AtomicInteger();
    int[] runsPerJob = new int[submitters * perSubmitter];
    List<CompletableFuture<Void>> accepted = Collections.synchronizedList(new ArrayList<>());
    CountDownLatch go = new CountDownLatch(1);
    CountDownLatch halfway = new CountDownLatch(submitters);
    CountDownLatch shutDown = new CountDownLatch(1);
    List<Future<?>> producers = new ArrayList<>();
    for (int s = 0; s < submitters; s++) {
      int base = s * perSubmitter;
      // Half the submitters pause at halfway until the shutdown has happened (so some submissions
      // surely come after it); the other half race it.
      boolean pause = s % 2 == 0;
      producers.add(
          threads.submit(
              () -> {
                go.await();
                for (int i = 0; i < perSubmitter; i++) {
                  if (i == perSubmitter / 2) {
                    halfway.countDown();
                    if (pause) {
                      shutDown.await();
                    }
                  }
                  int id = base + i;
                  try {
                    accepted.add(
                        p.submit(
                            () -> {
                              int now = running.incrementAndGet();
                              maxRunning.accumulateAndGet(now, Math::max);
                              synchronized (runsPerJob) {
                                runsPerJob[id]++;
                              }
                              ran.incrementAndGet();
                              running.decrementAndGet();
                            }));
                  } catch (BulkheadFullException e) {
                    rejected.incrementAndGet();
                  } catch (RejectedExecutionException e) {
                    refused.incrementAndGet();
                  }
                }
                return null;
              }));
    }
    go.countDown();
    assertThat(halfway.await(60, SECONDS)).isTrue();
    List<Runnable> left = p.shutdown(Duration.ZERO);
    shutDown.countDown();
    for (Future<?> f : producers) {
      f.get(60, SECONDS);
    }
    int ranByPool = 0;
    assertThat(p.awaitTermination(Duration.ofSeconds(30))).isTrue();
    ranByPool = ran.get();
    left.forEach(Runnable::run);

    assertThat(maxRunning.get())
        .as("never more than the workers at once")
        .isLessThanOrEqualTo(workers);
    assertThat(ran.get()).isEqualTo(ranByPool + left.size());
    assertThat(ran.get() + rejected.get() + refused.get())
        .as(
            "ran %d + rejected %d + refused %d (handed back %d)",
            ran.get(), rejected.get(), refused.get(), left.size())
        .isEqualTo(submitters * perSubmitter);
    for (int runs : runsPerJob) {
      assertThat(runs).isLessThanOrEqualTo(1);
    }
    for (CompletableFuture<Void> f : accepted) {
      assertThat(f).as("every accepted job's future settles").isDone();
    }
    assertThat(refused.get()).as("submissions after shutdown are refused").isPositive();
    BulkheadStats s = p.stats();
    assertThat(s.inFlight()).isZero();
    assertThat(s.waiting()).isZero();
  }
}
