package io.bulkhead.demo;

import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.Mode;
import java.io.PrintWriter;
import java.net.URI;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code app}: the app with /login and /chat, until Ctrl-C. */
@Command(
    name = "app",
    mixinStandardHelpOptions = true,
    header = "The app: /login and /chat behind a server-wide cap.",
    description =
        "The app: /login answers at once, /chat calls the upstream. Every route is behind a "
            + "server-wide cap with an unbounded queue; in bulkhead mode /chat also goes through "
            + "the llm compartment and its own capped client. Outside the cap it serves /dashboard "
            + "(live page), /bulkheads (JSON) and /metrics (Prometheus). Runs until Ctrl-C.")
final class AppCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Mixin private CompartmentOptions compartments;

  @Mixin private WarmUpOptions warmUp;

  @Option(
      names = "--port",
      defaultValue = "3000",
      paramLabel = "PORT",
      description = "Loopback port to listen on (0: any free port). Default: ${DEFAULT-VALUE}.")
  int port;

  @Option(
      names = "--mode",
      defaultValue = "shared",
      paramLabel = "shared|bulkhead",
      description =
          "shared: /chat uses a plain client with no cap; bulkhead: /chat goes through"
              + " the llm compartment. Default: ${DEFAULT-VALUE}.")
  Mode mode;

  @Option(
      names = "--upstream",
      defaultValue = "http://127.0.0.1:4001",
      paramLabel = "URL",
      description = "The slow upstream, a loopback URL. Default: ${DEFAULT-VALUE}.")
  URI upstream;

  @Option(
      names = "--upstream-deadline",
      defaultValue = "60s",
      paramLabel = "DURATION",
      description = "How long one upstream call may take. Default: ${DEFAULT-VALUE}.")
  Duration upstreamDeadline;

  @Override
  public Integer call() {
    Main.checkPort(spec, port);
    warmUp.rounds(spec); // a bad count fails before anything starts
    AppSettings settings =
        Main.checked(
            spec,
            () ->
                new AppSettings(
                    mode,
                    upstream,
                    compartments.serverLimit,
                    compartments.llmLimit,
                    compartments.llmQueue,
                    compartments.llmWait,
                    upstreamDeadline));
    // A service starts whatever its dependencies do: /login needs no upstream, and /chat answers a
    // fast 502 until the upstream is back, then works again with no restart.
    String problem = LoadGenerator.unreachable(upstream);
    if (problem != null) {
      PrintWriter err = spec.commandLine().getErr();
      err.println(
          "warning: the upstream at "
              + upstream
              + " does not answer ("
              + problem
              + "); /chat answers 502 until it does (start it with 'upstream', or point --upstream at"
              + " it)");
      err.flush();
    }
    PrintWriter out = spec.commandLine().getOut();
    // Ready when warm: the port opens only after the warm-up, so whatever waits for it (a
    // readiness probe on the port, the experiment's load) meets compiled code.
    warmUp.run(spec, List.of(settings), out);
    boolean interrupted = false;
    try (DemoApp app = new DemoApp(settings)) {
      // Starting leaves tens of megabytes of garbage in eden (class loading, Jetty, the upstream
      // client; a warm-up's bursts add theirs), and the first burst then filled it: a young
      // collection in the middle of the burst (90 ms on a 2-core virtual machine), with logins
      // waiting behind it. Collected here instead, before the port opens.
      System.gc();
      app.start(port);
      Thread hook = new Thread(app::close, "app-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      out.println(
          "app ("
              + mode.label()
              + " mode) listening on "
              + app.uri()
              + ", upstream "
              + upstream
              + "; compartments: "
              + app.describeCompartments()
              + "; Ctrl-C stops it");
      out.println(
          "watch it: dashboard "
              + app.uri()
              + "/dashboard, JSON "
              + app.uri()
              + "/bulkheads, Prometheus "
              + app.uri()
              + "/metrics");
      out.flush();
      try {
        app.server().join();
      } catch (InterruptedException e) {
        interrupted = true; // restored after the stop: Jetty's stop would be cut short by it
      } finally {
        UpstreamCommand.removeHook(hook);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }
}
