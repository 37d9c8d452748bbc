package io.bulkhead.demo;

import java.nio.file.Path;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Parameters;
import picocli.CommandLine.Spec;

/** {@code check FILE}: the sizing of a configuration file; the logic is bulkhead-config's. */
@Command(
    name = "check",
    mixinStandardHelpOptions = true,
    header = "Seed 003's sizing rules: check a file of budgets and compartments before deploying it.",
    description = {
      "Prints every compartment's budget, expected rate, latency, need (rate x latency), headroom, "
          + "limit and share of its budget, and whether each budget holds its compartments.",
      "Exit codes: 0 every budget holds; 1 a budget is over-subscribed; 2 the file cannot be read or "
          + "is not valid (one line naming file, line and key)."
    })
final class CheckCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Parameters(index = "0", paramLabel = "FILE",
      description = "A YAML file of budgets and compartments, e.g. examples/checkout-reports.yml.")
  Path file;

  @Override
  public Integer call() {
    return io.bulkhead.config.CheckCommand.run(file, spec.commandLine().getOut(),
        spec.commandLine().getErr());
  }
}
