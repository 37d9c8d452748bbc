package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import io.bulkhead.scenarios.WarmUp;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code load}: the slow-upstream experiment's load against a running app. */
@Command(
    name = "load",
    mixinStandardHelpOptions = true,
    header = "The slow-upstream experiment's load against a running app.",
    description =
        "Fires --chats requests to /chat at once and, --logins-after later, --logins requests "
            + "to /login at once; reports login latency, chat outcomes, how fast the 503s came, "
            + "wall time.")
final class LoadCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private LoadShapeOptions shape;

  @Option(
      names = "--target",
      defaultValue = "http://127.0.0.1:3000",
      paramLabel = "URL",
      description = "The app, a loopback URL. Default: ${DEFAULT-VALUE}.")
  URI target;

  @Option(
      names = "--timeout",
      defaultValue = "5m",
      paramLabel = "DURATION",
      description =
          "How long one request may take before it counts as 'other'."
              + " Default: ${DEFAULT-VALUE}.")
  Duration timeout;

  @Option(names = "--json", description = "Print the result as JSON instead of text.")
  boolean json;

  @Option(
      names = "--warm-up",
      defaultValue = "0",
      paramLabel = "ROUNDS",
      description =
          "Before the measured burst, warm this load generator itself: ROUNDS bursts of the"
              + " experiment's default shape to a throwaway copy of the app inside this process,"
              + " then the JIT compiler's"
              + " settling (the app's own --warm-up), so that the burst measures the app rather"
              + " than the client's first run. Nothing reaches --target before the burst. What it"
              + " cost goes to stderr. 0 (none) to "
              + WarmUpOptions.MAX_ROUNDS
              + ". Default: ${DEFAULT-VALUE}.")
  int warmUp;

  @Override
  public Integer call() {
    LoadGenerator load =
        Main.checked(
            spec,
            () -> {
              if (timeout.isNegative() || timeout.isZero()) {
                throw new CliException(
                    "--timeout must be above zero but was " + Durations.format(timeout));
              }
              if (warmUp < 0 || warmUp > WarmUpOptions.MAX_ROUNDS) {
                throw new CliException(
                    "--warm-up must be between 0 and "
                        + WarmUpOptions.MAX_ROUNDS
                        + " but was "
                        + warmUp);
              }
              return new LoadGenerator(
                  target, shape.chats, shape.logins, shape.loginsAfter, timeout);
            });
    if (warmUp > 0) {
      // The throwaway app's upstream is the warm-up's own; the address given here is replaced.
      AppSettings settings = AppSettings.defaults(Mode.BULKHEAD, target);
      WarmUp.Done done = WarmUp.run(settings, warmUp);
      System.gc(); // the bursts' garbage, collected now rather than during the measured burst
      PrintWriter err = spec.commandLine().getErr();
      err.println("load generator " + WarmUpOptions.line(done, settings));
      err.flush();
    }
    LoadResult result = load.run();
    PrintWriter out = spec.commandLine().getOut();
    if (json) {
      JsonWriter doc = JsonWriter.pretty();
      Report.mode(doc, result);
      out.println(doc.toJson());
    } else {
      out.println(
          "load against "
              + target
              + ": "
              + shape.chats
              + " /chat at once, "
              + shape.logins
              + " /login "
              + Durations.format(shape.loginsAfter)
              + " later");
      out.println(
          "login p50 / p99 / max   "
              + Report.ms(result.login().p50Ms())
              + " / "
              + Report.ms(result.login().p99Ms())
              + " / "
              + Report.ms(result.login().maxMs()));
      out.println(
          "chat 200 / 503 / other  "
              + result.chatOk()
              + " / "
              + result.chatRejected()
              + " / "
              + result.chatOther());
      out.println(
          "503 p50 / p99           "
              + Report.ms(result.rejected().p50Ms())
              + " / "
              + Report.ms(result.rejected().p99Ms()));
      out.println("wall time               " + Report.ms(result.wallMs()));
    }
    out.flush();
    return 0;
  }
}
