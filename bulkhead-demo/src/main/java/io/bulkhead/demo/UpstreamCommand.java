package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.scenarios.FakeUpstream;
import java.io.PrintWriter;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code upstream}: the fake slow provider, until Ctrl-C. */
@Command(
    name = "upstream",
    mixinStandardHelpOptions = true,
    header = "The fake slow provider.",
    description = "The slow provider: answers every request after --delay. Runs until Ctrl-C.")
final class UpstreamCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(
      names = "--port",
      defaultValue = "4001",
      paramLabel = "PORT",
      description = "Loopback port to listen on (0: any free port). Default: ${DEFAULT-VALUE}.")
  int port;

  @Option(
      names = "--delay",
      defaultValue = "30s",
      paramLabel = "DURATION",
      description = "How long every answer takes, e.g. 30s or 500ms. Default: ${DEFAULT-VALUE}.")
  Duration delay;

  @Override
  public Integer call() {
    Main.checkPort(spec, port);
    if (delay.isNegative()) {
      throw new ParameterException(
          spec.commandLine(), "--delay must not be negative but was " + Durations.format(delay));
    }
    PrintWriter out = spec.commandLine().getOut();
    boolean interrupted = false;
    try (FakeUpstream upstream = FakeUpstream.start(port, delay)) {
      Thread hook = new Thread(upstream::close, "upstream-shutdown");
      Runtime.getRuntime().addShutdownHook(hook);
      out.println(
          "upstream listening on "
              + upstream.uri()
              + ", answering every request after "
              + Durations.format(delay)
              + "; Ctrl-C stops it");
      out.flush();
      try {
        upstream.join();
      } catch (InterruptedException e) {
        interrupted = true; // restored after the stop: Jetty's stop would be cut short by it
      } finally {
        removeHook(hook);
      }
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
    return 0;
  }

  static void removeHook(Thread hook) {
    try {
      Runtime.getRuntime().removeShutdownHook(hook);
    } catch (IllegalStateException shuttingDown) {
      // the hook is running: nothing to remove
    }
  }
}
