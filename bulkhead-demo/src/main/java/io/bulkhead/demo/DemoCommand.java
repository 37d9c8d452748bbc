package io.bulkhead.demo;

import java.io.Console;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/** {@code demo}: the whole experiment in one process, both modes, side by side. */
@Command(
    name = "demo",
    mixinStandardHelpOptions = true,
    subcommands = DbCommand.class,
    header = "Runs the whole experiment, both modes, and reports them side by side.",
    description = "Runs seed 000's experiment in this process: upstream and app on loopback, the load "
        + "against shared mode then bulkhead mode; prints a side-by-side table and writes an "
        + "HTML report and a JSON result. The defaults reproduce the seed (a 30 s upstream, "
        + "about 90 s).")
final class DemoCommand implements Callable<Integer> {

  @Spec
  private CommandSpec spec;

  @Option(names = "--delay", defaultValue = "30s", paramLabel = "DURATION",
      description = "How long the upstream takes to answer. Default: ${DEFAULT-VALUE}.")
  Duration delay;

  @Option(names = "--chats", defaultValue = "80", paramLabel = "N",
      description = "Requests to /chat, all at once. Default: ${DEFAULT-VALUE}.")
  int chats;

  @Option(names = "--logins", defaultValue = "50", paramLabel = "N",
      description = "Requests to /login, all at once. Default: ${DEFAULT-VALUE}.")
  int logins;

  @Option(names = "--logins-after", defaultValue = "1s", paramLabel = "DURATION",
      description = "When the logins go, after the chats. Default: ${DEFAULT-VALUE}.")
  Duration loginsAfter;

  @Option(names = "--server-limit", defaultValue = "50", paramLabel = "N",
      description = "Server-wide cap over all routes. Default: ${DEFAULT-VALUE}.")
  int serverLimit;

  @Option(names = "--llm-limit", defaultValue = "10", paramLabel = "N",
      description = "Bulkhead mode: upstream calls in flight, and the client's connection cap."
          + " Default: ${DEFAULT-VALUE}.")
  int llmLimit;

  @Option(names = "--llm-queue", defaultValue = "20", paramLabel = "N",
      description = "Bulkhead mode: upstream calls that may wait. Default: ${DEFAULT-VALUE}.")
  int llmQueue;

  @Option(names = "--llm-wait", defaultValue = "1s", paramLabel = "DURATION",
      description = "Bulkhead mode: how long one call may wait. Default: ${DEFAULT-VALUE}.")
  Duration llmWait;

  @Option(names = "--upstream-deadline", paramLabel = "DURATION",
      description = "How long one upstream call may take. Default: 60s, or twice --delay if longer.")
  Duration upstreamDeadline;

  @Option(names = "--json",
      description = "Print the JSON result on standard output instead of the table.")
  boolean json;

  @Option(names = "--report", defaultValue = "bulkhead-demo-report.html", paramLabel = "FILE",
      description = "Where to write the HTML report. Default: ${DEFAULT-VALUE}.")
  Path report;

  @Option(names = "--result", defaultValue = "bulkhead-demo-result.json", paramLabel = "FILE",
      description = "Where to write the JSON result. Default: ${DEFAULT-VALUE}.")
  Path result;

  @Override
  public Integer call() {
    DemoSettings settings = Main.checked(spec, () -> new DemoSettings(delay, chats, logins,
        loginsAfter, serverLimit, llmLimit, llmQueue, llmWait,
        upstreamDeadline != null ? upstreamDeadline : DemoSettings.defaultDeadline(delay)));
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    err.println(Report.setup(settings));
    err.flush();

    ExperimentResult r = new Experiment(settings)
        .run(new ProgressLine(err, interactive()));

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
    return 0;
  }

  /**
   * Whether a person watches: then the progress line is rewritten in place. Java 22 and later return
   * a console even when the output is redirected and say whether it is a terminal with
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
