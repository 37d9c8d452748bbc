package io.bulkhead.benchmarks;

import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import io.bulkhead.micrometer.BulkheadMetrics;
import io.bulkhead.micrometer.BulkheadTracing;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import io.micrometer.tracing.Tracer;
import java.util.Optional;
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
 * What the tracing hook costs a call admitted at once, the path every call takes: the compartment
 * with no listener ({@code absent}) against the same compartment with {@link BulkheadTracing}
 * attached to Micrometer Tracing's no-op tracer ({@code noop}). Any listener makes a compartment
 * time every call (two clock reads) rather than one in 256, so {@code noop} pays that plus a
 * listener call that returns at once; an application that binds {@code BulkheadMetrics} pays the
 * timing already. The ratio noop/absent is the figure, measured in one run.
 *
 * <pre>
 * mvn -B -q -Pbenchmarks -pl bulkhead-benchmarks -am package -DskipTests
 * java -jar bulkhead-benchmarks/target/benchmarks.jar TracingHookBenchmark -f 2 -wi 3 -i 5
 * </pre>
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(2)
@Threads(1)
@State(Scope.Benchmark)
public class TracingHookBenchmark {

  @Param({"absent", "noop", "metrics", "metrics+noop"})
  public String hook;

  private Bulkhead bulkhead;
  private final Object value = new Object();
  private final Callable<Object> task = () -> value;

  @Setup
  public void setUp() {
    bulkhead = Bulkhead.builder("b").limit(1_000).maxQueue(0).build();
    if (hook.startsWith("metrics")) {
      BulkheadMetrics.of(bulkhead).bindTo(new SimpleMeterRegistry());
    }
    if (hook.endsWith("noop")) {
      bulkhead.addListener(BulkheadTracing.of(Tracer.NOOP));
    }
  }

  @Benchmark
  public Object sync() throws Exception {
    return bulkhead.call(task);
  }

  @Benchmark
  public boolean permit() {
    Optional<Permit> p = bulkhead.tryAcquire();
    p.ifPresent(Permit::close);
    return p.isPresent();
  }
}
