package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.scenarios.CheckoutVsReports;
import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.Svg;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * {@code demo db}'s figures as a section of the HTML report: the side-by-side table and a chart of
 * every checkout call, between two markers so that a later run replaces them and {@code demo}'s own
 * page around them is kept.
 */
final class DbReport {

  static final String BEGIN = "<!-- demo db: begin -->";
  static final String END = "<!-- demo db: end -->";

  private static final int WIDTH = 900;
  private static final int HEIGHT = 300;
  private static final int LEFT = 72;
  private static final int RIGHT = 24;
  private static final int TOP = 34;
  private static final int BOTTOM = 44;

  /** The chart's floor: a database call takes a few milliseconds at best. */
  private static final double LOWEST_MS = 10;

  private DbReport() {}

  /** One {@code demo db} run and the conditions it ran in. */
  record Run(
      CheckoutVsReports.Result result,
      Instant startedAt,
      double loadAverageBefore,
      double loadAverageAfter,
      int processors,
      String javaVersion) {}

  static String machine(Run run) {
    return "machine: "
        + Experiment.machineLine(
            run.processors(), run.loadAverageBefore(), run.loadAverageAfter(), run.javaVersion());
  }

  /**
   * Puts {@code section} into {@code page}: in place of the section of an earlier run, or before
   * {@code </body>}; a page of its own when there is none (null) or it has no body to add to.
   */
  static String mergeInto(String page, String section) {
    return mergeInto(page, section, BEGIN, END);
  }

  /** {@link #mergeInto(String, String)} for a section between other markers. */
  static String mergeInto(String page, String section, String beginMarker, String endMarker) {
    if (page != null) {
      int begin = page.indexOf(beginMarker);
      int end = page.indexOf(endMarker);
      if (begin >= 0 && end > begin) {
        return page.substring(0, begin) + section + page.substring(end + endMarker.length());
      }
      int body = page.lastIndexOf("</body>");
      if (body >= 0) {
        return page.substring(0, body) + section + "\n" + page.substring(body);
      }
    }
    return "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
        + "<title>Bulkhead demo: database pools, shared vs split</title>\n"
        + "<style>\n"
        + "body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;"
        + "margin:2em auto;max-width:940px;padding:0 1em;color:#1f2328}\n"
        + "h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em}\n"
        + "table{border-collapse:collapse;margin:1em 0}"
        + "td,th{padding:.3em .9em;border-bottom:1px solid #d0d7de;text-align:right}"
        + "td:first-child,th:first-child{text-align:left}"
        + "th{background:#f6f8fa}tr.key td{font-weight:600}\n"
        + ".note{color:#57606a;font-size:.9em}svg{display:block;margin:.5em 0 1.5em}\n"
        + "code{background:#f6f8fa;padding:.1em .3em;border-radius:4px}\n"
        + "</style>\n</head>\n<body>\n<h1>Bulkhead demo</h1>\n"
        + section
        + "\n</body>\n</html>\n";
  }

  /** The section, markers included. */
  static String section(Run run) {
    CheckoutVsReports.Result r = run.result();
    CheckoutVsReports.Settings s = r.settings();
    StringBuilder h = new StringBuilder(256 * 1024);
    h.append(BEGIN)
        .append('\n')
        .append("<section id=\"demo-db\">\n")
        .append("<h2>One database, two workloads: a shared pool versus split pools</h2>\n");
    h.append("<p class=\"note\">")
        .append(Report.esc(r.setup()).replace("\n", "<br>"))
        .append("<br>Run at ")
        .append(
            DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
                run.startedAt().atOffset(ZoneOffset.UTC).withNano(0)))
        .append(" UTC; ")
        .append(Report.esc(machine(run)))
        .append(".</p>\n");
    h.append(
        "<p>Checkout never runs a report, yet with <b>one shared pool</b> of 10 connections "
            + "it waits in the same line as the degraded reports, which hold every connection. With "
            + "<b>split pools</b> drawing on the same budget of 10, reports exhaust only their own 4 "
            + "connections and are turned away at once when those are busy; checkout keeps its 6 and "
            + "its healthy latency.</p>\n");
    List<String> headings = r.headings();
    h.append("<table>\n<tr><th></th><th>")
        .append(Report.esc(headings.get(0)))
        .append("</th><th>")
        .append(Report.esc(headings.get(1)))
        .append("</th></tr>\n");
    for (List<String> row : r.rows()) {
      boolean key = CheckoutVsReports.Result.KEY_ROWS.contains(row.get(0));
      h.append(key ? "<tr class=\"key\">" : "<tr>")
          .append("<td>")
          .append(Report.esc(row.get(0)))
          .append("</td><td>")
          .append(Report.esc(row.get(1)))
          .append("</td><td>")
          .append(Report.esc(row.get(2)))
          .append("</td></tr>\n");
    }
    h.append("</table>\n");
    h.append("<h3>Every checkout call: when it was due, and how long it took</h3>\n")
        .append(
            "<p class=\"note\">One dot per call; green succeeded, red failed. Horizontal: "
                + "seconds since the start; the dashed line is where the report query degrades. "
                + "Vertical: latency from when the call was due, logarithmic. Both charts share their "
                + "axes.</p>\n");
    double xMax = Math.ceil(seconds(s.healthyPhase().plus(s.degradedPhase())) / 10) * 10;
    double yMaxMs =
        Math.max(
            1000,
            Math.pow(
                10,
                Math.ceil(
                    Math.log10(Math.max(maxLatencyMs(r.shared()), maxLatencyMs(r.split()))))));
    String degrade = "reports degrade to " + Durations.format(s.degradedReportQuery());
    chart(
        h,
        r.headings().get(0),
        points(r.shared()),
        seconds(s.healthyPhase()),
        degrade,
        xMax,
        LOWEST_MS,
        yMaxMs);
    chart(
        h,
        r.headings().get(1),
        points(r.split()),
        seconds(s.healthyPhase()),
        degrade,
        xMax,
        LOWEST_MS,
        yMaxMs);
    h.append(
        "<p class=\"note\">Calls arrive on a fixed schedule whatever the pool does (an open "
            + "loop), and a call's latency counts from when it was due, failed calls included. When the "
            + "degraded phase ends the report queries still running are cancelled, so checkout calls "
            + "still waiting then get a connection sooner than they would have. "
            + "<code>java -jar bulkhead-demo.jar demo db --json</code> prints the same figures as JSON."
            + "</p>\n");
    h.append("</section>\n").append(END);
    return h.toString();
  }

  /**
   * One dot of a chart: when the call was due and how long it took, in seconds and milliseconds.
   */
  record Point(double dueSeconds, double latencyMs, boolean ok) {}

  private static List<Point> points(CheckoutVsReports.Outcome o) {
    return o.checkoutCalls().stream()
        .map(c -> new Point(seconds(c.due()), c.latency().toNanos() / 1e6, c.ok()))
        .collect(java.util.stream.Collectors.toList());
  }

  /**
   * A chart of every call: a dot per call (green succeeded, red failed) at when it was due and its
   * latency (logarithmic), with a dashed line and {@code markerLabel} at {@code markerSeconds}.
   */
  static void chart(
      StringBuilder h,
      String title,
      List<Point> points,
      double markerSeconds,
      String markerLabel,
      double xMax,
      double yMinMs,
      double yMaxMs) {
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;
    h.append(Svg.open(WIDTH, HEIGHT, title, ""));
    h.append(
        text(LEFT, 20, "start", "<tspan font-weight=\"600\">" + Report.esc(title) + "</tspan>"));
    // Vertical grid: decades of latency.
    for (double ms = yMinMs; ms <= yMaxMs * 1.0001; ms *= 10) {
      double y = TOP + yFor(ms, yMinMs, yMaxMs, plotH);
      h.append(Svg.line(LEFT, y, LEFT + plotW, y, "#d0d7de", ""));
      h.append(text(LEFT - 8, y + 4, "end", decade(ms)));
    }
    // Horizontal grid: every 10 s.
    for (int sec = 0; sec <= xMax; sec += 10) {
      double x = LEFT + sec / xMax * plotW;
      h.append(Svg.line(x, TOP + plotH, x, TOP + plotH + 5, "#57606a", ""));
      h.append(text(x, TOP + plotH + 20, "middle", sec + " s"));
    }
    double degradeAt = LEFT + markerSeconds / xMax * plotW;
    h.append("<line x1=\"")
        .append(Svg.num(degradeAt))
        .append("\" y1=\"")
        .append(TOP)
        .append("\" x2=\"")
        .append(Svg.num(degradeAt))
        .append("\" y2=\"")
        .append(TOP + plotH)
        .append("\" stroke=\"#57606a\" stroke-dasharray=\"4 4\"/>\n");
    h.append(text(degradeAt + 6, TOP + 12, "start", Report.esc(markerLabel)));
    h.append(Svg.line(LEFT, TOP, LEFT, TOP + plotH, "#57606a", ""));
    h.append(Svg.line(LEFT, TOP + plotH, LEFT + plotW, TOP + plotH, "#57606a", ""));
    for (Point c : points) {
      double ms = Math.max(yMinMs, c.latencyMs());
      double x = LEFT + Math.min(xMax, c.dueSeconds()) / xMax * plotW;
      double y = TOP + yFor(ms, yMinMs, yMaxMs, plotH);
      h.append("<circle cx=\"")
          .append(Svg.num(x))
          .append("\" cy=\"")
          .append(Svg.num(y))
          .append("\" r=\"2\" fill=\"")
          .append(c.ok() ? "#1a7f37" : "#cf222e")
          .append("\" fill-opacity=\"0.6\"><title>")
          .append(
              String.format(
                  Locale.ROOT,
                  "due at %.2f s: %s%s",
                  c.dueSeconds(),
                  Report.ms(c.latencyMs()),
                  c.ok() ? "" : ", failed"))
          .append("</title></circle>\n");
    }
    h.append(text(LEFT + plotW / 2.0, HEIGHT - 6, "middle", "seconds since the start"));
    h.append("</svg>\n");
  }

  private static double maxLatencyMs(CheckoutVsReports.Outcome o) {
    double max = 0;
    for (CheckoutVsReports.CheckoutCall c : o.checkoutCalls()) {
      max = Math.max(max, c.latency().toNanos() / 1e6);
    }
    return max;
  }

  private static double yFor(double ms, double yMin, double yMax, int plotH) {
    double frac = (Math.log10(ms) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin));
    return plotH - Math.max(0, Math.min(1, frac)) * plotH;
  }

  private static String text(double x, double y, String anchor, String markup) {
    return Svg.text(x, y, anchor, "font-size=\"12\" ", markup);
  }

  private static String decade(double ms) {
    return ms >= 1000
        ? String.format(Locale.ROOT, "%.0f s", ms / 1000)
        : String.format(Locale.ROOT, "%.0f ms", ms);
  }

  private static double seconds(Duration d) {
    return d.toNanos() / 1e9;
  }
}
