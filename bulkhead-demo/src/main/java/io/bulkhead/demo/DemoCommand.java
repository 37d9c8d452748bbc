package io.bulkhead.demo;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.LimitController;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.ExperimentResult;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import java.io.Console;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.atomic.AtomicReference;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code demo}: the whole experiment in one process, both modes, side by side. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    subcommands = {DbCommand.class, ProcessesCommand.class, FleetCommand.class},
    header = "Runs the whole experiment, both modes, and reports them side by side.",
    description =
        "Runs the slow-upstream experiment in this process: upstream and app on loopback, the load "
            + "against shared mode then bulkhead mode; prints a side-by-side table and writes an "
            + "HTML report and a JSON result. The defaults are its original figures (a 30 s upstream, "
            + "about 90 s).")
final class DemoCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private LoadShapeOptions load;

  @Mixin private CompartmentOptions compartments;

  @Mixin private WarmUpOptions warmUp;

  @Option(
      names = "--delay",
      defaultValue = "30s",
      paramLabel = "DURATION",
      description = "How long the upstream takes to answer. Default: ${DEFAULT-VALUE}.")
  Duration delay;

  @Option(
      names = "--upstream-deadline",
      paramLabel = "DURATION",
      description =
          "How long one upstream call may take. Default: 60s, or twice --delay if longer.")
  Duration upstreamDeadline;

  @Option(
      names = "--dashboard",
      description =
          "Watch it live: both apps listen on --port, one after the other, so the page at"
              + " /dashboard follows the whole run; afterwards the bulkhead-mode app stays up (with its"
              + " upstream) until Ctrl-C, for a look at its numbers or another 'load'.")
  boolean dashboard;

  @Option(
      names = "--port",
      defaultValue = "3000",
      paramLabel = "PORT",
      description =
          "With --dashboard: the loopback port the apps listen on (0: any free port)."
              + " Default: ${DEFAULT-VALUE}.")
  int port;

  @Option(
      names = "--adaptive",
      arity = "0..1",
      fallbackValue = "gradient",
      paramLabel = "CONTROLLER",
      description =
          "Bulkhead mode's llm compartment adapts its limit to the upstream's latency, from"
              + " --llm-limit within [1, 2 × --llm-limit]: gradient (the default) or aimd. The"
              + " report charts the limit over the run.")
  String adaptive;

  @Option(
      names = "--adaptive-interval",
      defaultValue = "1s",
      paramLabel = "DURATION",
      description =
          "With --adaptive: how long the compartment measures between two decisions."
              + " Default: ${DEFAULT-VALUE}.")
  Duration adaptiveInterval;

  @Option(
      names = "--json",
      description = "Print the JSON result on standard output instead of the table.")
  boolean json;

  @Option(
      names = "--report",
      defaultValue = "bulkhead-demo-report.html",
      paramLabel = "FILE",
      description = "Where to write the HTML report. Default: ${DEFAULT-VALUE}.")
  Path report;

  @Option(
      names = "--result",
      defaultValue = "bulkhead-demo-result.json",
      paramLabel = "FILE",
      description = "Where to write the JSON result. Default: ${DEFAULT-VALUE}.")
  Path result;

  @Override
  public Integer call() {
    DemoSettings settings =
        Main.checked(
            spec,
            () ->
                new DemoSettings(
                    delay,
                    load.chats,
                    load.logins,
                    load.loginsAfter,
                    compartments.serverLimit,
                    compartments.llmLimit,
                    compartments.llmQueue,
                    compartments.llmWait,
                    upstreamDeadline != null
                        ? upstreamDeadline
                        : DemoSettings.defaultDeadline(delay)));
    if (adaptive == null
        && spec.commandLine().getParseResult().hasMatchedOption("--adaptive-interval")) {
      throw new picocli.CommandLine.ParameterException(
          spec.commandLine(), "--adaptive-interval needs --adaptive: the llm limit is static");
    }
    AdaptiveLimit llmAdaptive =
        adaptive == null ? null : Main.checked(spec, () -> adaptive(settings.llmLimit()));
    if (dashboard) {
      Main.checkPort(spec, port);
    }
    warmUp.rounds(spec); // a bad count fails before anything starts
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    err.println(Report.setup(settings));
    // Both modes' apps warm up before the first listens, so neither meets its burst cold; the
    // upstream address is a placeholder, the warm-up brings its own.
    URI placeholder = URI.create("http://127.0.0.1:1");
    warmUp.run(
        spec,
        List.of(settings.app(Mode.SHARED, placeholder), settings.app(Mode.BULKHEAD, placeholder)),
        err);
    System.gc(); // the bursts' garbage, collected now rather than during the first mode's load
    if (dashboard && port != 0) {
      err.println(
          "dashboard: http://127.0.0.1:"
              + port
              + "/dashboard (open it now: it follows both"
              + " runs)");
    }
    err.flush();

    Experiment experiment = new Experiment(settings, llmAdaptive);
    Experiment.Progress progress = new ProgressLine(err, interactive());
    AtomicReference<Experiment.Kept> kept = new AtomicReference<>();
    ExperimentResult r =
        dashboard
            ? experiment.run(announcing(progress, err), port, kept::set)
            : experiment.run(progress);

    write(report, Report.html(r), "--report");
    write(result, Report.json(r), "--result");
    if (json) {
      out.print(Report.json(r));
      err.println("wrote " + report + " and " + result);
      err.flush();
    } else {
      out.println();
      out.print(Report.table(r));
      out.println("wrote " + report + " and " + result);
    }
    out.flush();
    if (kept.get() != null) {
      keepUp(kept.get(), out);
    }
    return 0;
  }

  /** The llm compartment's adaptive limit that --adaptive and --adaptive-interval ask for. */
  private AdaptiveLimit adaptive(int llmLimit) {
    LimitController controller =
        LimitController.named(adaptive)
            .orElseThrow(
                () ->
                    new CliException(
                        "--adaptive must be gradient or aimd but was '" + adaptive + "'"));
    try {
      return new AdaptiveLimit(
          controller, 1, (int) Math.min(Integer.MAX_VALUE, 2L * llmLimit), adaptiveInterval);
    } catch (IllegalArgumentException refused) {
      throw new CliException("--adaptive-interval: " + refused.getMessage());
    }
  }

  /** Says where each mode's app listens before its load starts. */
  private static Experiment.Progress announcing(Experiment.Progress inner, PrintWriter err) {
    return new Experiment.Progress() {
      @Override
      public void started(Mode mode, URI app) {
        err.println(mode.label() + " mode: app at " + app + ", dashboard at " + app + "/dashboard");
        err.flush();
        inner.started(mode, app);
      }

      @Override
      public void tick(Mode mode, long elapsedNanos, LoadGenerator load) {
        inner.tick(mode, elapsedNanos, load);
      }

      @Override
      public void done(Mode mode, LoadResult result) {
        inner.done(mode, result);
      }
    };
  }

  /** Keeps the bulkhead-mode app and its upstream running until Ctrl-C. */
  private static void keepUp(Experiment.Kept kept, PrintWriter out) {
    URI app = kept.app().uri();
    Thread hook = new Thread(kept::close, "demo-dashboard-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    out.println(
        "the bulkhead-mode app stays up at "
            + app
            + ": dashboard "
            + app
            + "/dashboard,"
            + " JSON "
            + app
            + "/bulkheads, Prometheus "
            + app
            + "/metrics; more load with 'load --target "
            + app
            + "'; Ctrl-C stops it");
    out.flush();
    boolean interrupted = false;
    try {
      kept.app().server().join();
    } catch (InterruptedException e) {
      interrupted = true; // restored after the stop: Jetty's stop would be cut short by it
    } finally {
      UpstreamCommand.removeHook(hook);
      kept.close();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }

  /**
   * Whether a person watches: then the progress line is rewritten in place. Java 22 and later
   * return a console even when the output is redirected and say whether it is a terminal with
   * {@code Console.isTerminal()}; Java 17 returns none.
   */
  private static boolean interactive() {
    Console console = System.console();
    if (console == null) {
      return false;
    }
    try {
      return (Boolean) Console.class.getMethod("isTerminal").invoke(console);
    } catch (ReflectiveOperationException beforeJava22) {
      return true;
    }
  }

  private static void write(Path file, String content, String option) {
    try {
      Path parent = file.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException("cannot write " + file + " (" + option + "): " + e.getMessage());
    }
  }
}
