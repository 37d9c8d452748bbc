package io.bulkhead.benchmarks;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.Permit;
import io.bulkhead.internal.JsonWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.HdrHistogram.Histogram;

/**
 * Scale: many asynchronous waiters parked with a timeout in one compartment.
 *
 * <p>Every slot is held, then {@code --waiters} calls are submitted; each waits without a thread
 * until its {@code maxWait} passes and it is rejected with WAIT_TIMEOUT. Reports the heap each
 * waiter costs (its future and the compartment's queue node; measured as the growth of the used
 * heap after full GCs, minus the harness's own array of references) and the timeout lateness: how
 * long after its deadline each waiter's rejection arrived, after one unmeasured round of 20,000
 * waiters that lets the JIT compile the expiry path. Usage: {@code java -cp benchmarks.jar
 * io.bulkhead.benchmarks.WaiterScale [waiters] [maxWaitMillis]}.
 */
public final class WaiterScale {

  static final int WARM_UP_WAITERS = 20_000;
  static final Duration WARM_UP_WAIT = Duration.ofMillis(2_000);

  private WaiterScale() {}

  public static void main(String[] args) throws Exception {
    int waiters = args.length > 0 ? Integer.parseInt(args[0]) : 100_000;
    long maxWaitMillis = args.length > 1 ? Long.parseLong(args[1]) : 3_000;
    // One unmeasured round first, as JMH warms up: otherwise the expiry path runs interpreted until
    // the JIT compiles it, and the first deadlines measure the compiler, not the compartment.
    run(Math.min(waiters, WARM_UP_WAITERS), WARM_UP_WAIT);
    Result r = run(waiters, Duration.ofMillis(maxWaitMillis));
    System.out.println(r.toJson());
  }

  static final class Result {
    int waiters;
    double bytesPerWaiter;
    double latenessP50Ms;
    double latenessP99Ms;
    double latenessMaxMs;
    long enqueueMillis;
    long timedOut;

    /** One line of JSON: bytes to a tenth, lateness to a microsecond. */
    String toJson() {
      return JsonWriter.compact()
          .beginObject()
          .name("waiters")
          .value(waiters)
          .name("bytes_per_waiter")
          .value(Math.round(bytesPerWaiter * 10) / 10.0)
          .name("lateness_p50_ms")
          .value(Math.round(latenessP50Ms * 1000) / 1000.0)
          .name("lateness_p99_ms")
          .value(Math.round(latenessP99Ms * 1000) / 1000.0)
          .name("lateness_max_ms")
          .value(Math.round(latenessMaxMs * 1000) / 1000.0)
          .name("enqueue_ms")
          .value(enqueueMillis)
          .name("timed_out")
          .value(timedOut)
          .endObject()
          .toJson();
    }
  }

  static Result run(int waiters, Duration maxWait) throws Exception {
    Bulkhead bulkhead =
        Bulkhead.builder("scale").limit(1).maxQueue(waiters).maxWait(maxWait).build();
    Permit held = bulkhead.tryAcquire().orElseThrow();
    CompletableFuture<Object> never = new CompletableFuture<>();
    Supplier<CompletionStage<Object>> task = () -> never; // shared: measure the compartment's cost
    @SuppressWarnings("unchecked")
    CompletableFuture<Object>[] futures = new CompletableFuture[waiters];
    long[] enqueuedAt = new long[waiters];
    long[] rejectedAt = new long[waiters];

    MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    long before = usedAfterGc(memory);
    long start = System.nanoTime();
    for (int i = 0; i < waiters; i++) {
      enqueuedAt[i] = System.nanoTime();
      futures[i] = bulkhead.submit(task);
    }
    long enqueueNanos = System.nanoTime() - start;
    long after = usedAfterGc(memory);
    if (bulkhead.stats().waiting() != waiters) {
      throw new IllegalStateException(
          "expected "
              + waiters
              + " waiting but "
              + bulkhead.stats().waiting()
              + " wait; was the enqueueing slower than maxWait?");
    }

    CountDownLatch done = new CountDownLatch(waiters);
    for (int i = 0; i < waiters; i++) {
      int index = i;
      // handle() sees the rejection itself; whenComplete() would make the JDK wrap it in a
      // CompletionException with a stack trace, a cost of CompletableFuture, not of the
      // compartment.
      futures[i].handle(
          (v, e) -> {
            rejectedAt[index] = System.nanoTime();
            if (!(e instanceof BulkheadFullException)
                || ((BulkheadFullException) e).reason()
                    != BulkheadFullException.Reason.WAIT_TIMEOUT) {
              throw new IllegalStateException("waiter " + index + " ended with " + e);
            }
            done.countDown();
            return null;
          });
    }
    if (!done.await(maxWait.toMillis() + 60_000, TimeUnit.MILLISECONDS)) {
      throw new IllegalStateException(done.getCount() + " waiters never timed out");
    }
    held.close();

    Histogram lateness = new Histogram(TimeUnit.MINUTES.toNanos(5), 3);
    long maxWaitNanos = maxWait.toNanos();
    for (int i = 0; i < waiters; i++) {
      lateness.recordValue(Math.max(0, rejectedAt[i] - (enqueuedAt[i] + maxWaitNanos)));
    }
    Result r = new Result();
    r.waiters = waiters;
    // The harness's own array of futures is not the compartment's cost.
    long harness = 16L + 4L * waiters;
    r.bytesPerWaiter = (after - before - harness) / (double) waiters;
    r.latenessP50Ms = lateness.getValueAtPercentile(50) / 1e6;
    r.latenessP99Ms = lateness.getValueAtPercentile(99) / 1e6;
    r.latenessMaxMs = lateness.getMaxValue() / 1e6;
    r.enqueueMillis = TimeUnit.NANOSECONDS.toMillis(enqueueNanos);
    r.timedOut = bulkhead.stats().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT);
    return r;
  }

  private static long usedAfterGc(MemoryMXBean memory) throws InterruptedException {
    long used = Long.MAX_VALUE;
    for (int i = 0; i < 5; i++) {
      System.gc();
      Thread.sleep(100); // let a concurrent collector finish; pacing, not synchronisation
      used = Math.min(used, memory.getHeapMemoryUsage().getUsed());
    }
    return used;
  }
}
