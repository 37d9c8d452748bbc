package io.bulkhead.benchmarks;

import io.bulkhead.Bulkhead;
import io.bulkhead.Permit;
import io.bulkhead.config.Quantities;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.redis.FleetBulkhead;
import io.bulkhead.redis.RedisCompartments;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.Callable;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicReference;
import org.HdrHistogram.Histogram;
import org.jspecify.annotations.Nullable;

/**
 * What a fleet compartment costs: admit and release (take a permit, give it back at once) on a
 * {@link RedisCompartments} compartment against the Redis on loopback, next to the same on a local
 * {@link Bulkhead}, at one thread and at four. Every operation is timed on its own with {@code
 * System.nanoTime()} into a per-thread HdrHistogram, so the figures are p50 and p99 per operation
 * (JMH's average time would hide the tail of a network round trip) and the throughput of all
 * threads together. The limit is far above the thread count: no caller ever waits for a slot, so
 * the figures are the admitted path alone. For the fleet that path makes no round trip: the process
 * holds a lease on a batch of slots (the whole limit here, alone in the fleet) and a call takes the
 * local gate's slot and one of the lease's in memory, and gives both back; Redis sees one sync per
 * rebalance interval in the background, whatever the call rate.
 *
 * <p>Usage: {@code java -cp benchmarks.jar io.bulkhead.benchmarks.FleetCost [REDIS_URI [WARM_UP
 * [MEASURE [SUBJECTS [OPERATION]]]]]}, defaults {@code redis://127.0.0.1:6379 3s 10s both permit};
 * prints one line of JSON. OPERATION {@code call} admits and releases through {@code call()}
 * instead of a permit. Each subject and thread count runs its warm-up, then its measurement, in the
 * order local 1, fleet 1, local 4, fleet 4. {@code local} or {@code fleet} as SUBJECTS measures
 * that one alone, so that its loop is not compiled with the other's profile: the steadier
 * comparison runs the local JVMs, then the fleet's, and divides. {@code clocked} measures the local
 * compartment with the two {@code System.nanoTime()} readings a fleet call makes added to each
 * operation (one after its slot is taken, one as it is given back): the most a fleet compartment
 * whose lease expires, and which counts every call that overruns, can reach against a local one.
 */
public final class FleetCost {

  /** Far above any thread count here: nobody waits, only the admitted path is measured. */
  private static final int LIMIT = 1_000;

  /** A name of its own on the shared Redis, reused by every run (a run leaves no lease behind). */
  private static final String COMPARTMENT = "benchmark-fleet-cost";

  private static final int[] THREADS = {1, 4};
  private static final long HIGHEST_NANOS = TimeUnit.SECONDS.toNanos(10);

  /** Where the clocked subject's readings go, so that the compiler keeps them. */
  private static final AtomicLong sink = new AtomicLong();

  private FleetCost() {}

  public static void main(String[] args) throws Exception {
    String redis = args.length > 0 ? args[0] : "redis://127.0.0.1:6379";
    Duration warmUp = Quantities.parseDuration(args.length > 1 ? args[1] : "3s");
    Duration measure = Quantities.parseDuration(args.length > 2 ? args[2] : "10s");
    String only = args.length > 3 ? args[3] : "both";
    String operation = args.length > 4 ? args[4] : "permit";
    if (!List.of("permit", "call").contains(operation)) {
      System.err.println("FleetCost: OPERATION must be permit or call, not '" + operation + "'");
      System.exit(2);
    }
    boolean viaCall = operation.equals("call");
    if (!List.of("both", "local", "fleet", "clocked").contains(only)) {
      System.err.println(
          "FleetCost: SUBJECTS must be both, local, fleet or clocked, not '" + only + "'");
      System.exit(2);
    }
    String loadBefore = loadAverage();
    JsonWriter out = JsonWriter.compact().beginObject();
    out.name("redis").value(redis.replaceAll("//[^@/]*@", "//")); // never a password
    out.name("cores").value(Runtime.getRuntime().availableProcessors());
    out.name("load_before").value(loadBefore);
    out.name("operation").value(operation);
    out.name("warm_up_s").value(warmUp.toMillis() / 1000.0);
    out.name("measure_s").value(measure.toMillis() / 1000.0);
    out.name("results").beginArray();
    try (RedisCompartments fleet = RedisCompartments.connect(redis)) {
      FleetBulkhead remote =
          fleet.builder(COMPARTMENT).limit(LIMIT).maxCallDuration(Duration.ofSeconds(10)).build();
      if (remote.fleetStats().inFallback()) {
        System.err.println(
            "FleetCost: no Redis answers at "
                + redis
                + "; start one (the"
                + " measurement needs a real round trip)");
        System.exit(2);
      }
      Bulkhead local = Bulkhead.builder("local").limit(LIMIT).build();
      for (int threads : THREADS) {
        for (String name : List.of("local", "fleet", "clocked")) {
          boolean wanted = only.equals(name) || (only.equals("both") && !name.equals("clocked"));
          if (!wanted) {
            continue;
          }
          Bulkhead subject = name.equals("fleet") ? remote : local;
          boolean clocked = name.equals("clocked");
          settle(subject, threads);
          run(subject, clocked, viaCall, threads, warmUp);
          Result r = run(subject, clocked, viaCall, threads, measure);
          out.beginObject()
              .name("subject")
              .value(name)
              .name("threads")
              .value(threads)
              .name("ops")
              .value(r.histogram.getTotalCount())
              .name("ops_per_s")
              .value(Math.round(r.histogram.getTotalCount() / r.seconds))
              .name("p50_us")
              .value(micros(r.histogram.getValueAtPercentile(50)))
              .name("p99_us")
              .value(micros(r.histogram.getValueAtPercentile(99)))
              .name("p999_us")
              .value(micros(r.histogram.getValueAtPercentile(99.9)))
              .name("max_us")
              .value(micros(r.histogram.getMaxValue()))
              .endObject();
        }
      }
      if (remote.fleetStats().fallbackSwitches() > 0) {
        System.err.println(
            "FleetCost: the fleet compartment fell back "
                + remote.fleetStats().fallbackSwitches()
                + " times (Redis too slow to answer?)");
      }
      out.endArray();
      out.name("fallback_switches").value(remote.fleetStats().fallbackSwitches());
    }
    out.name("load_after").value(loadAverage());
    System.out.println(out.endObject().toJson());
  }

  private record Result(Histogram histogram, double seconds) {}

  /**
   * Waits until {@code threads} permits can be held at once: a fleet process that joined a moment
   * ago may hold no slot of the lease until the members that came first give back theirs (one
   * rebalance), and with no queue its first calls would be refused. At most 30 s.
   */
  private static void settle(Bulkhead subject, int threads) throws InterruptedException {
    long giveUpAt = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
    for (; ; ) {
      List<Permit> held = new ArrayList<>();
      try {
        for (int i = 0; i < threads; i++) {
          Optional<Permit> p = subject.tryAcquire();
          if (p.isEmpty()) {
            break;
          }
          held.add(p.get());
        }
        if (held.size() == threads) {
          return;
        }
      } finally {
        held.forEach(Permit::close);
      }
      if (System.nanoTime() - giveUpAt > 0) {
        throw new IllegalStateException(
            "FleetCost: " + threads + " permits could not be held at once within 30 s");
      }
      Thread.sleep(50);
    }
  }

  /**
   * {@code threads} threads admit and release on {@code subject} for {@code length}; each records
   * into its own histogram, merged once every thread has stopped. With {@code clocked}, each
   * operation also reads the clock twice, as a fleet call does.
   */
  private static Result run(
      Bulkhead subject, boolean clocked, boolean viaCall, int threads, Duration length)
      throws InterruptedException {
    List<Histogram> histograms = new ArrayList<>();
    List<Thread> workers = new ArrayList<>();
    CountDownLatch ready = new CountDownLatch(threads);
    CountDownLatch go = new CountDownLatch(1);
    long[] stopAt = new long[1];
    AtomicReference<Throwable> failed = new AtomicReference<>();
    for (int t = 0; t < threads; t++) {
      Histogram h = new Histogram(HIGHEST_NANOS, 3);
      histograms.add(h);
      Thread w =
          new Thread(
              () -> {
                ready.countDown();
                try {
                  go.await();
                } catch (InterruptedException e) {
                  return;
                }
                long end = stopAt[0]; // written before go opened: the latch orders it
                long readings = 0;
                long[] inside = new long[1]; // the clocked call's readings inside the task
                Callable<@Nullable Void> task =
                    clocked
                        ? () -> {
                          inside[0] += System.nanoTime();
                          return null;
                        }
                        : () -> null;
                try {
                  for (long before = System.nanoTime();
                      before - end < 0;
                      before = System.nanoTime()) {
                    if (viaCall) {
                      // the same through call(): no permit object for the caller to hold
                      subject.call(task);
                    } else {
                      try (Permit p = subject.acquire()) {
                        // admitted and released at once: the path itself is the subject
                        if (clocked) {
                          readings += System.nanoTime(); // a fleet call's reading after its slot
                        }
                      }
                    }
                    if (clocked) {
                      readings += System.nanoTime(); // and its reading as the slot is given back
                    }
                    long after = System.nanoTime();
                    h.recordValue(Math.min(HIGHEST_NANOS, Math.max(1, after - before)));
                  }
                } catch (Exception | Error e) {
                  failed.compareAndSet(null, e); // a refused call: the run measured nothing
                }
                sink.addAndGet(readings + inside[0]); // used, so the readings are made
              },
              "fleet-cost-" + t);
      workers.add(w);
      w.start();
    }
    ready.await();
    long start = System.nanoTime();
    stopAt[0] = start + length.toNanos();
    go.countDown();
    for (Thread w : workers) {
      w.join();
    }
    if (failed.get() != null) {
      throw new IllegalStateException("FleetCost: a worker stopped; the run is void", failed.get());
    }
    double seconds = (System.nanoTime() - start) / 1e9;
    Histogram all = new Histogram(HIGHEST_NANOS, 3);
    for (Histogram h : histograms) {
      all.add(h);
    }
    return new Result(all, seconds);
  }

  private static double micros(long nanos) {
    return Math.round(nanos / 10.0) / 100.0; // to 0.01 µs
  }

  private static String loadAverage() {
    try {
      String[] fields = Files.readString(Path.of("/proc/loadavg")).trim().split("\\s+");
      return fields[0] + " " + fields[1] + " " + fields[2];
    } catch (Exception e) {
      return "unknown";
    }
  }
}
