package io.bulkhead.reactor;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Publisher;
import org.reactivestreams.Subscriber;
import org.reactivestreams.Subscription;
import reactor.core.Disposable;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Hooks;

/**
 * Four threads subscribe, cancel (before and after admission), complete and fail calls at random
 * while the dependency counts the subscriptions it holds at once. It never holds more than the
 * limit, every slot comes back, and every call that was not cancelled ends exactly once.
 */
class CancelStressTest {

  private static final int LIMIT = 3;
  private static final int THREADS = 4;
  private static final int OPERATIONS_PER_THREAD = 500;
  private static final long SEED = 20_250_412L;
  private static final long HANG_GUARD_SECONDS = 60;

  /** How long one look for a call to answer waits before the counts are read again. */
  private static final long DRAIN_POLL_MILLIS = 50;

  // What a thread does next, out of 20: subscribe 8, cancel one of its calls 6, complete one 4,
  // fail 2.
  private static final int SUBSCRIBE_WEIGHT = 8;
  private static final int CANCEL_WEIGHT = 6;
  private static final int COMPLETE_WEIGHT = 4;
  private static final int WEIGHTS = 20;

  /** The dependency: counts the subscriptions it holds now and the most it ever held. */
  private final AtomicInteger atDependency = new AtomicInteger();

  private final AtomicInteger mostAtDependency = new AtomicInteger();
  private final AtomicInteger dependencySubscriptions = new AtomicInteger();
  private final AtomicInteger cancelledAtDependency = new AtomicInteger();

  /** Calls the dependency is working on and has not answered yet. */
  private final BlockingQueue<Call> answerable = new LinkedBlockingQueue<>();

  /**
   * One call, seen from both ends: the caller's subscription, and the dependency's side of it,
   * which counts itself as held from its subscribe() until it answers or is cancelled.
   */
  private final class Call implements Publisher<Integer>, Subscription {
    private static final int NOT_SUBSCRIBED = 0;
    private static final int AT_DEPENDENCY = 1;
    private static final int LEFT = 2;

    final AtomicInteger phase = new AtomicInteger(NOT_SUBSCRIBED);
    final AtomicInteger values = new AtomicInteger();
    final AtomicInteger terminals = new AtomicInteger();
    volatile Subscriber<? super Integer> subscriber;
    volatile boolean cancelledByCaller;
    Disposable subscription;

    @Override
    public void subscribe(Subscriber<? super Integer> subscriber) {
      assertThat(phase.compareAndSet(NOT_SUBSCRIBED, AT_DEPENDENCY)).as("subscribed once").isTrue();
      dependencySubscriptions.incrementAndGet();
      mostAtDependency.accumulateAndGet(atDependency.incrementAndGet(), Math::max);
      this.subscriber = subscriber;
      subscriber.onSubscribe(this);
      answerable.add(this);
    }

    @Override
    public void request(long n) {
      // The callers request without bound; the dependency answers once, whenever it is told to.
    }

    @Override
    public void cancel() {
      if (leave()) {
        cancelledAtDependency.incrementAndGet();
      }
    }

    /** The dependency is done with this call: counted down once, before any signal goes out. */
    boolean leave() {
      if (phase.compareAndSet(AT_DEPENDENCY, LEFT)) {
        atDependency.decrementAndGet();
        return true;
      }
      return false;
    }

    void answer(int value) {
      if (leave()) {
        subscriber.onNext(value);
        subscriber.onComplete();
      }
    }

    void fail() {
      if (leave()) {
        subscriber.onError(new IOException("dependency failed"));
      }
    }
  }

  @Test
  void cancelsAndCompletionsFromFourThreadsNeverLetMoreThanTheLimitReachTheDependency()
      throws Exception {
    Bulkhead llm = Bulkhead.builder("llm").limit(LIMIT).unboundedQueue().unboundedWait().build();
    List<Call> calls = new CopyOnWriteArrayList<>();
    List<Throwable> dropped = new CopyOnWriteArrayList<>();
    Hooks.onErrorDropped(dropped::add); // errors that arrive after their caller cancelled
    try {
      CountDownLatch start = new CountDownLatch(1);
      List<Thread> threads = new ArrayList<>();
      List<Throwable> failures = new CopyOnWriteArrayList<>();
      for (int t = 0; t < THREADS; t++) {
        Random random = new Random(SEED + t);
        Thread thread =
            new Thread(
                () -> {
                  try {
                    start.await();
                    runOperations(random, llm, calls);
                  } catch (Throwable failure) {
                    failures.add(failure);
                  }
                },
                "stress-" + t);
        threads.add(thread);
        thread.start();
      }
      start.countDown();
      for (Thread thread : threads) {
        thread.join(TimeUnit.SECONDS.toMillis(HANG_GUARD_SECONDS));
        assertThat(thread.isAlive()).as(thread.getName() + " finished").isFalse();
      }
      assertThat(failures).isEmpty();

      // Answer whatever the dependency still holds. Each answer frees a slot, and the waiter it is
      // handed to starts on the compartment's own threads, reaching the dependency a moment later:
      // so
      // keep answering until nothing is in flight or waiting.
      long drainDeadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(HANG_GUARD_SECONDS);
      while (llm.stats().inFlight() > 0 || llm.stats().waiting() > 0) {
        assertThat(System.nanoTime() - drainDeadline)
            .as("drained before the hang guard")
            .isNegative();
        Call call = answerable.poll(DRAIN_POLL_MILLIS, TimeUnit.MILLISECONDS);
        if (call != null) {
          call.answer(0);
        }
      }

      BulkheadStats stats = llm.stats();
      long cancelledByCallers = calls.stream().filter(call -> call.cancelledByCaller).count();
      System.out.printf(
          "%d calls: most at the dependency at once %d (limit %d); cancelled by callers"
              + " %d, of them %d while waiting and %d at the dependency; %d errors dropped after a"
              + " cancel%n",
          calls.size(),
          mostAtDependency.get(),
          LIMIT,
          cancelledByCallers,
          stats.cancelled(),
          cancelledAtDependency.get(),
          dropped.size());

      assertThat(mostAtDependency.get()).isLessThanOrEqualTo(LIMIT);
      assertThat(atDependency).hasValue(0);
      assertThat(stats.inFlight()).isZero();
      assertThat(stats.waiting()).isZero();
      assertThat(stats.rejected()).isZero();
      assertThat(stats.admitted() + stats.cancelled()).isEqualTo(calls.size());
      assertThat(stats.completed()).isEqualTo(stats.admitted());
      assertThat((long) dependencySubscriptions.get()).isLessThanOrEqualTo(stats.admitted());
      assertThat(dropped).allMatch(IOException.class::isInstance);
      for (Call call : calls) {
        assertThat(call.terminals.get()).as("terminal signals of one call").isLessThanOrEqualTo(1);
        assertThat(call.values.get()).as("values of one call").isLessThanOrEqualTo(1);
        if (!call.cancelledByCaller) {
          assertThat(call.terminals.get()).as("a call nobody cancelled ends").isEqualTo(1);
        }
      }
    } finally {
      Hooks.resetOnErrorDropped();
    }
  }

  private void runOperations(Random random, Bulkhead llm, List<Call> calls) {
    List<Call> mine = new ArrayList<>();
    for (int i = 0; i < OPERATIONS_PER_THREAD; i++) {
      int pick = random.nextInt(WEIGHTS);
      if (pick < SUBSCRIBE_WEIGHT) {
        Call call = new Call();
        calls.add(call);
        mine.add(call);
        call.subscription =
            Flux.from(call)
                .transformDeferred(BulkheadOperator.of(llm))
                .subscribe(
                    value -> call.values.incrementAndGet(),
                    error -> call.terminals.incrementAndGet(),
                    call.terminals::incrementAndGet);
      } else if (pick < SUBSCRIBE_WEIGHT + CANCEL_WEIGHT) {
        if (!mine.isEmpty()) {
          Call call = mine.remove(random.nextInt(mine.size()));
          call.cancelledByCaller = true;
          call.subscription.dispose(); // waiting, at the dependency, or already answered
        }
      } else {
        Call call = answerable.poll();
        if (call != null) {
          if (pick < SUBSCRIBE_WEIGHT + CANCEL_WEIGHT + COMPLETE_WEIGHT) {
            call.answer(i);
          } else {
            call.fail();
          }
        }
      }
    }
  }
}
