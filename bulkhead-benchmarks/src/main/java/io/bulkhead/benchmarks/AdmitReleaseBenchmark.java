package io.bulkhead.benchmarks;

import java.util.concurrent.Callable;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Measurement;
import org.openjdk.jmh.annotations.Mode;
import org.openjdk.jmh.annotations.OutputTimeUnit;
import org.openjdk.jmh.annotations.Param;
import org.openjdk.jmh.annotations.Scope;
import org.openjdk.jmh.annotations.Setup;
import org.openjdk.jmh.annotations.State;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * The admitted path, uncontended: one thread takes a slot, runs a trivial task and gives the slot
 * back. {@code sync} runs a task inside the compartment, {@code permit} takes and closes a bare
 * permit without waiting ({@code tryAcquire}), {@code acquire} takes one with the call that would
 * wait for it, {@code async} runs a task whose stage is already complete. The task itself is the
 * same for every subject, and {@code none} measures it with no compartment, so the difference is
 * the compartment's own cost; {@code future} is the async baseline that allocates and completes the
 * one future any async wrapper returns. Run with {@code -prof gc} for allocation per operation.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@Threads(1)
@State(Scope.Benchmark)
public class AdmitReleaseBenchmark {

  @Param({
    Subject.BULKHEAD,
    Subject.R4J,
    Subject.R4J_NO_STACK,
    Subject.FAILSAFE,
    Subject.NETFLIX,
    Subject.SEMAPHORE_FAIR,
    Subject.SEMAPHORE,
    Subject.NONE,
    Subject.FUTURE
  })
  public String subject;

  private Subject s;
  private final Object value = new Object();
  private final Callable<Object> task = () -> value;
  private final CompletableFuture<Object> done = CompletableFuture.completedFuture(value);
  private final Supplier<CompletionStage<Object>> asyncTask = () -> done;

  @Setup
  public void setUp() {
    s = Subject.create(subject, 1_000);
  }

  @Benchmark
  public Object sync() throws Exception {
    return s.sync(task);
  }

  @Benchmark
  public boolean permit() {
    return s.permit();
  }

  @Benchmark
  public boolean acquire() throws Exception {
    return s.acquire();
  }

  @Benchmark
  public CompletionStage<Object> async() {
    return s.async(asyncTask);
  }
}
