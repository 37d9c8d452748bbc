package io.bulkhead.scenarios;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Bulkhead;
import io.bulkhead.internal.DaemonThreads;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.Consumer;

/**
 * Runs the slow-upstream experiment in this process: for each mode, a fresh upstream and a fresh
 * app on loopback ports chosen by the system, the load against the app, then both stopped. Nothing
 * it starts outlives {@link #run(Progress)}.
 *
 * <p>For someone watching the app's {@code /dashboard}, {@link #run(Progress, int, Consumer)} puts
 * both apps on one port (one address to keep open in the browser) and hands the bulkhead-mode app
 * and its upstream over, still running, instead of stopping them.
 */
public final class Experiment {

  /** Hears how a run is going; called from a timer thread every quarter second, then at the end. */
  public interface Progress {
    default void tick(Mode mode, long elapsedNanos, LoadGenerator load) {}

    default void done(Mode mode, LoadResult result) {}

    /** The app of {@code mode} listens at {@code app}; its load starts now. */
    default void started(Mode mode, URI app) {}
  }

  /**
   * The bulkhead-mode app and its upstream, left running by {@link #run(Progress, int, Consumer)}.
   */
  public record Kept(DemoApp app, FakeUpstream upstream) implements AutoCloseable {
    @Override
    public void close() {
      app.close();
      upstream.close();
    }
  }

  /** How often the adaptive llm limit is read during the bulkhead-mode run. */
  static final long LIMIT_READ_EVERY_MILLIS = 20;

  private final DemoSettings settings;
  private final AdaptiveLimit llmAdaptive;

  public Experiment(DemoSettings settings) {
    this(settings, null);
  }

  /**
   * The experiment with an adaptive llm compartment in bulkhead mode ({@code llmAdaptive} null: a
   * static one); its limit starts at the settings' llm limit, and the bulkhead mode's result traces
   * it.
   */
  public Experiment(DemoSettings settings, AdaptiveLimit llmAdaptive) {
    this.settings = settings;
    this.llmAdaptive = llmAdaptive;
  }

  /** Runs shared mode, then bulkhead mode. */
  public ExperimentResult run(Progress progress) {
    return run(progress, 0, null);
  }

  /**
   * Runs shared mode, then bulkhead mode, each app listening on {@code appPort} (0: any free port),
   * and gives the bulkhead-mode app and its upstream to {@code keep} still running (the receiver
   * closes them). With a null {@code keep} nothing outlives the run.
   *
   * @throws CliException if {@code appPort} is in use
   */
  public ExperimentResult run(Progress progress, int appPort, Consumer<Kept> keep) {
    double loadBefore = loadAverage();
    Instant started = Instant.now();
    List<Integer> ports = new ArrayList<>();
    ModeResult shared = runMode(Mode.SHARED, progress, ports, appPort, null);
    ModeResult bulkhead = runMode(Mode.BULKHEAD, progress, ports, appPort, keep);
    return new ExperimentResult(
        settings,
        shared,
        bulkhead,
        started,
        loadBefore,
        loadAverage(),
        Runtime.getRuntime().availableProcessors(),
        System.getProperty("java.version"),
        ports);
  }

  private ModeResult runMode(
      Mode mode, Progress progress, List<Integer> ports, int appPort, Consumer<Kept> keep) {
    FakeUpstream upstream = FakeUpstream.start(0, settings.delay());
    DemoApp app = null;
    boolean handedOver = false;
    try {
      AppSettings appSettings = settings.app(mode, upstream.uri());
      Bulkhead adaptive =
          mode == Mode.BULKHEAD && llmAdaptive != null
              ? appSettings.llm().adaptive(llmAdaptive).build()
              : null;
      app = adaptive != null ? new DemoApp(appSettings, adaptive) : new DemoApp(appSettings);
      ports.add(upstream.port());
      ports.add(app.start(appPort));
      progress.started(mode, app.uri());
      LoadGenerator load =
          new LoadGenerator(
              app.uri(),
              settings.chats(),
              settings.logins(),
              settings.loginsAfter(),
              settings.loadTimeout());
      ScheduledExecutorService ticker =
          new ScheduledThreadPoolExecutor(1, DaemonThreads.numbered("demo-progress-"));
      long start = System.nanoTime();
      ticker.scheduleAtFixedRate(
          () -> progress.tick(mode, System.nanoTime() - start, load),
          0,
          250,
          TimeUnit.MILLISECONDS);
      List<ModeResult.Point> points = new CopyOnWriteArrayList<>();
      if (adaptive != null) {
        points.add(new ModeResult.Point(0, adaptive.config().limit()));
        ticker.scheduleAtFixedRate(
            () -> {
              int limit = adaptive.config().limit();
              if (limit != points.get(points.size() - 1).limit()) {
                points.add(new ModeResult.Point(millisSince(start), limit));
              }
            },
            LIMIT_READ_EVERY_MILLIS,
            LIMIT_READ_EVERY_MILLIS,
            TimeUnit.MILLISECONDS);
      }
      LoadResult result;
      try {
        result = load.run();
      } finally {
        ticker.shutdownNow();
        awaitQuietly(ticker);
      }
      progress.done(mode, result);
      ModeResult.LimitTrace trace = null;
      if (adaptive != null) {
        points.add(new ModeResult.Point(millisSince(start), adaptive.config().limit()));
        AdaptiveLimit.Status status = adaptive.adaptive().orElseThrow();
        trace =
            new ModeResult.LimitTrace(
                status.controller(),
                status.min(),
                status.max(),
                status.changes(),
                status.lastReason(),
                points);
      }
      ModeResult outcome =
          new ModeResult(mode, result, upstream.maxOpenConnections(), upstream.requests(), trace);
      if (keep != null) {
        keep.accept(new Kept(app, upstream));
        handedOver = true;
      }
      return outcome;
    } finally {
      if (!handedOver) {
        if (app != null) {
          app.close();
        }
        upstream.close();
      }
    }
  }

  private static long millisSince(long start) {
    return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - start);
  }

  private static void awaitQuietly(ScheduledExecutorService ticker) {
    try {
      ticker.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** The system's load average over the last minute; negative where the system does not tell. */
  public static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }

  /**
   * The machine a run had, as every report prints it: "2 processors, load average 0.31 before and
   * 0.52 after; Java 17.0.13" (a negative load average, unknown, is "n/a").
   */
  public static String machineLine(
      int processors, double loadBefore, double loadAfter, String javaVersion) {
    return processors
        + " processors, load average "
        + loadFigure(loadBefore)
        + " before and "
        + loadFigure(loadAfter)
        + " after; Java "
        + javaVersion;
  }

  private static String loadFigure(double average) {
    return average < 0 ? "n/a" : String.format(java.util.Locale.ROOT, "%.2f", average);
  }
}
