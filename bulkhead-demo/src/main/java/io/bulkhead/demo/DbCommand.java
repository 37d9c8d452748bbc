package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.localdb.LocalPostgres;
import io.bulkhead.scenarios.CheckoutVsReports;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.DbDashboard;
import io.bulkhead.scenarios.Experiment;
import java.io.IOException;
import java.io.PrintWriter;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.sql.SQLException;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code demo db}: the checkout-vs-reports outage on a real PostgreSQL. Checkout and reports share
 * a database; the report query degrades; one shared pool versus split pools, side by side.
 */
@Command(
    name = "db",
    mixinStandardHelpOptions = true,
    header =
        "The checkout-vs-reports outage on a real PostgreSQL: one shared pool versus split pools.",
    description =
        "Checkout (40/s, 50 ms queries) and reports (2/s, 1.5 s queries) run against "
            + "PostgreSQL for --healthy, then the report query takes --degraded for --duration; once "
            + "with one shared pool of 10, once with checkout 6 and reports 4. Prints checkout p50, p99, "
            + "errors and throughput side by side and adds them to the HTML report. Uses the server on "
            + "127.0.0.1:5432 (database test) when one answers, otherwise an embedded PostgreSQL. About "
            + "2 x 50 s with the defaults. With --dashboard, watch the pools live in a browser.")
final class DbCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(
      names = "--degraded",
      defaultValue = "30s",
      paramLabel = "DURATION",
      description = "How long a report query takes once degraded. Default: ${DEFAULT-VALUE}.")
  Duration degraded;

  @Option(
      names = "--duration",
      defaultValue = "40s",
      paramLabel = "DURATION",
      description = "How long the degraded phase lasts. Default: ${DEFAULT-VALUE}.")
  Duration duration;

  @Option(
      names = "--healthy",
      defaultValue = "10s",
      paramLabel = "DURATION",
      description = "How long the healthy phase before it lasts. Default: ${DEFAULT-VALUE}.")
  Duration healthy;

  @Option(
      names = "--jdbc-url",
      paramLabel = "URL",
      description =
          "The PostgreSQL to use, user and password in the URL, e.g. "
              + "jdbc:postgresql://127.0.0.1:5432/test?user=postgres. Default: the server on "
              + "127.0.0.1:5432 (database test) if one answers, otherwise an embedded one.")
  String jdbcUrl;

  @Option(
      names = "--json",
      description = "Print the JSON result on standard output instead of the table.")
  boolean json;

  @Option(
      names = "--dashboard",
      description =
          "Watch it live: serve /dashboard, /bulkheads and /metrics on --port for the"
              + " compartments of each run's pools while it lasts (the shared pool, then checkout and"
              + " reports, each card with its pool's connections); afterwards the server stays up until"
              + " Ctrl-C.")
  boolean dashboard;

  @Option(
      names = "--wait-for-page",
      defaultValue = "0s",
      paramLabel = "DURATION",
      description =
          "With --dashboard: start the runs only once the page has loaded (it asks /bulkheads),"
              + " waiting at most this long; 0s starts them at once. Default: ${DEFAULT-VALUE}.")
  Duration waitForPage;

  @Option(
      names = "--port",
      defaultValue = "3000",
      paramLabel = "PORT",
      description =
          "With --dashboard: the loopback port of the page (0: any free port)."
              + " Default: ${DEFAULT-VALUE}.")
  int port;

  @Option(
      names = "--report",
      defaultValue = "bulkhead-demo-report.html",
      paramLabel = "FILE",
      description =
          "The HTML report to add the figures to (replacing those of an earlier demo db "
              + "run); written anew if it does not exist. Default: ${DEFAULT-VALUE}.")
  Path report;

  @Override
  public Integer call() {
    CheckoutVsReports.Settings settings =
        Main.checked(
            spec,
            () -> {
              try {
                return CheckoutVsReports.Settings.builder()
                    .degradedReportQuery(degraded)
                    .degradedPhase(duration)
                    .healthyPhase(healthy)
                    .build();
              } catch (IllegalArgumentException e) {
                throw new CliException(e.getMessage());
              }
            });
    if (dashboard) {
      Main.checkPort(spec, port);
    }
    if (waitForPage.isNegative()) {
      throw new CliException("--wait-for-page: must not be negative: " + waitForPage);
    }
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();

    // Before the database: a port in use fails at once.
    DbDashboard watch = dashboard ? DbDashboard.start(port) : null;
    boolean keep = false;
    try {
      if (watch != null) {
        err.println("dashboard: " + watch.uri() + "/dashboard (open it now: it follows both runs)");
        err.flush();
        if (!waitForPage.isZero() && !awaitPage(watch)) {
          err.println("no page opened within " + Durations.format(waitForPage) + "; starting");
          err.flush();
        }
      }
      run(settings, watch, out, err);
      keep = watch != null;
    } finally {
      if (!keep && watch != null) {
        watch.close();
      }
    }
    if (keep) {
      keepUp(watch, json ? err : out);
    }
    return 0;
  }

  private boolean awaitPage(DbDashboard watch) {
    try {
      return watch.awaitFirstLook(waitForPage);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted");
    }
  }

  private void run(
      CheckoutVsReports.Settings settings, DbDashboard watch, PrintWriter out, PrintWriter err) {
    Instant started = Instant.now();
    double loadBefore = Experiment.loadAverage();
    CheckoutVsReports.Result result;
    try (LocalPostgres db =
        jdbcUrl == null ? LocalPostgres.findOrStart() : LocalPostgres.at(jdbcUrl)) {
      err.println("using " + db.description());
      err.flush();
      result =
          CheckoutVsReports.run(
              db,
              settings,
              line -> {
                err.println(line);
                err.flush();
              },
              watch);
    } catch (SQLException | IllegalStateException e) {
      throw new CliException(e.getMessage(), e);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      throw new CliException("interrupted");
    }
    DbReport.Run run =
        new DbReport.Run(
            result,
            started,
            loadBefore,
            Experiment.loadAverage(),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version"));

    String existing = null;
    try {
      if (Files.exists(report)) {
        existing = Files.readString(report, StandardCharsets.UTF_8);
      }
      Path parent = report.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(
          report, DbReport.mergeInto(existing, DbReport.section(run)), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException("cannot write " + report + " (--report): " + e.getMessage());
    }
    if (json) {
      out.println(result.toJson());
      err.println("added the figures to " + report);
      err.flush();
    } else {
      out.println();
      out.print(result.table());
      out.println();
      out.println(DbReport.machine(run));
      out.println("added the figures to " + report);
    }
    out.flush();
  }

  /** Keeps the dashboard's server up until Ctrl-C (or, in tests, an interrupt). */
  private static void keepUp(DbDashboard watch, PrintWriter to) {
    Thread hook = new Thread(watch::close, "demo-db-dashboard-shutdown");
    Runtime.getRuntime().addShutdownHook(hook);
    URI at = watch.uri();
    to.println(
        "the dashboard stays up at "
            + at
            + "/dashboard (JSON "
            + at
            + "/bulkheads,"
            + " Prometheus "
            + at
            + "/metrics); both runs are over and their pools closed, so it lists"
            + " no compartments now; Ctrl-C stops it");
    to.flush();
    boolean interrupted = false;
    try {
      watch.join();
    } catch (InterruptedException e) {
      interrupted = true; // restored after the stop: Jetty's stop would be cut short by it
    } finally {
      UpstreamCommand.removeHook(hook);
      watch.close();
    }
    if (interrupted) {
      Thread.currentThread().interrupt();
    }
  }
}
