package io.bulkhead.benchmarks;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.FixedLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import dev.failsafe.Failsafe;
import dev.failsafe.FailsafeExecutor;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import io.github.resilience4j.bulkhead.BulkheadConfig;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.Semaphore;
import java.util.function.Supplier;

/**
 * One compartment implementation under test, behind the three things every benchmark does with it:
 * run a task inside it, take and give back a bare permit, and run an async task inside it. Each
 * implementation is used the way its documentation tells a user to use it.
 */
abstract class Subject {

  /** The implementations, as the benchmarks' {@code @Param} values. */
  static final String BULKHEAD = "bulkhead";

  static final String R4J = "resilience4j";
  static final String R4J_NO_STACK = "resilience4j-nostack";
  static final String FAILSAFE = "failsafe";
  static final String NETFLIX = "netflix-simple";
  static final String SEMAPHORE_FAIR = "semaphore-fair";
  static final String SEMAPHORE = "semaphore-nonfair";
  static final String NONE = "none";

  /** Baseline for the async path: no compartment, but allocate and complete one future. */
  static final String FUTURE = "future";

  /** Runs {@code task} holding a slot; throws (or returns {@link #REJECTED}) when full. */
  abstract Object sync(Callable<Object> task) throws Exception;

  /** Takes a permit and gives it back; returns false when none was free. */
  abstract boolean permit();

  /** Takes a permit, waiting for one if need be, and gives it back. */
  abstract boolean acquire() throws Exception;

  /** Runs an async task holding a slot until its stage completes. */
  abstract CompletionStage<Object> async(Supplier<CompletionStage<Object>> task);

  /** Takes every slot, for the rejection benchmarks. */
  abstract void fill();

  static final Object REJECTED = new Object();

  static Subject create(String name, int limit) {
    switch (name) {
      case BULKHEAD:
        return new Ours(limit);
      case R4J:
        return new R4j(limit, true);
      case R4J_NO_STACK:
        return new R4j(limit, false);
      case FAILSAFE:
        return new FailsafeSubject(limit);
      case NETFLIX:
        return new Netflix(limit);
      case SEMAPHORE_FAIR:
        return new Sem(limit, true);
      case SEMAPHORE:
        return new Sem(limit, false);
      case NONE:
        return new None();
      case FUTURE:
        return new OneFuture();
      default:
        throw new IllegalArgumentException("unknown subject '" + name + "'");
    }
  }

  /** Ours: call, tryAcquire, submit. Latency and counters are always recorded. */
  static final class Ours extends Subject {
    private final Bulkhead bulkhead;
    private Permit held;

    Ours(int limit) {
      bulkhead = Bulkhead.builder("bench").limit(limit).build();
    }

    @Override
    Object sync(Callable<Object> task) throws Exception {
      return bulkhead.call(task);
    }

    @Override
    boolean permit() {
      Optional<Permit> p = bulkhead.tryAcquire();
      if (p.isEmpty()) {
        return false;
      }
      p.get().close();
      return true;
    }

    @Override
    boolean acquire() {
      try (Permit p = bulkhead.acquire()) {
        return !p.isClosed();
      }
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      return bulkhead.submit(task);
    }

    @Override
    void fill() {
      held = bulkhead.tryAcquire().orElseThrow();
    }
  }

  /**
   * Resilience4j's SemaphoreBulkhead: default config (fair, stack traces on), or stack traces off.
   */
  static final class R4j extends Subject {
    private final io.github.resilience4j.bulkhead.Bulkhead bulkhead;

    R4j(int limit, boolean stackTraces) {
      bulkhead =
          io.github.resilience4j.bulkhead.Bulkhead.of(
              "bench",
              BulkheadConfig.custom()
                  .maxConcurrentCalls(limit)
                  .maxWaitDuration(Duration.ZERO)
                  .writableStackTraceEnabled(stackTraces)
                  .build());
    }

    @Override
    Object sync(Callable<Object> task) throws Exception {
      return bulkhead.executeCallable(task);
    }

    @Override
    boolean permit() {
      if (!bulkhead.tryAcquirePermission()) {
        return false;
      }
      bulkhead.onComplete();
      return true;
    }

    @Override
    boolean acquire() {
      bulkhead.acquirePermission();
      bulkhead.onComplete();
      return true;
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      return io.github.resilience4j.bulkhead.Bulkhead.decorateCompletionStage(bulkhead, task).get();
    }

    @Override
    void fill() {
      for (int i = 0; i < bulkhead.getBulkheadConfig().getMaxConcurrentCalls(); i++) {
        bulkhead.acquirePermission();
      }
    }
  }

  /** Failsafe's Bulkhead: through a FailsafeExecutor for tasks, its permit API for bare permits. */
  static final class FailsafeSubject extends Subject {
    private final dev.failsafe.Bulkhead<Object> bulkhead;
    private final FailsafeExecutor<Object> executor;
    private final int limit;

    FailsafeSubject(int limit) {
      this.limit = limit;
      bulkhead = dev.failsafe.Bulkhead.builder(limit).build();
      executor = Failsafe.with(bulkhead);
    }

    @Override
    Object sync(Callable<Object> task) {
      return executor.get(task::call);
    }

    @Override
    boolean permit() {
      if (!bulkhead.tryAcquirePermit()) {
        return false;
      }
      bulkhead.releasePermit();
      return true;
    }

    @Override
    boolean acquire() throws InterruptedException {
      bulkhead.acquirePermit();
      bulkhead.releasePermit();
      return true;
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      return executor.getStageAsync(task::get);
    }

    @Override
    void fill() {
      for (int i = 0; i < limit; i++) {
        bulkhead.tryAcquirePermit();
      }
    }
  }

  /** Netflix concurrency-limits' SimpleLimiter with a fixed limit: it never waits. */
  static final class Netflix extends Subject {
    private final SimpleLimiter<Void> limiter;
    private final int limit;

    Netflix(int limit) {
      this.limit = limit;
      limiter = SimpleLimiter.newBuilder().limit(FixedLimit.of(limit)).build();
    }

    @Override
    Object sync(Callable<Object> task) throws Exception {
      Optional<Limiter.Listener> listener = limiter.acquire(null);
      if (listener.isEmpty()) {
        return REJECTED;
      }
      try {
        Object result = task.call();
        listener.get().onSuccess();
        return result;
      } catch (Exception e) {
        listener.get().onIgnore();
        throw e;
      }
    }

    @Override
    boolean permit() {
      Optional<Limiter.Listener> listener = limiter.acquire(null);
      if (listener.isEmpty()) {
        return false;
      }
      listener.get().onSuccess();
      return true;
    }

    /** SimpleLimiter never waits: its acquire is the bare permit. */
    @Override
    boolean acquire() {
      return permit();
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      Optional<Limiter.Listener> listener = limiter.acquire(null);
      if (listener.isEmpty()) {
        return CompletableFuture.failedFuture(new IllegalStateException("limit"));
      }
      return task.get().whenComplete((v, e) -> listener.get().onSuccess());
    }

    @Override
    void fill() {
      for (int i = 0; i < limit; i++) {
        limiter.acquire(null);
      }
    }
  }

  /** java.util.concurrent.Semaphore: the floor. */
  static final class Sem extends Subject {
    private final Semaphore semaphore;
    private final int limit;

    Sem(int limit, boolean fair) {
      this.limit = limit;
      semaphore = new Semaphore(limit, fair);
    }

    @Override
    Object sync(Callable<Object> task) throws Exception {
      if (!semaphore.tryAcquire()) {
        return REJECTED;
      }
      try {
        return task.call();
      } finally {
        semaphore.release();
      }
    }

    @Override
    boolean permit() {
      if (!semaphore.tryAcquire()) {
        return false;
      }
      semaphore.release();
      return true;
    }

    @Override
    boolean acquire() throws InterruptedException {
      semaphore.acquire();
      semaphore.release();
      return true;
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      if (!semaphore.tryAcquire()) {
        return CompletableFuture.failedFuture(new IllegalStateException("limit"));
      }
      return task.get().whenComplete((v, e) -> semaphore.release());
    }

    @Override
    void fill() {
      semaphore.acquireUninterruptibly(limit);
    }
  }

  /** No compartment at all: the task and its future alone. */
  static class None extends Subject {
    @Override
    Object sync(Callable<Object> task) throws Exception {
      return task.call();
    }

    @Override
    boolean permit() {
      return true;
    }

    @Override
    boolean acquire() {
      return true;
    }

    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      return task.get();
    }

    @Override
    void fill() {
      throw new UnsupportedOperationException("nothing to fill");
    }
  }

  /** No compartment; the async path allocates and completes one future, as any wrapper must. */
  static final class OneFuture extends None {
    @Override
    CompletionStage<Object> async(Supplier<CompletionStage<Object>> task) {
      CompletableFuture<Object> f = new CompletableFuture<>();
      f.complete(task.get().toCompletableFuture().join());
      return f;
    }
  }

  static boolean isRejection(Throwable t) {
    return t instanceof BulkheadFullException
        || t instanceof io.github.resilience4j.bulkhead.BulkheadFullException
        || t instanceof dev.failsafe.BulkheadFullException;
  }
}
