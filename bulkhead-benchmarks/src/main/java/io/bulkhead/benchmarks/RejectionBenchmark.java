package io.bulkhead.benchmarks;

import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.openjdk.jmh.annotations.Benchmark;
import org.openjdk.jmh.annotations.BenchmarkMode;
import org.openjdk.jmh.annotations.Fork;
import org.openjdk.jmh.annotations.Level;
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
 * The rejection path: every slot is taken, and a caller asks to run a task. What it costs to say
 * "no" — including building the exception, where the subject throws one.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@Threads(1)
@State(Scope.Benchmark)
public class RejectionBenchmark {

  @Param({
    Subject.BULKHEAD,
    Subject.R4J,
    Subject.R4J_NO_STACK,
    Subject.FAILSAFE,
    Subject.NETFLIX,
    Subject.SEMAPHORE_FAIR,
    Subject.SEMAPHORE
  })
  public String subject;

  private Subject s;
  private final Callable<Object> task =
      () -> {
        throw new AssertionError("a full compartment ran a task");
      };

  @Setup(Level.Trial)
  public void setUp() {
    s = Subject.create(subject, 1);
    s.fill();
  }

  @Benchmark
  public Object rejected() {
    try {
      Object result = s.sync(task);
      if (result != Subject.REJECTED) {
        throw new AssertionError("not rejected");
      }
      return result;
    } catch (Exception e) {
      if (!Subject.isRejection(e)) {
        throw new AssertionError(e);
      }
      return e;
    }
  }
}
