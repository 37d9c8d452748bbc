package io.bulkhead.demo;

import io.bulkhead.config.internal.Printable;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.Mode;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Locale;
import picocli.CommandLine;
import picocli.CommandLine.Command;

/**
 * {@code java -jar bulkhead-demo.jar <command>}: the slow-upstream experiment, the
 * checkout-vs-reports outage on a database ({@code demo db}), a runaway report in one process or
 * two ({@code demo processes}), three app processes sharing one compartment on Redis, one killed
 * ({@code demo fleet}), shared-vs-split slots ({@code partition}) and the sizing commands ({@code
 * check FILE}, {@code size}).
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
    description =
        "One slow dependency should not starve everything else: the slow-upstream "
            + "experiment, end to end.%nStart with 'demo' (no arguments needed).")
public final class Main implements Runnable {

  static final int FAILED = 1;
  static final int USAGE = 2;

  /**
   * The longest error line, in characters: a message quotes what the user typed, which may be a
   * hundred thousand digits; the line keeps its start, which names the command and the option.
   */
  static final int LONGEST_LINE = 400;

  @CommandLine.Spec private CommandLine.Model.CommandSpec spec;

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
    cli.setParameterExceptionHandler(
        (ex, ignoredArgs) -> {
          String command = ex.getCommandLine().getCommandSpec().qualifiedName();
          String help = " (see " + command + " --help)";
          err.println(
              oneLine(command + ": " + ex.getMessage(), LONGEST_LINE - help.length()) + help);
          err.flush();
          return USAGE;
        });
    cli.setExecutionExceptionHandler(
        (ex, command, parseResult) -> {
          String name = command.getCommandSpec().qualifiedName();
          if (ex instanceof CliException) {
            err.println(oneLine(name + ": " + ex.getMessage(), LONGEST_LINE));
          } else {
            err.println(oneLine(name + ": unexpected failure: " + ex, LONGEST_LINE));
          }
          err.flush();
          return FAILED;
        });
    try {
      return cli.execute(args);
    } catch (
        Throwable e) { // an Error (out of memory, say) is not an Exception: the handler misses it
      err.println(oneLine("bulkhead-demo: unexpected failure: " + e, LONGEST_LINE));
      err.flush();
      return FAILED;
    }
  }

  /**
   * Builds settings from options; a value out of range is a usage error (exit 2) like a malformed
   * one, not a failure of the run.
   */
  static <T> T checked(
      CommandLine.Model.CommandSpec spec, java.util.function.Supplier<T> settings) {
    try {
      return settings.get();
    } catch (CliException e) {
      throw new CommandLine.ParameterException(spec.commandLine(), e.getMessage());
    }
  }

  static void checkPort(CommandLine.Model.CommandSpec spec, int port) {
    if (port < 0 || port > 65_535) {
      throw new CommandLine.ParameterException(
          spec.commandLine(),
          "--port must be a TCP port from 0 (any free port) to 65535 but was " + port);
    }
  }

  /**
   * {@code message} as one line a terminal shows as it is: line breaks between words become spaces,
   * any other control or invisible character (an escape sequence, a C1 control, a lone surrogate)
   * is shown as <code>&#92;uXXXX</code>, and the line is cut to {@code max} characters with an
   * ellipsis.
   */
  static String oneLine(String message, int max) {
    String joined = message.replaceAll("\\s*\\R\\s*", " ").trim();
    StringBuilder sb = new StringBuilder();
    for (int i = 0; i < joined.length(); ) {
      int c = joined.codePointAt(i);
      String shown =
          Printable.unsafe(c)
              ? String.format(Locale.ROOT, "\\u%04X", c)
              : new String(Character.toChars(c));
      if (sb.length() + shown.length() > max - 1) {
        return sb.append('…').toString();
      }
      sb.append(shown);
      i += Character.charCount(c);
    }
    return sb.toString();
  }

  @Override
  public void run() {
    // No command: show what there is to run.
    spec.commandLine().usage(spec.commandLine().getErr());
    throw new CommandLine.ParameterException(
        spec.commandLine(),
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
