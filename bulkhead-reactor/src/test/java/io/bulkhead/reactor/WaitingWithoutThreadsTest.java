package io.bulkhead.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.IntFunction;
import org.junit.jupiter.api.Test;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.core.scheduler.Scheduler;
import reactor.core.scheduler.Schedulers;

/**
 * Ten thousand subscriptions wait for ten slots on a scheduler of two threads. If a waiting
 * subscription held its thread, the third subscribe call would never return.
 */
class WaitingWithoutThreadsTest {

  /** Only a bug makes the chains of hand-offs take this long. */
  private static final long BUG_BOUND_SECONDS = 60;

  private static final int LIMIT = 10;
  private static final int SUBSCRIPTIONS = 10_000;
  private static final int SCHEDULER_THREADS = 2;
  private static final long HANG_GUARD_SECONDS = 60;

  @Test
  void tenThousandWaitingSubscriptionsHoldNoThreadAndAreAdmittedInArrivalOrder() throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(LIMIT).unboundedQueue().unboundedWait().build();
    Scheduler scheduler = Schedulers.newParallel("p", SCHEDULER_THREADS);
    try {
      List<Sinks.One<Integer>> held = new ArrayList<>();
      IntFunction<Mono<Integer>> call =
          index -> {
            if (index < LIMIT) {
              Sinks.One<Integer> sink =
                  Sinks.one(); // the first ten hold their slots until we complete them
              held.add(sink);
              return sink.asMono();
            }
            return Mono.fromSupplier(() -> index);
          };
      List<Integer> completed = java.util.Collections.synchronizedList(new ArrayList<>());
      CountDownLatch allCompleted = new CountDownLatch(SUBSCRIPTIONS);
      Set<String> waitersAdmittedOn = ConcurrentHashMap.newKeySet();
      Set<String> subscribedOn = ConcurrentHashMap.newKeySet();
      CountDownLatch allSubscribed = new CountDownLatch(SUBSCRIPTIONS);
      AtomicInteger errors = new AtomicInteger();

      // Subscription i is made on the scheduler, and schedules subscription i + 1 when its
      // subscribe
      // call has returned: the queue order is the index order, and the parallel scheduler hands the
      // tasks to its two threads in turn.
      Runnable[] subscribe = new Runnable[SUBSCRIPTIONS];
      for (int i = 0; i < SUBSCRIPTIONS; i++) {
        int index = i;
        Mono<Integer> guarded =
            call.apply(index)
                .doOnSubscribe(
                    s -> {
                      if (index >= LIMIT) {
                        waitersAdmittedOn.add(Thread.currentThread().getName());
                      }
                    })
                .transformDeferred(BulkheadOperator.of(llm));
        subscribe[index] =
            () -> {
              guarded.subscribe(
                  value -> {},
                  error -> errors.incrementAndGet(),
                  () -> {
                    completed.add(index);
                    allCompleted.countDown();
                  });
              subscribedOn.add(Thread.currentThread().getName());
              allSubscribed.countDown();
              if (index + 1 < SUBSCRIPTIONS) {
                scheduler.schedule(subscribe[index + 1]);
              }
            };
      }
      startThreads(scheduler);
      int threadsBefore = liveThreads();
      scheduler.schedule(subscribe[0]);

      assertThat(allSubscribed.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS))
          .as("every subscribe call returned while its subscription waited")
          .isTrue();

      int threadsWhileWaiting = liveThreads();
      BulkheadStats waiting = llm.stats();
      System.out.printf(
          "%d subscriptions, %d in flight, %d waiting; subscribed on %s;"
              + " live threads %d before, %d while waiting; no thread parked in io.bulkhead: %s%n",
          SUBSCRIPTIONS,
          waiting.inFlight(),
          waiting.waiting(),
          subscribedOn,
          threadsBefore,
          threadsWhileWaiting,
          parkedInBulkhead().isEmpty());
      assertThat(waiting.inFlight()).isEqualTo(LIMIT);
      assertThat(waiting.waiting()).isEqualTo(SUBSCRIPTIONS - LIMIT);
      assertThat(subscribedOn).hasSize(SCHEDULER_THREADS).allMatch(name -> name.startsWith("p-"));
      assertThat(threadsWhileWaiting).isLessThanOrEqualTo(threadsBefore);
      assertThat(parkedInBulkhead()).isEmpty();
      assertThat(held).hasSize(LIMIT);

      // Free the ten slots from this thread. A waiter handed a slot starts on its compartment's own
      // threads (never on the thread that freed the slot, nor on a thread shared with other
      // compartments); its Mono completes there at once and frees the slot for the next waiter. The
      // ten slots make ten such chains, which run side by side, so completions interleave: FIFO
      // admission itself is the core's promise and is checked there, exactly.
      for (Sinks.One<Integer> sink : held) {
        sink.tryEmitValue(-1).orThrow();
      }

      assertThat(allCompleted.await(BUG_BOUND_SECONDS, TimeUnit.SECONDS))
          .as("every waiter completed")
          .isTrue();
      assertThat(errors).hasValue(0);
      assertThat(waitersAdmittedOn)
          .isNotEmpty()
          .allSatisfy(name -> assertThat(name).startsWith("bulkhead-llm-"));
      assertThat(completed).hasSize(SUBSCRIPTIONS).doesNotHaveDuplicates();
      BulkheadStats done = llm.stats();
      assertThat(done.inFlight()).isZero();
      assertThat(done.waiting()).isZero();
      assertThat(done.admitted()).isEqualTo(SUBSCRIPTIONS);
      assertThat(done.completed()).isEqualTo(SUBSCRIPTIONS);
      assertThat(done.rejected()).isZero();
    } finally {
      scheduler.dispose();
    }
  }

  /**
   * Runs one task on each of the scheduler's threads, so that they exist before we count threads.
   */
  private static void startThreads(Scheduler scheduler) throws InterruptedException {
    CountDownLatch started = new CountDownLatch(SCHEDULER_THREADS);
    for (int i = 0; i < SCHEDULER_THREADS; i++) {
      scheduler.schedule(started::countDown); // the parallel scheduler takes its threads in turn
    }
    assertThat(started.await(HANG_GUARD_SECONDS, TimeUnit.SECONDS)).isTrue();
  }

  private static int liveThreads() {
    return Thread.getAllStackTraces().size();
  }

  /** Threads parked (or blocked) with a frame of this project on their stack. */
  private static List<String> parkedInBulkhead() {
    List<String> parked = new ArrayList<>();
    for (Map.Entry<Thread, StackTraceElement[]> entry : Thread.getAllStackTraces().entrySet()) {
      Thread.State state = entry.getKey().getState();
      boolean waiting =
          state == Thread.State.WAITING
              || state == Thread.State.TIMED_WAITING
              || state == Thread.State.BLOCKED;
      if (waiting && mentionsBulkhead(entry.getValue())) {
        parked.add(entry.getKey().getName());
      }
    }
    parked.remove(Thread.currentThread().getName());
    return parked;
  }

  private static boolean mentionsBulkhead(StackTraceElement[] stack) {
    for (StackTraceElement frame : stack) {
      String type = frame.getClassName();
      if (type.startsWith("io.bulkhead.") && !type.endsWith("Test")) {
        return true;
      }
    }
    return false;
  }
}
