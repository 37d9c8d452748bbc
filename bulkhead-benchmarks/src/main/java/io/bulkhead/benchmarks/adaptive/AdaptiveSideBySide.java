package io.bulkhead.benchmarks.adaptive;

import com.netflix.concurrency.limits.Limiter;
import com.netflix.concurrency.limits.limit.Gradient2Limit;
import com.netflix.concurrency.limits.limit.VegasLimit;
import com.netflix.concurrency.limits.limiter.SimpleLimiter;
import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.LimitController;
import io.bulkhead.Permit;
import io.bulkhead.scenarios.LineChart;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.LockSupport;

/**
 * Adaptive limits side by side, without JMH: one fake dependency whose latency follows a script (2
 * s, 30 s, 2 s answers, scaled down to 20 ms, 300 ms, 20 ms, then a demand step to three times the
 * arrivals), the same open-loop load, and five gates in front of it in turn: a static limit,
 * Bulkhead's gradient and AIMD controllers, and concurrency-limits' SimpleLimiter with
 * Gradient2Limit and VegasLimit. Every request takes one of 32 server threads (a servlet
 * container's pool), so calls the gate lets pile up on the slow dependency hold threads the
 * protected neighbour, "login" (5 ms, arriving at 100/s), then waits for.
 *
 * <p>The dependency serves {@value #KNEE} calls at its base latency; beyond that, by default
 * ({@code fixed}), a call's latency is stretched once, by the calls inside when it starts (latency
 * = base × max(1, inside / knee)), and it keeps that latency after others leave. With {@code
 * shared}, calls past the knee share the dependency's capacity while inside ({@link
 * SharedDependency}: each of n progresses at knee / n of full speed, and speeds up when others
 * leave), like a server sharing its CPUs; a gate that lowers its limit then loses no answers while
 * the calls admitted before drain.
 *
 * <p>Per phase and variant: goodput (answers per second the dependency completed during the phase,
 * whenever the call arrived: a call still running when its phase ends is credited to the phase that
 * sees its answer, so a gate is not credited with work its backlog does after the script moved on),
 * the answers per second to the phase's own arrivals (the count used before: it credits a gate with
 * the backlog it still holds when the phase ends), refusals, the neighbour's p99 from arrival to
 * answer, convergence (time from the phase's start until the limit stays within 10% of its median
 * over the phase's second half) and oscillation (the limit's standard deviation over the phase's
 * second half). Usage: {@code AdaptiveSideBySide <out-dir> [rounds] [shared|fixed]}: with several
 * rounds the variants take turns in each, and the table holds each cell's median (and every round's
 * goodput); the last argument chooses the dependency's model (fixed by default).
 */
public final class AdaptiveSideBySide {

  static final int KNEE = 6;
  static final int SERVER_THREADS = 32;
  static final long SAMPLE_NANOS = TimeUnit.MILLISECONDS.toNanos(10);

  record Phase(String name, Duration length, Duration base, double llmRate) {}

  static final List<Phase> PHASES =
      List.of(
          new Phase("normal 20ms", Duration.ofSeconds(4), Duration.ofMillis(20), 250),
          new Phase("slow 300ms", Duration.ofSeconds(6), Duration.ofMillis(300), 250),
          new Phase("recovered 20ms", Duration.ofSeconds(4), Duration.ofMillis(20), 250),
          new Phase("demand x3", Duration.ofSeconds(4), Duration.ofMillis(20), 750));

  static final double LOGIN_RATE = 100;

  /** What stands in front of the dependency. */
  interface Gate {
    /** A release to run when the call ends, or empty when refused. */
    Optional<Runnable> enter();

    int limit();
  }

  static Gate bulkhead(String name, AdaptiveLimit adaptive) {
    var b = Bulkhead.builder(name).limit(10).maxQueue(5).maxWait(Duration.ofMillis(50));
    if (adaptive != null) {
      b.adaptive(adaptive);
    }
    Bulkhead bulkhead = b.build();
    return new Gate() {
      @Override
      public Optional<Runnable> enter() {
        try {
          Permit p = bulkhead.acquire();
          return Optional.of(p::close);
        } catch (BulkheadFullException refused) {
          return Optional.empty();
        }
      }

      @Override
      public int limit() {
        return bulkhead.config().limit();
      }
    };
  }

  static Gate concurrencyLimits(com.netflix.concurrency.limits.Limit limit) {
    SimpleLimiter<Void> limiter = SimpleLimiter.newBuilder().limit(limit).build();
    return new Gate() {
      @Override
      public Optional<Runnable> enter() {
        Optional<Limiter.Listener> l = limiter.acquire(null);
        return l.map(listener -> listener::onSuccess);
      }

      @Override
      public int limit() {
        return limiter.getLimit();
      }
    };
  }

  record Variant(String name, java.util.function.Supplier<Gate> gate) {}

  static List<Variant> variants() {
    Duration interval = Duration.ofMillis(100);
    return List.of(
        new Variant("static 10", () -> bulkhead("llm", null)),
        new Variant(
            "bulkhead gradient",
            () -> bulkhead("llm", new AdaptiveLimit(LimitController.gradient(), 2, 20, interval))),
        new Variant(
            "bulkhead aimd",
            () -> bulkhead("llm", new AdaptiveLimit(LimitController.aimd(), 2, 20, interval))),
        new Variant(
            "c-l Gradient2",
            () ->
                concurrencyLimits(
                    Gradient2Limit.newBuilder()
                        .initialLimit(10)
                        .minLimit(2)
                        .maxConcurrency(20)
                        .build())),
        new Variant(
            "c-l Vegas",
            () ->
                concurrencyLimits(
                    VegasLimit.newBuilder().initialLimit(10).maxConcurrency(20).build())));
  }

  /** Per phase of one variant's run. */
  static final class PhaseStats {
    final AtomicLong completed = new AtomicLong(); // answered during the phase
    final AtomicLong answeredArrivals = new AtomicLong(); // arrived in it, answered at any time
    final AtomicLong refused = new AtomicLong();
    final ConcurrentLinkedQueue<Long> login = new ConcurrentLinkedQueue<>();
    final List<long[]> limits = new ArrayList<>(); // {nanos since phase start, limit}
  }

  /** One variant's figures in one phase of one round: the table's columns. */
  record Row(
      double goodput,
      double answered,
      long refused,
      double loginP99Millis,
      double convergedMillis,
      double limitMedian,
      double limitStddev) {}

  public static void main(String[] args) throws Exception {
    Path out = Path.of(args.length > 0 ? args[0] : "bulkhead-benchmarks/results/adaptive");
    int rounds = args.length > 1 ? Integer.parseInt(args[1]) : 1;
    if (rounds < 1) {
      System.err.println("AdaptiveSideBySide: rounds must be at least 1 but was " + rounds);
      System.exit(2);
    }
    String model = args.length > 2 ? args[2] : "fixed";
    if (!model.equals("shared") && !model.equals("fixed")) {
      System.err.println("AdaptiveSideBySide: model must be shared or fixed but was " + model);
      System.exit(2);
    }
    boolean shared = model.equals("shared");
    Files.createDirectories(out);
    String loadBefore = Files.readString(Path.of("/proc/loadavg")).trim();
    StringBuilder csv = new StringBuilder("variant,phase,t_ms,limit\n");
    List<Variant> variants = variants();
    // rows[variant][phase] over the rounds; the variants take turns within each round.
    List<List<List<Row>>> rows = new ArrayList<>();
    for (int v = 0; v < variants.size(); v++) {
      List<List<Row>> phases = new ArrayList<>();
      for (int i = 0; i < PHASES.size(); i++) {
        phases.add(new ArrayList<>());
      }
      rows.add(phases);
    }
    for (int r = 0; r < rounds; r++) {
      for (int v = 0; v < variants.size(); v++) {
        PhaseStats[] stats = run(variants.get(v).gate().get(), shared);
        for (int i = 0; i < PHASES.size(); i++) {
          PhaseStats s = stats[i];
          Phase p = PHASES.get(i);
          double seconds = p.length().toNanos() / 1e9;
          double[] tail = secondHalf(s.limits, p.length().toNanos());
          double median = median(tail);
          rows.get(v)
              .get(i)
              .add(
                  new Row(
                      s.completed.get() / seconds,
                      s.answeredArrivals.get() / seconds,
                      s.refused.get(),
                      p99(s.login) / 1e6,
                      converged(s.limits, median),
                      median,
                      stddev(tail)));
          if (r == 0) { // the chart shows the first round
            for (long[] l : s.limits) {
              csv.append(variants.get(v).name())
                  .append(',')
                  .append(p.name())
                  .append(',')
                  .append(l[0] / 1_000_000)
                  .append(',')
                  .append(l[1])
                  .append('\n');
            }
          }
        }
      }
      System.out.println("round " + (r + 1) + " of " + rounds + " done");
    }
    StringBuilder table = new StringBuilder();
    table.append("load average before: ").append(loadBefore).append("\n\n");
    table.append(
        shared
            ? "Dependency: shared (calls past the knee share its capacity while inside).\n\n"
            : "Dependency: fixed (a call's latency is set by the calls inside when it starts).\n\n");
    table.append(
        rounds == 1
            ? "One round.\n\n"
            : "Medians over "
                + rounds
                + " rounds (the variants take turns in each); goodput of every round in"
                + " brackets.\n\n");
    table.append(
        "| variant | phase | goodput/s | arrivals answered/s | refused | login p99 ms |"
            + " converged after ms | limit median | limit stddev |\n"
            + "|---|---|---|---|---|---|---|---|---|\n");
    for (int v = 0; v < variants.size(); v++) {
      for (int i = 0; i < PHASES.size(); i++) {
        List<Row> runs = rows.get(v).get(i);
        double converged = medianOf(runs, Row::convergedMillis);
        StringBuilder every = new StringBuilder();
        if (rounds > 1) {
          every.append(" [");
          for (Row row : runs) {
            every
                .append(every.length() > 2 ? ", " : "")
                .append(String.format(Locale.ROOT, "%.1f", row.goodput()));
          }
          every.append(']');
        }
        table.append(
            String.format(
                Locale.ROOT,
                "| %s | %s | %.1f%s | %.1f | %.0f | %.1f | %s | %.0f | %.2f |%n",
                variants.get(v).name(),
                PHASES.get(i).name(),
                medianOf(runs, Row::goodput),
                every,
                medianOf(runs, Row::answered),
                medianOf(runs, row -> row.refused()),
                medianOf(runs, Row::loginP99Millis),
                Double.isInfinite(converged)
                    ? "never"
                    : String.format(Locale.ROOT, "%.0f", converged),
                medianOf(runs, Row::limitMedian),
                medianOf(runs, Row::limitStddev)));
      }
    }
    table
        .append("\nload average after: ")
        .append(Files.readString(Path.of("/proc/loadavg")).trim())
        .append('\n');
    Files.writeString(out.resolve("table.md"), table);
    Files.writeString(out.resolve("limits.csv"), csv);
    Files.writeString(out.resolve("limits.svg"), svg(csv.toString()));
    System.out.println(table);
  }

  static double medianOf(List<Row> runs, java.util.function.ToDoubleFunction<Row> column) {
    return median(runs.stream().mapToDouble(column).toArray());
  }

  static PhaseStats[] run(Gate gate, boolean sharedModel) throws InterruptedException {
    ExecutorService server = Executors.newFixedThreadPool(SERVER_THREADS);
    SharedDependency dependency = sharedModel ? new SharedDependency(KNEE) : null;
    // As many as the server has threads: login is never refused, it only waits for a thread.
    Bulkhead loginGate = Bulkhead.builder("login").limit(SERVER_THREADS).build();
    AtomicInteger inside = new AtomicInteger();
    // One more than the phases: answers after the script ended count nowhere.
    PhaseStats[] stats = new PhaseStats[PHASES.size() + 1];
    for (int i = 0; i < stats.length; i++) {
      stats[i] = new PhaseStats();
    }
    AtomicInteger current = new AtomicInteger(); // the phase running now, for the answers
    for (int i = 0; i < PHASES.size(); i++) {
      current.set(i);
      Phase p = PHASES.get(i);
      PhaseStats s = stats[i];
      long start = System.nanoTime();
      long end = start + p.length().toNanos();
      long base = p.base().toNanos();
      double llmDue = 0;
      double loginDue = 0;
      long last = start;
      long nextSample = start;
      while (true) {
        long now = System.nanoTime();
        if (now >= end) {
          break;
        }
        double dt = (now - last) / 1e9;
        last = now;
        llmDue += p.llmRate() * dt;
        loginDue += LOGIN_RATE * dt;
        for (; llmDue >= 1; llmDue--) {
          server.execute(
              () -> {
                Optional<Runnable> release = gate.enter();
                if (release.isEmpty()) {
                  s.refused.incrementAndGet();
                  return;
                }
                try {
                  if (dependency != null) {
                    dependency.serve(base);
                  } else {
                    int n = inside.incrementAndGet();
                    long latency = (long) (base * Math.max(1.0, (double) n / KNEE));
                    LockSupport.parkNanos(latency);
                    inside.decrementAndGet();
                  }
                  stats[current.get()].completed.incrementAndGet();
                  s.answeredArrivals.incrementAndGet();
                } finally {
                  release.get().run();
                }
              });
        }
        for (; loginDue >= 1; loginDue--) {
          long arrived = System.nanoTime();
          server.execute(
              () -> {
                try {
                  loginGate.call(
                      () -> {
                        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(5));
                        return null;
                      });
                  s.login.add(System.nanoTime() - arrived);
                } catch (Exception cannotHappen) {
                  throw new IllegalStateException(cannotHappen);
                }
              });
        }
        if (now >= nextSample) {
          s.limits.add(new long[] {now - start, gate.limit()});
          nextSample += SAMPLE_NANOS;
        }
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(1));
      }
    }
    current.set(PHASES.size());
    server.shutdown();
    server.awaitTermination(1, TimeUnit.MINUTES);
    if (dependency != null) {
      dependency.close();
    }
    return Arrays.copyOf(stats, PHASES.size());
  }

  static double[] secondHalf(List<long[]> limits, long length) {
    return limits.stream().filter(l -> l[0] >= length / 2).mapToDouble(l -> l[1]).toArray();
  }

  static double median(double[] v) {
    if (v.length == 0) {
      return Double.NaN;
    }
    double[] c = v.clone();
    Arrays.sort(c);
    return c[c.length / 2];
  }

  static double stddev(double[] v) {
    double mean = Arrays.stream(v).average().orElse(Double.NaN);
    return Math.sqrt(Arrays.stream(v).map(x -> (x - mean) * (x - mean)).average().orElse(0));
  }

  /**
   * Milliseconds until the limit stays within 10% (at least 1) of {@code target}; infinite if it
   * never does.
   */
  static double converged(List<long[]> limits, double target) {
    double band = Math.max(1, target * 0.1);
    long at = 0;
    for (long[] l : limits) {
      if (Math.abs(l[1] - target) > band) {
        at = -1;
      } else if (at < 0) {
        at = l[0];
      }
    }
    return at < 0 ? Double.POSITIVE_INFINITY : at / 1e6;
  }

  static double p99(ConcurrentLinkedQueue<Long> samples) {
    long[] v = samples.stream().mapToLong(Long::longValue).sorted().toArray();
    if (v.length == 0) {
      return Double.NaN;
    }
    long x = v[(int) Math.min(v.length - 1, Math.ceil(v.length * 0.99) - 1)];
    return x == Long.MAX_VALUE ? Double.POSITIVE_INFINITY : x;
  }

  /** The limit over time, one step line per variant, phases side by side (LineChart). */
  static String svg(String csv) {
    long[] phaseStart = new long[PHASES.size()];
    long total = 0;
    for (int i = 0; i < PHASES.size(); i++) {
      phaseStart[i] = total;
      total += PHASES.get(i).length().toMillis();
    }
    Map<String, List<double[]>> byVariant = new LinkedHashMap<>();
    for (String row : csv.split("\n")) {
      String[] f = row.split(",");
      if (f[0].equals("variant")) {
        continue;
      }
      int pi = 0;
      for (int i = 0; i < PHASES.size(); i++) {
        if (PHASES.get(i).name().equals(f[1])) {
          pi = i;
        }
      }
      double seconds = (phaseStart[pi] + Long.parseLong(f[2])) / 1000.0;
      List<double[]> points = byVariant.computeIfAbsent(f[0], v -> new ArrayList<>());
      double[] point = {seconds, Integer.parseInt(f[3])};
      // A step chart needs a point where the limit moves; the last one stands for the rest.
      if (points.size() >= 2
          && points.get(points.size() - 1)[1] == point[1]
          && points.get(points.size() - 2)[1] == point[1]) {
        points.set(points.size() - 1, point);
      } else {
        points.add(point);
      }
    }
    LineChart chart = new LineChart("limit over time", "s", total / 1000.0, 22);
    for (int i = 0; i < PHASES.size(); i++) {
      chart.marker(phaseStart[i] / 1000.0, PHASES.get(i).name());
    }
    byVariant.forEach(
        (variant, points) ->
            chart.series(
                variant,
                points.stream().mapToDouble(p -> p[0]).toArray(),
                points.stream().mapToDouble(p -> p[1]).toArray()));
    return chart.svg();
  }

  private AdaptiveSideBySide() {}
}
