package io.bulkhead.demo;

import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.CliException;
import io.bulkhead.scenarios.Latency;
import io.bulkhead.scenarios.ProcessIsolation;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.Callable;
import picocli.CommandLine.Command;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.Spec;

/**
 * {@code demo processes}: a runaway report inside the API's JVM versus in its own process with its
 * own CPU and memory ceiling.
 */
@Command(
    name = "processes",
    mixinStandardHelpOptions = true,
    header =
        "A runaway report inside the API's JVM versus in its own process with its own ceilings.",
    description =
        "Runs a checkout API (/login, /checkout) and a report worker twice, each in child "
            + "JVMs: inside (the worker in the API's JVM) and separate (the worker its own JVM, "
            + "restarted alone when it dies). After --before one report goes rogue: it spins a thread "
            + "per processor and allocates without freeing, for --during. The ceilings are control "
            + "groups (CPU quota, memory limit, no swap) when this process is root with a writable "
            + "cgroup hierarchy, JVM options otherwise. Prints login and checkout p50/p99 and errors "
            + "before and during the runaway, whether the API survived and what became of the worker, "
            + "and adds them, with a chart of every checkout call, to the HTML report. "
            + "About 2 x 30 s with the defaults. Child processes and groups are removed on exit and on "
            + "Ctrl-C.")
final class ProcessesCommand implements Callable<Integer> {

  static final String BEGIN = "<!-- demo processes: begin -->";
  static final String END = "<!-- demo processes: end -->";

  /** The chart's range: a loopback call takes a millisecond or so; a failed one counts as 2 s. */
  private static final double LOWEST_MS = 1;

  private static final double HIGHEST_MS = 10_000;
  private static final long MIB = 1024 * 1024;

  @Spec private CommandSpec spec;

  @Option(
      names = "--before",
      defaultValue = "10s",
      paramLabel = "DURATION",
      description =
          "How long the load runs before the report goes rogue. Default: ${DEFAULT-VALUE}.")
  Duration before;

  @Option(
      names = "--during",
      defaultValue = "20s",
      paramLabel = "DURATION",
      description =
          "How long the runaway lasts at least: it goes on until the rogue process's fate is known"
              + " (dead, and restarted when separate), up to 2 minutes more. Default:"
              + " ${DEFAULT-VALUE}.")
  Duration during;

  @Option(
      names = "--jvm-ceilings",
      description =
          "Use JVM options (-Xmx, -XX:ActiveProcessorCount) as ceilings even where control"
              + " groups are at hand.")
  boolean jvmCeilings;

  @Option(
      names = "--report",
      defaultValue = "bulkhead-demo-report.html",
      paramLabel = "FILE",
      description =
          "The HTML report to add the figures to (replacing those of an earlier demo "
              + "processes run); written anew if it does not exist. Default: ${DEFAULT-VALUE}.")
  Path report;

  @Option(
      names = "--json",
      description =
          "Print {\"inside\": R, \"separate\": R} (figures during the runaway) on standard"
              + " output instead of the table.")
  boolean json;

  @Override
  public Integer call() {
    ProcessIsolation.Settings settings =
        Main.checked(spec, () -> new ProcessIsolation.Settings(before, during, !jvmCeilings));
    PrintWriter out = spec.commandLine().getOut();
    PrintWriter err = spec.commandLine().getErr();
    ProcessIsolation.Result r =
        ProcessIsolation.run(
            settings,
            line -> {
              err.println(line);
              err.flush();
            });
    writeReport(r);
    out.print(json ? json(r) : table(r));
    if (!json) {
      out.println("added the figures to " + report);
    }
    out.flush();
    return 0;
  }

  private void writeReport(ProcessIsolation.Result r) {
    try {
      String existing =
          Files.exists(report) ? Files.readString(report, StandardCharsets.UTF_8) : null;
      Path parent = report.toAbsolutePath().getParent();
      if (parent != null) {
        Files.createDirectories(parent);
      }
      Files.writeString(
          report, DbReport.mergeInto(existing, section(r), BEGIN, END), StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new CliException("cannot write " + report + " (--report): " + e.getMessage());
    }
  }

  /** The HTML section: the table and a chart of every checkout call per case, between markers. */
  static String section(ProcessIsolation.Result r) {
    StringBuilder h = new StringBuilder(128 * 1024);
    h.append(BEGIN)
        .append('\n')
        .append("<section id=\"demo-processes\">\n")
        .append("<h2>A runaway report: inside the API's JVM, or its own process</h2>\n")
        .append("<pre>")
        .append(Report.esc(table(r)))
        .append("</pre>\n")
        .append(
            "<p class=\"note\">One dot per checkout call; green answered, red failed (counted "
                + "as the 2 s call timeout). Horizontal: seconds since the load started; the dashed line "
                + "is where the report went rogue. Vertical: latency from when the call was due, "
                + "logarithmic. Above them, the p99 of each route before and during the runaway, and "
                + "each process's card: its ceilings and what it used of them during the runaway. "
                + "<code>java -jar bulkhead-demo.jar demo processes --json</code> prints the figures as "
                + "JSON.</p>\n");
    p99Chart(h, r);
    cards(h, r);
    double xMax = Math.max(seconds(r.inside()), seconds(r.separate()));
    for (ProcessIsolation.Side side : List.of(r.inside(), r.separate())) {
      List<DbReport.Point> points = new ArrayList<>();
      for (ProcessIsolation.CheckoutCall c : side.checkoutCalls()) {
        points.add(
            new DbReport.Point(c.due().toNanos() / 1e9, c.latency().toNanos() / 1e6, c.ok()));
      }
      DbReport.chart(
          h,
          side.name() + ": API " + (side.apiSurvived() ? "survived" : "died"),
          points,
          side.runawayAt().toNanos() / 1e9,
          "the report goes rogue",
          xMax,
          LOWEST_MS,
          HIGHEST_MS);
    }
    return h.append("</section>\n").append(END).toString();
  }

  /**
   * Login and checkout p99 before and during the runaway, inside and separate: a bar per route and
   * phase, on the same logarithmic scale as the call charts. Each bar carries its figures as data
   * attributes ({@code data-case}, {@code data-phase}, {@code data-route}, {@code data-p99-ms}).
   */
  static void p99Chart(StringBuilder h, ProcessIsolation.Result r) {
    int width = 860;
    int height = 300;
    int left = 70;
    int top = 40;
    int bottom = 50;
    int plotW = width - left - 20;
    int plotH = height - top - bottom;
    String title = "login and checkout p99, before and during the runaway";
    h.append("<svg class=\"p99\" width=\"")
        .append(width)
        .append("\" height=\"")
        .append(height)
        .append("\" viewBox=\"0 0 ")
        .append(width)
        .append(' ')
        .append(height)
        .append("\" role=\"img\" aria-label=\"")
        .append(title)
        .append("\">\n");
    h.append(
        svgText(
            left,
            20,
            "start",
            "<tspan font-weight=\"600\">"
                + title
                + "</tspan>"
                + " <tspan fill=\"#0969da\">&#9632; login</tspan> <tspan fill=\"#8250df\">&#9632; "
                + "checkout</tspan>"));
    for (double ms = LOWEST_MS; ms <= HIGHEST_MS * 1.0001; ms *= 10) {
      double y = top + barTop(ms, plotH);
      h.append(
          String.format(
              Locale.ROOT,
              "<line x1=\"%d\" y1=\"%.1f\" x2=\"%d\" y2=\"%.1f\" " + "stroke=\"#d0d7de\"/>%n",
              left,
              y,
              left + plotW,
              y));
      h.append(
          svgText(
              left - 8,
              y + 4,
              "end",
              ms >= 1000
                  ? String.format(Locale.ROOT, "%.0f s", ms / 1000)
                  : String.format(Locale.ROOT, "%.0f ms", ms)));
    }
    List<ProcessIsolation.Side> sides = List.of(r.inside(), r.separate());
    double groupW = plotW / 4.0;
    double barW = groupW / 4;
    int group = 0;
    for (ProcessIsolation.Side side : sides) {
      for (String phaseName : List.of("before", "during")) {
        ProcessIsolation.Phase phase = phaseName.equals("before") ? side.before() : side.during();
        double x0 = left + group * groupW + barW;
        int bar = 0;
        for (String route : List.of("login", "checkout")) {
          Latency l = route.equals("login") ? phase.login() : phase.checkout();
          double x = x0 + bar * barW;
          if (l.count() > 0) {
            double ms = l.p99Ms();
            double y = top + barTop(Math.max(LOWEST_MS, ms), plotH);
            h.append(
                String.format(
                    Locale.ROOT,
                    "<rect data-case=\"%s\" data-phase=\"%s\" "
                        + "data-route=\"%s\" data-p99-ms=\"%.3f\" x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                        + "height=\"%.1f\" fill=\"%s\"><title>%s %s, %s: p99 %s ms</title></rect>%n",
                    side.name(),
                    phaseName,
                    route,
                    ms,
                    x,
                    y,
                    barW - 2,
                    top + plotH - y,
                    route.equals("login") ? "#0969da" : "#8250df",
                    side.name(),
                    phaseName,
                    route,
                    fmt(ms)));
            h.append(svgText(x + (barW - 2) / 2, y - 4, "middle", fmt(ms)));
          }
          bar++;
        }
        h.append(
            svgText(
                left + group * groupW + groupW / 2,
                top + plotH + 20,
                "middle",
                side.name() + ": " + phaseName));
        group++;
      }
      if (group == 2) {
        double x = left + 2 * groupW;
        h.append(
            String.format(
                Locale.ROOT,
                "<line x1=\"%.1f\" y1=\"%d\" x2=\"%.1f\" y2=\"%d\" "
                    + "stroke=\"#57606a\" stroke-dasharray=\"4 4\"/>%n",
                x,
                top,
                x,
                top + plotH));
      }
    }
    h.append(
        String.format(
            Locale.ROOT,
            "<line x1=\"%d\" y1=\"%d\" x2=\"%d\" y2=\"%d\" " + "stroke=\"#57606a\"/>%n",
            left,
            top + plotH,
            left + plotW,
            top + plotH));
    h.append(
        svgText(
            left + plotW / 2.0,
            height - 8,
            "middle",
            "p99 latency from when the call was due (a failed call counts as the 2 s timeout)"));
    h.append("</svg>\n");
  }

  /**
   * The processes' cards, as the dashboard draws a process behind a compartment: ceilings, CPU used
   * against the quota and the most memory held against the limit during the runaway, restarts, and
   * how the last process ended.
   */
  static void cards(StringBuilder h, ProcessIsolation.Result r) {
    h.append("<div class=\"process-cards\" style=\"display:flex;flex-wrap:wrap;gap:1em\">\n");
    for (ProcessIsolation.Side side : List.of(r.inside(), r.separate())) {
      for (ProcessIsolation.ProcessCard c : side.cards()) {
        h.append("<div class=\"process-card\" data-case=\"")
            .append(side.name())
            .append(
                "\" style=\"border:1px solid #d0d7de;border-radius:6px;padding:.5em 1em;"
                    + "min-width:16em\">\n<b>")
            .append(Report.esc(side.name() + ": " + c.name()))
            .append("</b> <span class=\"note\">")
            .append(Report.esc(c.state()))
            .append("</span><br>\n")
            .append(
                String.format(Locale.ROOT, "CPU %.2f of %.1f used<br>%n", c.cpusUsed(), c.cpus()))
            .append(
                String.format(
                    Locale.ROOT,
                    "memory up to %d of %d MiB<br>%n",
                    c.memoryPeakBytes() / MIB,
                    c.memoryLimitBytes() / MIB))
            .append("restarts ")
            .append(c.restarts())
            .append("<br>\n")
            .append("<span class=\"note\">")
            .append(
                Report.esc(c.lastExit().isEmpty() ? "no process ended" : "last: " + c.lastExit()))
            .append("<br>")
            .append(Report.esc(c.ceilings()))
            .append("</span>\n</div>\n");
      }
    }
    h.append("</div>\n");
  }

  private static double barTop(double ms, int plotH) {
    double frac =
        (Math.log10(ms) - Math.log10(LOWEST_MS)) / (Math.log10(HIGHEST_MS) - Math.log10(LOWEST_MS));
    return plotH - Math.max(0, Math.min(1, frac)) * plotH;
  }

  private static String svgText(double x, double y, String anchor, String content) {
    return String.format(
        Locale.ROOT,
        "<text x=\"%.1f\" y=\"%.1f\" text-anchor=\"%s\" "
            + "font-size=\"12\" fill=\"#57606a\">%s</text>%n",
        x,
        y,
        anchor,
        content);
  }

  /** The chart's width in seconds: the last call due, rounded up to ten. */
  private static double seconds(ProcessIsolation.Side side) {
    List<ProcessIsolation.CheckoutCall> calls = side.checkoutCalls();
    double last = calls.isEmpty() ? 0 : calls.get(calls.size() - 1).due().toNanos() / 1e9;
    return Math.max(10, Math.ceil(last / 10) * 10);
  }

  /**
   * {@code {"inside": R, "separate": R}}, R = {@code {"login": {"p50_ms", "p99_ms"}, "checkout":
   * {"p50_ms", "p99_ms", "errors"}, "api_survived", "ceilings", "worker": {"deaths", "restarts",
   * "throttled_periods", "spinning_threads", "fate"}}}, figures during the runaway.
   */
  static String json(ProcessIsolation.Result r) {
    JsonWriter out = JsonWriter.pretty().beginObject();
    side(out.name("inside"), r.inside());
    side(out.name("separate"), r.separate());
    return out.endObject().toJson() + "\n";
  }

  private static void side(JsonWriter out, ProcessIsolation.Side s) {
    ProcessIsolation.Phase during = s.during();
    out.beginObject();
    out.name("login").beginObject();
    num(out.name("p50_ms"), during.login().p50Ms());
    num(out.name("p99_ms"), during.login().p99Ms());
    out.endObject();
    out.name("checkout").beginObject();
    num(out.name("p50_ms"), during.checkout().p50Ms());
    num(out.name("p99_ms"), during.checkout().p99Ms());
    out.name("errors").value(during.checkoutErrors());
    out.endObject();
    out.name("api_survived").value(s.apiSurvived());
    out.name("ceilings").value(s.ceilings());
    ProcessIsolation.Worker w = s.worker();
    out.name("worker")
        .beginObject()
        .name("deaths")
        .value(w.deaths())
        .name("restarts")
        .value(w.restarts())
        .name("throttled_periods")
        .value(w.throttledPeriods())
        .name("spinning_threads")
        .value(w.spinningThreads())
        .name("fate")
        .value(w.fate())
        .endObject();
    out.endObject();
  }

  private static void num(JsonWriter out, Double v) {
    if (v == null) {
      out.nullValue();
    } else {
      out.value(v.doubleValue());
    }
  }

  /** The side-by-side table: before and during, inside and separate. */
  static String table(ProcessIsolation.Result r) {
    ProcessIsolation.Side in = r.inside();
    ProcessIsolation.Side sep = r.separate();
    StringBuilder sb = new StringBuilder();
    String row = "%-30s %16s %16s %16s %16s%n";
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "",
            "inside: before",
            "inside: during",
            "separate: before",
            "separate: during"));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "login p50 / p99 (ms)",
            pair(in.before().login()),
            pair(in.during().login()),
            pair(sep.before().login()),
            pair(sep.during().login())));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "login errors",
            in.before().loginErrors(),
            in.during().loginErrors(),
            sep.before().loginErrors(),
            sep.during().loginErrors()));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "checkout p50 / p99 (ms)",
            pair(in.before().checkout()),
            pair(in.during().checkout()),
            pair(sep.before().checkout()),
            pair(sep.during().checkout())));
    sb.append(
        String.format(
            Locale.ROOT,
            row,
            "checkout errors",
            in.before().checkoutErrors(),
            in.during().checkoutErrors(),
            sep.before().checkoutErrors(),
            sep.during().checkoutErrors()));
    sb.append(
        String.format(
            Locale.ROOT,
            "%-30s %33s %33s%n",
            "API process survived",
            in.apiSurvived() ? "yes" : "no",
            sep.apiSurvived() ? "yes" : "no"));
    sb.append(String.format(Locale.ROOT, "%nworker, inside:   %s%n", in.worker().fate()));
    sb.append(String.format(Locale.ROOT, "worker, separate: %s%n", sep.worker().fate()));
    sb.append(String.format(Locale.ROOT, "ceilings, inside:   %s%n", in.ceilingsDetail()));
    sb.append(String.format(Locale.ROOT, "ceilings, separate: %s%n", sep.ceilingsDetail()));
    return sb.toString();
  }

  private static String pair(Latency l) {
    if (l.count() == 0) {
      return "-";
    }
    return fmt(l.p50Ms()) + " / " + fmt(l.p99Ms());
  }

  private static String fmt(Double ms) {
    return ms >= 100
        ? String.format(Locale.ROOT, "%.0f", ms)
        : String.format(Locale.ROOT, "%.1f", ms);
  }
}
