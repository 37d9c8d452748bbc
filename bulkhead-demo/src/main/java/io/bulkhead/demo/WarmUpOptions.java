package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.WarmUp;
import java.io.PrintWriter;
import java.util.List;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;

/**
 * The readiness warm-up, as options shared by {@code app} and {@code demo}: on by default, so that
 * an app's first real burst meets loaded classes and compiled code; {@code --no-warm-up} or {@code
 * --warm-up 0} turns it off.
 */
final class WarmUpOptions {

  /** More bursts teach the JIT nothing new; a mistyped large count would only delay the start. */
  static final int MAX_ROUNDS = 20;

  @Option(
      names = "--warm-up",
      defaultValue = "3",
      paramLabel = "ROUNDS",
      description =
          "Before listening, serve ROUNDS bursts of the slow-upstream experiment to a"
              + " throwaway copy of the app (same mode and compartments, an in-process upstream), then"
              + " wait for the JIT compiler to settle: a readiness warm-up, so that the first real burst"
              + " meets loaded classes and compiled code. Bounded: the bursts get 10 s (a request"
              + " unanswered by then is given up), the compiler at most 5 s more. The app's own compartments and meters start"
              + " from zero. 0 (none) to 20. Default: ${DEFAULT-VALUE}.")
  int rounds;

  @Option(names = "--no-warm-up", description = "Listen at once, cold: the same as --warm-up 0.")
  boolean off;

  /**
   * The rounds asked for, 0 if none.
   *
   * @throws ParameterException if {@code --warm-up} is out of range
   */
  int rounds(CommandSpec spec) {
    if (rounds < 0 || rounds > MAX_ROUNDS) {
      throw new ParameterException(
          spec.commandLine(),
          "--warm-up must be between 0 and " + MAX_ROUNDS + " but was " + rounds);
    }
    return off ? 0 : rounds;
  }

  /**
   * Warms up a throwaway copy of an app of each of {@code apps}, in order, and prints one line of
   * what it cost on {@code out}; nothing when the warm-up is off. The bursts' garbage is the
   * caller's to collect before it listens.
   */
  void run(CommandSpec spec, List<AppSettings> apps, PrintWriter out) {
    int n = rounds(spec);
    if (n == 0) {
      return;
    }
    for (AppSettings settings : apps) {
      out.println(line(WarmUp.run(settings, n), settings));
      out.flush();
    }
  }

  /** What a warm-up of a copy of an app with {@code settings} did, in one line. */
  static String line(WarmUp.Done done, AppSettings settings) {
    return "warmed up: "
        + done.rounds()
        + " bursts ("
        + done.requests()
        + " requests) to a throwaway copy of the app in "
        + settings.mode().label()
        + " mode in "
        + Durations.format(done.took())
        + " (compiler settled: "
        + (done.settled() ? "yes" : "no, gave up waiting")
        + ")";
  }
}
