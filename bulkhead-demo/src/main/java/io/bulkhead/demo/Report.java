package io.bulkhead.demo;

import io.bulkhead.internal.Durations;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.ExperimentResult;
import io.bulkhead.scenarios.LineChart;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.ModeResult;
import io.bulkhead.scenarios.Route;
import io.bulkhead.scenarios.Sample;
import io.bulkhead.scenarios.Svg;
import java.math.BigDecimal;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;

/**
 * The experiment's result in three forms: a side-by-side table for the terminal, the JSON of {@code
 * bulkhead-demo-result.json}, and the self-contained HTML page of {@code bulkhead-demo-report.html}
 * with a chart of every request.
 */
final class Report {

  private Report() {}

  // ----------------------------------------------------------------------------------------------
  // Table

  static String table(ExperimentResult r) {
    StringBuilder out = new StringBuilder();
    out.append(setup(r.settings())).append('\n').append('\n');
    row(out, "", "shared", "bulkhead");
    LoadResult s = r.shared().load();
    LoadResult b = r.bulkhead().load();
    row(out, "login p50", ms(s.login().p50Ms()), ms(b.login().p50Ms()));
    row(out, "login p99", ms(s.login().p99Ms()), ms(b.login().p99Ms()));
    row(out, "login max", ms(s.login().maxMs()), ms(b.login().maxMs()));
    row(out, "chat 200", count(s.chatOk()), count(b.chatOk()));
    row(out, "chat 503", count(s.chatRejected()), count(b.chatRejected()));
    row(out, "chat other", count(s.chatOther()), count(b.chatOther()));
    row(out, "503 p50", ms(s.rejected().p50Ms()), ms(b.rejected().p50Ms()));
    row(out, "503 p99", ms(s.rejected().p99Ms()), ms(b.rejected().p99Ms()));
    row(out, "wall time", ms(s.wallMs()), ms(b.wallMs()));
    row(
        out,
        "upstream connections (max open)",
        count(r.shared().upstreamMaxConnections()),
        count(r.bulkhead().upstreamMaxConnections()));
    ModeResult.LimitTrace trace = r.bulkhead().llmLimit();
    if (trace != null) {
      row(out, "llm limit (" + trace.controller() + ")", "-", limitPath(trace));
    }
    out.append('\n').append(machine(r)).append('\n');
    return out.toString();
  }

  /** "10 → 12, 3 moves": the limit at the start and the end of the run, and how often it moved. */
  private static String limitPath(ModeResult.LimitTrace trace) {
    List<ModeResult.Point> p = trace.points();
    return p.get(0).limit()
        + " → "
        + p.get(p.size() - 1).limit()
        + ", "
        + trace.changes()
        + (trace.changes() == 1 ? " move" : " moves");
  }

  static String setup(DemoSettings s) {
    return "The slow-upstream experiment in one process, on loopback: an upstream that answers after "
        + Durations.format(s.delay())
        + "; "
        + s.chats()
        + " /chat at once, "
        + s.logins()
        + " /login "
        + Durations.format(s.loginsAfter())
        + " later; a server cap of "
        + s.serverLimit()
        + " (unbounded queue).\nBulkhead mode adds the llm compartment: "
        + s.llmLimit()
        + " in flight (and "
        + s.llmLimit()
        + " connections), "
        + s.llmQueue()
        + " waiting, "
        + Durations.format(s.llmWait())
        + " wait.";
  }

  static String machine(ExperimentResult r) {
    return "machine: "
        + Experiment.machineLine(
            r.processors(), r.loadAverageBefore(), r.loadAverageAfter(), r.javaVersion());
  }

  private static void row(StringBuilder out, String label, String shared, String bulkhead) {
    out.append(String.format(Locale.ROOT, "%-33s%12s%12s%n", label, shared, bulkhead));
  }

  static String ms(Double millis) {
    if (millis == null) {
      return "-";
    }
    if (millis < 100) {
      return String.format(Locale.ROOT, "%.1f ms", millis);
    }
    return String.format(Locale.ROOT, "%,.0f ms", millis);
  }

  private static String count(int n) {
    return Integer.toString(n);
  }

  // ----------------------------------------------------------------------------------------------
  // JSON: {"shared": M, "bulkhead": M}

  static String json(ExperimentResult r) {
    JsonWriter out = JsonWriter.pretty().beginObject();
    out.name("shared");
    mode(out, r.shared().load());
    out.name("bulkhead");
    mode(out, r.bulkhead().load(), r.bulkhead().llmLimit());
    return out.endObject().toJson() + "\n";
  }

  /**
   * {@link #mode(JsonWriter, LoadResult)}, with {@code "llm_limit": {"controller", "min", "max",
   * "changes", "last_move", "points": [[ms, limit], ...]}} for an adaptive llm compartment.
   */
  private static void mode(JsonWriter out, LoadResult m, ModeResult.LimitTrace trace) {
    out.beginObject();
    m.writeFields(out, false);
    if (trace != null) {
      out.name("llm_limit").beginObject();
      out.name("controller").value(trace.controller());
      out.name("min").value(trace.min());
      out.name("max").value(trace.max());
      out.name("changes").value(trace.changes());
      out.name("last_move").value(trace.lastMove());
      out.name("points").beginArray();
      for (ModeResult.Point p : trace.points()) {
        out.beginArray().value(p.atMillis()).value(p.limit()).endArray();
      }
      out.endArray().endObject();
    }
    out.endObject();
  }

  /**
   * Writes {@code {"login": {"p50_ms", "p99_ms", "max_ms"}, "chat": {"200", "503", "other"},
   * "rejected": {"p50_ms", "p99_ms"}, "wall_ms"}}; a latency with no samples is null.
   */
  static void mode(JsonWriter out, LoadResult m) {
    out.beginObject();
    m.writeFields(out, false);
    out.endObject();
  }

  // ----------------------------------------------------------------------------------------------
  // HTML

  private static final int WIDTH = 900;
  private static final int HEIGHT = 340;
  private static final int LEFT = 72;
  private static final int RIGHT = 24;
  private static final int TOP = 34;
  private static final int BOTTOM = 44;

  static String html(ExperimentResult r) {
    DemoSettings s = r.settings();
    double xMax =
        niceCeiling(
            Math.max(
                seconds(r.shared().load().wallNanos()), seconds(r.bulkhead().load().wallNanos())));
    double yMaxMs =
        Math.max(
            1000,
            Math.pow(
                10,
                Math.ceil(
                    Math.log10(
                        Math.max(
                            maxLatencyMs(r.shared().load()), maxLatencyMs(r.bulkhead().load()))))));
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n")
        .append("<title>Bulkhead demo: login latency, shared vs bulkhead</title>\n")
        .append("<style>\n")
        .append("body{font:15px/1.5 system-ui,-apple-system,Segoe UI,Roboto,sans-serif;")
        .append("margin:2em auto;max-width:940px;padding:0 1em;color:#1f2328}\n")
        .append("h1{font-size:1.5em;margin-bottom:.2em}h2{font-size:1.15em;margin-top:1.8em}\n")
        .append("table{border-collapse:collapse;margin:1em 0}")
        .append("td,th{padding:.3em .9em;border-bottom:1px solid #d0d7de;text-align:right}")
        .append("td:first-child,th:first-child{text-align:left}")
        .append("th{background:#f6f8fa}tr.key td{font-weight:600}\n")
        .append(".note{color:#57606a;font-size:.9em}svg{display:block;margin:.5em 0 1.5em}\n")
        .append("code{background:#f6f8fa;padding:.1em .3em;border-radius:4px}\n")
        .append("</style>\n</head>\n<body>\n");
    h.append("<h1>One slow upstream, two ways to hold it</h1>\n");
    h.append("<p class=\"note\">")
        .append(esc(setup(s)).replace("\n", "<br>"))
        .append("<br>")
        .append("Run at ")
        .append(
            DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
                r.startedAt().atOffset(ZoneOffset.UTC).withNano(0)))
        .append(" UTC; ")
        .append(esc(machine(r)))
        .append(".</p>\n");
    h.append(
            "<p><code>/login</code> never calls the upstream, yet in <b>shared</b> mode it waits "
                + "behind the chats for the server's slots. In <b>bulkhead</b> mode the upstream has its own "
                + "compartment: ")
        .append(s.llmLimit())
        .append(" calls run, ")
        .append(s.llmQueue())
        .append(" wait at most ")
        .append(esc(Durations.format(s.llmWait())))
        .append(
            ", the rest get a fast <code>503</code> with <code>Retry-After</code>, so the "
                + "flood stays in one compartment and logins walk straight in.</p>\n");
    htmlTable(h, r);
    h.append("<h2>Every request: when it was answered, and how long it took</h2>\n")
        .append(
            "<p class=\"note\">One dot per request. Horizontal: seconds since the chats were "
                + "sent; vertical: latency, logarithmic. Both charts share their axes. Hover a dot "
                + "for its numbers.</p>\n");
    chart(h, r.shared(), s, xMax, yMaxMs);
    chart(h, r.bulkhead(), s, xMax, yMaxMs);
    ModeResult.LimitTrace trace = r.bulkhead().llmLimit();
    if (trace != null) {
      limitChart(h, trace, s, xMax);
    }
    h.append(
        "<p class=\"note\">Latencies are recorded per request from sending to the last byte "
            + "of the answer and summarised with HdrHistogram (3 significant digits). "
            + "<code>java -jar bulkhead-demo.jar demo --json</code> prints the same numbers as JSON."
            + "</p>\n</body>\n</html>\n");
    return h.toString();
  }

  private static void htmlTable(StringBuilder h, ExperimentResult r) {
    LoadResult s = r.shared().load();
    LoadResult b = r.bulkhead().load();
    h.append("<table>\n<tr><th></th><th>shared</th><th>bulkhead</th></tr>\n");
    tr(h, "login p50", ms(s.login().p50Ms()), ms(b.login().p50Ms()), false);
    tr(h, "login p99", ms(s.login().p99Ms()), ms(b.login().p99Ms()), true);
    tr(h, "login max", ms(s.login().maxMs()), ms(b.login().maxMs()), false);
    tr(h, "chat 200", count(s.chatOk()), count(b.chatOk()), true);
    tr(h, "chat 503", count(s.chatRejected()), count(b.chatRejected()), true);
    tr(h, "chat other", count(s.chatOther()), count(b.chatOther()), false);
    tr(h, "503 p50", ms(s.rejected().p50Ms()), ms(b.rejected().p50Ms()), false);
    tr(h, "503 p99", ms(s.rejected().p99Ms()), ms(b.rejected().p99Ms()), false);
    tr(h, "wall time", ms(s.wallMs()), ms(b.wallMs()), false);
    tr(
        h,
        "upstream connections (max open)",
        count(r.shared().upstreamMaxConnections()),
        count(r.bulkhead().upstreamMaxConnections()),
        false);
    h.append("</table>\n");
  }

  private static void tr(StringBuilder h, String label, String a, String b, boolean key) {
    h.append(key ? "<tr class=\"key\">" : "<tr>")
        .append("<td>")
        .append(esc(label))
        .append("</td><td>")
        .append(esc(a))
        .append("</td><td>")
        .append(esc(b))
        .append("</td></tr>\n");
  }

  private static void chart(
      StringBuilder h, ModeResult m, DemoSettings s, double xMax, double yMaxMs) {
    double yMinMs = 0.1;
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;
    LoadResult load = m.load();
    h.append(
        Svg.open(
            WIDTH,
            HEIGHT,
            m.mode().label() + " mode latency chart",
            " font-family=\"system-ui,sans-serif\" font-size=\"12\""));
    h.append("<text x=\"")
        .append(LEFT)
        .append("\" y=\"20\" font-size=\"14\" font-weight=\"600\">")
        .append(m.mode().label())
        .append(" mode: login p99 ")
        .append(esc(ms(load.login().p99Ms())))
        .append("</text>\n");
    h.append(Svg.plotArea(LEFT, TOP, plotW, plotH));
    // Y grid: decades.
    for (double ms = 1; ms <= yMaxMs; ms *= 10) {
      double y = yFor(ms, yMinMs, yMaxMs, plotH);
      h.append(Svg.line(LEFT, y, LEFT + plotW, y, "#e5e7eb", ""))
          .append(text(LEFT - 8, y + 4, "end", decade(ms)));
    }
    h.append(
        text(16, TOP + plotH / 2.0, "middle", "latency")
            .replace("<text ", "<text transform=\"rotate(-90 16 " + (TOP + plotH / 2.0) + ")\" "));
    // X grid.
    double step = xMax <= 10 ? 1 : xMax <= 30 ? 5 : 10;
    for (double t = 0; t <= xMax + 1e-9; t += step) {
      double x = LEFT + t / xMax * plotW;
      h.append(Svg.line(x, TOP, x, TOP + plotH, "#eef0f3", ""))
          .append(text(x, TOP + plotH + 16, "middle", fmt(t) + " s"));
    }
    h.append(
        text(
            LEFT + plotW / 2.0,
            HEIGHT - 6,
            "middle",
            "answered at (seconds since the chats were sent)"));
    // Markers: the upstream delay and the login wave.
    double delayMs = s.delay().toNanos() / 1e6;
    if (delayMs >= yMinMs && delayMs <= yMaxMs) {
      double y = yFor(delayMs, yMinMs, yMaxMs, plotH);
      h.append("<line x1=\"")
          .append(LEFT)
          .append("\" y1=\"")
          .append(Svg.num(y))
          .append("\" x2=\"")
          .append(LEFT + plotW)
          .append("\" y2=\"")
          .append(Svg.num(y))
          .append("\" stroke=\"#8b949e\" stroke-dasharray=\"4 4\"/>\n")
          .append(text(LEFT + 6, y - 5, "start", "upstream delay"));
    }
    double loginX = LEFT + seconds(s.loginsAfter().toNanos()) / xMax * plotW;
    h.append("<line x1=\"")
        .append(Svg.num(loginX))
        .append("\" y1=\"")
        .append(TOP)
        .append("\" x2=\"")
        .append(Svg.num(loginX))
        .append("\" y2=\"")
        .append(TOP + plotH)
        .append("\" stroke=\"#2563eb\" stroke-opacity=\".35\" stroke-dasharray=\"2 3\"/>\n")
        .append(text(loginX + 4, HEIGHT - BOTTOM - 6, "start", "logins sent"));
    // Points.
    for (Sample sample : load.samples()) {
      double x = LEFT + Math.min(seconds(sample.answeredAtNanos()), xMax) / xMax * plotW;
      double latencyMs = sample.latencyNanos() / 1e6;
      double y = yFor(Math.max(latencyMs, yMinMs), yMinMs, yMaxMs, plotH);
      String kind = kind(sample);
      h.append("<circle cx=\"")
          .append(Svg.num(x))
          .append("\" cy=\"")
          .append(Svg.num(y))
          .append("\" r=\"3.5\" fill=\"")
          .append(color(kind))
          .append("\" fill-opacity=\".65\"><title>")
          .append(esc(kind))
          .append(", sent at ")
          .append(fmt(seconds(sample.sentAtNanos())))
          .append(" s, ")
          .append(esc(ms(latencyMs)))
          .append("</title></circle>\n");
    }
    legend(h, WIDTH - RIGHT - 316, 20);
    h.append("</svg>\n");
  }

  /** The adaptive llm limit over the bulkhead-mode run, as read from the compartment. */
  private static void limitChart(
      StringBuilder h, ModeResult.LimitTrace trace, DemoSettings s, double xMax) {
    h.append("<h2>The llm compartment's limit over the run</h2>\n")
        .append("<p class=\"note\">Bulkhead mode's llm compartment adapted its limit (")
        .append(esc(trace.controller()))
        .append(" controller, within [")
        .append(trace.min())
        .append(", ")
        .append(trace.max())
        .append("]): it moved ")
        .append(trace.changes())
        .append(trace.changes() == 1 ? " time" : " times")
        .append(trace.lastMove().isEmpty() ? "" : ", last because " + esc(trace.lastMove()))
        .append(
            ". Each dot is the limit read from the compartment when it was seen to move.</p>\n");
    double[] xs = new double[trace.points().size()];
    double[] ys = new double[xs.length];
    for (int i = 0; i < xs.length; i++) {
      xs[i] = trace.points().get(i).atMillis() / 1000.0;
      ys[i] = trace.points().get(i).limit();
    }
    h.append(
        new LineChart("llm limit", "s", xMax, trace.max() + Math.max(1, trace.max() / 10))
            .marker(seconds(s.loginsAfter().toNanos()), "logins sent")
            .series("llm limit (" + trace.controller() + ")", xs, ys)
            .svg());
  }

  /** One row, right of the title: dot and name for each kind of request. */
  private static void legend(StringBuilder h, int x, int y) {
    String[] kinds = {"login", "chat 200", "chat 503", "chat other"};
    int[] widths = {62, 82, 82, 90};
    int at = x;
    for (int i = 0; i < kinds.length; i++) {
      h.append("<circle cx=\"")
          .append(at + 4)
          .append("\" cy=\"")
          .append(y - 4)
          .append("\" r=\"4\" fill=\"")
          .append(color(kinds[i]))
          .append("\"/>")
          .append(text(at + 12, y, "start", kinds[i]));
      at += widths[i];
    }
  }

  private static String kind(Sample s) {
    if (s.route() == Route.LOGIN) {
      return "login";
    }
    return s.status() == 200 ? "chat 200" : s.status() == 503 ? "chat 503" : "chat other";
  }

  private static String color(String kind) {
    switch (kind) {
      case "login":
        return "#2563eb";
      case "chat 200":
        return "#16a34a";
      case "chat 503":
        return "#ea580c";
      default:
        return "#b91c1c";
    }
  }

  private static double yFor(double ms, double yMin, double yMax, int plotH) {
    double share = (Math.log10(ms) - Math.log10(yMin)) / (Math.log10(yMax) - Math.log10(yMin));
    return TOP + plotH - Math.max(0, Math.min(1, share)) * plotH;
  }

  private static String decade(double ms) {
    if (ms < 1000) {
      return fmt(ms) + " ms";
    }
    return fmt(ms / 1000) + " s";
  }

  private static double seconds(long nanos) {
    return nanos / 1e9;
  }

  private static double maxLatencyMs(LoadResult load) {
    double max = 0;
    for (Sample s : load.samples()) {
      max = Math.max(max, s.latencyNanos() / 1e6);
    }
    return max;
  }

  /** A round upper bound for the time axis: the next whole 1, 5 or 10 seconds above {@code v}. */
  private static double niceCeiling(double v) {
    double step = v <= 10 ? 1 : v <= 30 ? 5 : 10;
    return Math.max(step, Math.ceil(v / step) * step);
  }

  private static String fmt(double v) {
    return BigDecimal.valueOf(v)
        .setScale(v < 10 ? 2 : 0, java.math.RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  static String esc(String s) {
    return Svg.escape(s);
  }

  private static String text(double x, double y, String anchor, String content) {
    return Svg.text(x, y, anchor, "", esc(content));
  }
}
