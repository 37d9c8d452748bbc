package io.bulkhead.demo;

import java.lang.management.ManagementFactory;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Runs seed 000's experiment in this process: for each mode, a fresh upstream and a fresh app on
 * loopback ports chosen by the system, the load against the app, then both stopped. Nothing it
 * starts outlives {@link #run}.
 */
public final class Experiment {

  /** Hears how a run is going; called from a timer thread every quarter second, then at the end. */
  public interface Progress {
    default void tick(Mode mode, long elapsedNanos, LoadGenerator load) {}

    default void done(Mode mode, LoadResult result) {}
  }

  private final DemoSettings settings;

  public Experiment(DemoSettings settings) {
    this.settings = settings;
  }

  /** Runs shared mode, then bulkhead mode. */
  public ExperimentResult run(Progress progress) {
    double loadBefore = loadAverage();
    Instant started = Instant.now();
    List<Integer> ports = new ArrayList<>();
    ModeResult shared = runMode(Mode.SHARED, progress, ports);
    ModeResult bulkhead = runMode(Mode.BULKHEAD, progress, ports);
    return new ExperimentResult(settings, shared, bulkhead, started, loadBefore, loadAverage(),
        Runtime.getRuntime().availableProcessors(), System.getProperty("java.version"), ports);
  }

  private ModeResult runMode(Mode mode, Progress progress, List<Integer> ports) {
    try (FakeUpstream upstream = FakeUpstream.start(0, settings.delay());
        DemoApp app = new DemoApp(settings.app(mode, upstream.uri()))) {
      ports.add(upstream.port());
      ports.add(app.start(0));
      LoadGenerator load = new LoadGenerator(app.uri(), settings.chats(), settings.logins(),
          settings.loginsAfter(), settings.loadTimeout());
      ScheduledExecutorService ticker =
          new ScheduledThreadPoolExecutor(1, Threads.daemon("demo-progress-"));
      long start = System.nanoTime();
      ticker.scheduleAtFixedRate(() -> progress.tick(mode, System.nanoTime() - start, load),
          0, 250, TimeUnit.MILLISECONDS);
      LoadResult result;
      try {
        result = load.run();
      } finally {
        ticker.shutdownNow();
        awaitQuietly(ticker);
      }
      progress.done(mode, result);
      return new ModeResult(mode, result, upstream.maxOpenConnections(), upstream.requests());
    }
  }

  private static void awaitQuietly(ScheduledExecutorService ticker) {
    try {
      ticker.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  static double loadAverage() {
    return ManagementFactory.getOperatingSystemMXBean().getSystemLoadAverage();
  }
}
