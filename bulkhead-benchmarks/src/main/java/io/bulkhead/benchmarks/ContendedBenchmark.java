package io.bulkhead.benchmarks;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
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
 * Several threads admitting and releasing on one compartment at once (the limit is high enough that
 * every one is always admitted): the cost of contention on the shared state. {@code sync} runs a
 * task inside the compartment, {@code permit} takes a permit without waiting and closes it, {@code
 * acquire} takes one with the call that would wait for it. Two threads by default; {@code
 * bulkhead-benchmarks/scripts/run} runs it with JMH's {@code -t 1}, {@code -t 2}, {@code -t 4} and
 * {@code -t 8}, each thread count in its own JMH run with every subject side by side.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
// A permit allocates; without touching the heap first, its first laps through fresh memory run
// several times slower on some virtual machines, a start-up cost the other subjects never pay.
@Fork(value = 2, jvmArgsAppend = "-XX:+AlwaysPreTouch")
@Threads(2)
@State(Scope.Benchmark)
public class ContendedBenchmark {

  @Param({
    Subject.BULKHEAD,
    Subject.R4J,
    Subject.FAILSAFE,
    Subject.NETFLIX,
    Subject.SEMAPHORE_FAIR,
    Subject.SEMAPHORE
  })
  public String subject;

  private Subject s;
  private final Object value = new Object();
  private final Callable<Object> task = () -> value;

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
}
