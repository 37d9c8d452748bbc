package io.bulkhead.scenarios;

import java.lang.management.CompilationMXBean;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.concurrent.locks.LockSupport;

/**
 * A readiness warm-up for the app, run before it listens: the first burst a fresh JVM serves pays
 * for loading a few hundred classes (Jetty's request path, the JDK's HTTP client, the compartments'
 * rejection and timeout paths) and for compiling about a thousand methods, and the logins of that
 * burst wait for the cores this takes. A deployment that gates traffic on readiness can pay that
 * before it says it is ready; this does it the way {@code FleetRun} warms its load, with the
 * experiment's own traffic, so that the code the burst runs is the code that got loaded and
 * compiled.
 *
 * <p>How: a second {@link DemoApp} of the same mode and compartment figures, on a free port,
 * against an in-process {@link FakeUpstream} that answers after {@link #UPSTREAM_DELAY}, gets
 * {@code rounds} bursts of the experiment's shape from a {@link LoadGenerator}, then is closed with
 * its upstream. Its llm wait is shorter than the upstream's delay so that the queued calls time out
 * as they do in the experiment: admission, the queue, the full and the timed-out rejection, the
 * upstream call and its answer all run. Nothing of the real app is touched: its compartments,
 * meters and sampler are its own and start from zero; only what the JVM keeps (loaded classes,
 * compiled code) is shared. Then it waits until the JIT compiler has had nothing to do for {@link
 * #QUIET}, at most {@link #LONGEST_SETTLE}, so that the compiles the bursts queued do not run
 * during the first real one. The bursts' garbage stays for the caller to collect just before it
 * listens, with its own start-up garbage (the demo's {@code app} command does), rather than during
 * the first real burst.
 *
 * <p>Not thread-safe and not meant to be: one call, on the thread starting the app, before it
 * listens.
 */
public final class WarmUp {

  /** How long the warm-up's own upstream takes to answer: longer than its llm wait. */
  static final Duration UPSTREAM_DELAY = Duration.ofMillis(150);

  /** The warm-up app's llm wait: short, so that its queued calls time out like the experiment's. */
  static final Duration LLM_WAIT = Duration.ofMillis(50);

  /** When its logins go after its chats. */
  static final Duration LOGINS_AFTER = Duration.ofMillis(80);

  /** How long the JIT compiler must have been idle for the warm-up to end. */
  static final Duration QUIET = Duration.ofMillis(150);

  /** The longest the warm-up waits for the compiler, whatever it still does. */
  static final Duration LONGEST_SETTLE = Duration.ofSeconds(5);

  /**
   * The bursts' time: none starts later, and a request unanswered by then is given up, so a slow
   * machine gets fewer bursts, not a late start.
   */
  static final Duration LONGEST_BURSTS = Duration.ofSeconds(10);

  /** The least a warm-up request may wait for its answer, however little time is left. */
  static final Duration SHORTEST_REQUEST_TIMEOUT = Duration.ofSeconds(1);

  private WarmUp() {}

  /**
   * What a warm-up did.
   *
   * @param rounds the bursts served (fewer than asked if {@link #LONGEST_BURSTS} ran out)
   * @param requests the requests those bursts sent to the throwaway copy
   * @param took from the start to the end of the compiler's settling
   * @param settled whether the compiler went quiet, rather than the wait giving up
   */
  public record Done(int rounds, int requests, Duration took, boolean settled) {}

  /**
   * Runs {@code rounds} bursts of the slow-upstream experiment against a throwaway copy of an app
   * with {@code settings} (none started after {@link #LONGEST_BURSTS}), then waits for the compiler
   * to settle (at most {@link #LONGEST_SETTLE}).
   *
   * @throws IllegalArgumentException if {@code rounds} is below 1
   */
  public static Done run(AppSettings settings, int rounds) {
    if (rounds < 1) {
      throw new IllegalArgumentException("a warm-up needs at least 1 round but was " + rounds);
    }
    long started = System.nanoTime();
    int served = 0;
    int requests = 0;
    try (FakeUpstream upstream = FakeUpstream.start(0, UPSTREAM_DELAY)) {
      AppSettings copy =
          new AppSettings(
              settings.mode(),
              upstream.uri(),
              settings.serverLimit(),
              settings.llmLimit(),
              settings.llmQueue(),
              LLM_WAIT,
              settings.upstreamDeadline());
      try (DemoApp app = new DemoApp(copy)) {
        app.start(0);
        // The first burst always runs: it is the one that loads the classes. A request still
        // unanswered when the bursts' time is up is given up, so a starved machine ends the
        // warm-up on time with less done rather than late.
        long left;
        while (served < rounds
            && ((left = LONGEST_BURSTS.toNanos() - (System.nanoTime() - started)) > 0
                || served == 0)) {
          LoadResult burst =
              new LoadGenerator(
                      app.uri(),
                      LoadGenerator.CHATS,
                      LoadGenerator.LOGINS,
                      LOGINS_AFTER,
                      Duration.ofNanos(Math.max(left, SHORTEST_REQUEST_TIMEOUT.toNanos())))
                  .run();
          served++;
          requests += burst.samples().size();
        }
      }
    }
    boolean settled = settle();
    return new Done(served, requests, Duration.ofNanos(System.nanoTime() - started), settled);
  }

  /**
   * Waits until the compiler's total time has not grown for {@link #QUIET}, at most the longest;
   * whether it went quiet (true also where the JVM does not tell: there is nothing to wait for).
   */
  private static boolean settle() {
    CompilationMXBean jit = ManagementFactory.getCompilationMXBean();
    if (jit == null || !jit.isCompilationTimeMonitoringSupported()) {
      return true;
    }
    long deadline = System.nanoTime() + LONGEST_SETTLE.toNanos();
    long last = jit.getTotalCompilationTime();
    long quietSince = System.nanoTime();
    while (System.nanoTime() - quietSince < QUIET.toNanos() && System.nanoTime() < deadline) {
      // Polling a counter the JVM keeps: there is no event to wait for.
      LockSupport.parkNanos(Duration.ofMillis(20).toNanos());
      long now = jit.getTotalCompilationTime();
      if (now != last) {
        last = now;
        quietSince = System.nanoTime();
      }
    }
    return System.nanoTime() - quietSince >= QUIET.toNanos();
  }
}
