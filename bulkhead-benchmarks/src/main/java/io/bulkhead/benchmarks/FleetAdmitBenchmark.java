package io.bulkhead.benchmarks;

import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import io.bulkhead.redis.FleetBulkhead;
import io.bulkhead.redis.RedisCompartments;
import io.bulkhead.spi.ProvisionalAdmission;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.concurrent.TimeUnit;
import org.jspecify.annotations.Nullable;
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
import org.openjdk.jmh.annotations.TearDown;
import org.openjdk.jmh.annotations.Threads;
import org.openjdk.jmh.annotations.Warmup;

/**
 * A fleet compartment's admitted path beside a local one's, each in JVMs of its own (JMH's forks),
 * so that neither is compiled with the other's profile: {@code permit} takes a permit and closes
 * it, {@code call} runs a trivial task inside the compartment. The fleet compartment holds a lease
 * on the Redis at {@code -Dbulkhead.redis} (default {@code redis://127.0.0.1:6379}) and is alone in
 * its fleet, so every call is admitted from the lease in memory. {@code provisional} is a local
 * compartment's admission that a fleet compartment's gate makes for a call admitted at once
 * (admitAtOnce: a slot without an object, counted by its CAS; releaseTaken) without the lease, its
 * ticket or its clock readings: the fleet's cost less that is what the lease adds. {@link
 * FleetCost} is the several-process measurement; this one isolates the per-call cost.
 */
@BenchmarkMode(Mode.AverageTime)
@OutputTimeUnit(TimeUnit.NANOSECONDS)
@Warmup(iterations = 3, time = 1)
@Measurement(iterations = 5, time = 1)
@Fork(3)
@Threads(1)
@State(Scope.Benchmark)
public class FleetAdmitBenchmark {

  @Param({"local", "provisional", "fleet"})
  public String subject;

  private @Nullable RedisCompartments fleet;
  private Bulkhead bulkhead;
  private @Nullable ProvisionalAdmission provisional;
  private final Object value = new Object();
  private final Callable<Object> task = () -> value;

  @Setup
  public void setUp() {
    if (!subject.equals("fleet")) {
      bulkhead = Bulkhead.builder("local").limit(1_000).build();
      if (subject.equals("provisional")) {
        provisional = ProvisionalAdmission.of(bulkhead).orElseThrow();
      }
      return;
    }
    fleet =
        RedisCompartments.connect(System.getProperty("bulkhead.redis", "redis://127.0.0.1:6379"));
    FleetBulkhead remote =
        fleet
            .builder("benchmark-fleet-admit-" + ProcessHandle.current().pid())
            .limit(1_000)
            .maxCallDuration(Duration.ofSeconds(10))
            .build();
    if (remote.fleetStats().inFallback()) {
      throw new IllegalStateException("no lease from Redis: the fleet subject needs a Redis");
    }
    bulkhead = remote;
  }

  @TearDown
  public void tearDown() {
    if (fleet != null) {
      fleet.close();
    }
  }

  @Benchmark
  public boolean permit() {
    ProvisionalAdmission twoStep = provisional;
    if (twoStep != null) {
      int admitted = twoStep.admitAtOnce();
      twoStep.releaseTaken(admitted, twoStep.admittedAt(admitted));
      return admitted != ProvisionalAdmission.NOT_TAKEN;
    }
    try (Permit p = bulkhead.acquire()) {
      return p.isClosed();
    }
  }

  @Benchmark
  public Object call() throws Exception {
    ProvisionalAdmission twoStep = provisional;
    if (twoStep != null) {
      int admitted = twoStep.admitAtOnce();
      long admittedAt = twoStep.admittedAt(admitted);
      try {
        return task.call();
      } finally {
        twoStep.releaseTaken(admitted, admittedAt);
      }
    }
    return bulkhead.call(task);
  }
}
