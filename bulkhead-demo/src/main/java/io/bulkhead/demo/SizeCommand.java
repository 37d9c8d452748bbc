package io.bulkhead.demo;

import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

/** {@code size --rate 40/s --latency 50ms --headroom 3}: Little's law; the logic is bulkhead-config's. */
@Command(
    name = "size",
    mixinStandardHelpOptions = true,
    header = "Little's law: the need of a compartment and the limit to give it.",
    description = "Prints the need (rate x latency: the calls in flight on average) and the limit "
        + "(need x headroom, rounded up). Without --headroom, the limit for a critical path (x3) and "
        + "an optional one (x4/3). With --limit, what that limit does at this rate.")
final class SizeCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Option(names = "--rate", required = true, paramLabel = "RATE",
      description = "Arrivals, e.g. 40/s, 2400/min or 3/h.")
  String rate;

  @Option(names = "--latency", required = true, paramLabel = "DURATION",
      description = "How long one call holds its slot, e.g. 50ms, 1.5s or 30s.")
  String latency;

  @Option(names = "--headroom", paramLabel = "FACTOR",
      description = "The factor above the need, e.g. 3, 1.5 or 4/3 (a third above).")
  String headroom;

  @Option(names = "--limit", paramLabel = "N",
      description = "An existing limit to compare with the need (a what-if).")
  String limit;

  @Override
  public Integer call() {
    String report;
    try {
      report = io.bulkhead.config.SizeCommand.report(rate, latency, headroom, limit);
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), e.getMessage()); // one line, exit 2
    }
    spec.commandLine().getOut().print(report);
    spec.commandLine().getOut().flush();
    return 0;
  }
}
