package io.bulkhead.demo;

import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.Mode;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import picocli.CommandLine.Command;
import picocli.CommandLine;

/**
 * {@code java -jar bulkhead-demo.jar <command>}: the slow-upstream experiment, the checkout-vs-reports
 * outage on a database ({@code demo db}), shared-vs-split slots ({@code partition}) and the sizing
 * commands ({@code check FILE}, {@code size}).
 *
 * <p>Exit codes: 0 done, 1 failed (a port in use, an upstream that does not answer), 2 bad usage. A
 * failure is one line on standard error, never a stack trace.
 */
@Command(
    name = "bulkhead-demo",
    mixinStandardHelpOptions = true,
    versionProvider = Main.Version.class,
    subcommands = {
      DemoCommand.class,
      UpstreamCommand.class,
      AppCommand.class,
      LoadCommand.class,
      PartitionCommand.class,
      CheckCommand.class,
      SizeCommand.class
    },
    description = "One slow dependency should not starve everything else: the slow-upstream "
        + "experiment, end to end.%nStart with 'demo' (no arguments needed).")
public final class Main implements Runnable {

  static final int FAILED = 1;
  static final int USAGE = 2;

  @CommandLine.Spec
  private CommandLine.Model.CommandSpec spec;

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command line with the given streams; returns the exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    CommandLine cli = new CommandLine(new Main());
    cli.setOut(new PrintWriter(out, true, StandardCharsets.UTF_8));
    cli.setErr(new PrintWriter(err, true, StandardCharsets.UTF_8));
    cli.registerConverter(Duration.class, new DurationConverter());
    cli.registerConverter(URI.class, new LoopbackUrl());
    cli.registerConverter(Mode.class, new ModeConverter());
    cli.setParameterExceptionHandler((ex, ignoredArgs) -> {
      String command = ex.getCommandLine().getCommandSpec().qualifiedName();
      err.println(command + ": " + oneLine(ex.getMessage()) + " (see " + command + " --help)");
      err.flush();
      return USAGE;
    });
    cli.setExecutionExceptionHandler((ex, command, parseResult) -> {
      String name = command.getCommandSpec().qualifiedName();
      if (ex instanceof CliException) {
        err.println(name + ": " + oneLine(ex.getMessage()));
      } else {
        err.println(name + ": unexpected failure: " + oneLine(String.valueOf(ex)));
      }
      err.flush();
      return FAILED;
    });
    return cli.execute(args);
  }

  /**
   * Builds settings from options; a value out of range is a usage error (exit 2) like a malformed
   * one, not a failure of the run.
   */
  static <T> T checked(CommandLine.Model.CommandSpec spec, java.util.function.Supplier<T> settings) {
    try {
      return settings.get();
    } catch (CliException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  static void checkPort(CommandLine.Model.CommandSpec spec, int port) {
    if (port < 0 || port > 65_535) {
      throw new CommandLine.ParameterException(spec.commandLine(),
          "--port must be a TCP port from 0 (any free port) to 65535 but was " + port);
    }
  }

  private static String oneLine(String message) {
    return message == null ? "" : message.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  @Override
  public void run() {
    // No command: show what there is to run.
    spec.commandLine().usage(spec.commandLine().getErr());
    throw new CommandLine.ParameterException(spec.commandLine(),
        "a command is required: demo, upstream, app, load, partition, check or size");
  }

  /** The version from the jar's manifest, or "dev" when run from classes. */
  static final class Version implements CommandLine.IVersionProvider {
    @Override
    public String[] getVersion() {
      String v = Main.class.getPackage().getImplementationVersion();
      return new String[] {"bulkhead-demo " + (v == null ? "dev" : v)};
    }
  }
}
