package io.bulkhead.benchmarks.peer;

import io.bulkhead.scenarios.DemoSettings;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.util.List;
import java.util.Locale;
import java.util.function.ToIntFunction;

/**
 * The experiment's chart as a self-contained SVG: two panels sharing the time axis, one line per
 * variant in each. Above, the server slots held by chats waiting for their guard's verdict; below,
 * the requests queued for a server slot. Every value is drawn from the sampled timelines.
 */
final class PeerChart {

  private static final int WIDTH = 900;
  private static final int LEFT = 64;
  private static final int RIGHT = 24;
  private static final int PLOT_W = WIDTH - LEFT - RIGHT;
  private static final int TOP_1 = 124;
  private static final int PLOT_H_1 = 200;
  private static final int TOP_2 = TOP_1 + PLOT_H_1 + 84;
  private static final int PLOT_H_2 = 150;
  private static final int HEIGHT = TOP_2 + PLOT_H_2 + 70;

  private static final String INK = "#1f2328";
  private static final String MUTED = "#57606a";
  private static final String GRID = "#e5e7eb";

  private PeerChart() {}

  static String color(Variant v) {
    return v == Variant.BULKHEAD ? "#2563eb" : "#ea580c";
  }

  static String svg(PeerResult r) {
    DemoSettings s = r.settings();
    double xMax = r.chartEndNanos() / 1e9;
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(HEIGHT)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(HEIGHT)
        .append(
            "\" font-family=\"system-ui,-apple-system,Segoe UI,"
                + "Roboto,sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"Server slots held by "
                + "waiting chats, and requests queued for a server slot, over time\">\n");
    h.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    h.append(
        text(
            LEFT,
            24,
            "start",
            INK,
            "15",
            "600",
            "One slow upstream: what chats waiting for it hold"));
    h.append(
        text(
            LEFT,
            44,
            "start",
            MUTED,
            "12",
            "400",
            PeerReport.duration(s.delay())
                + " upstream; "
                + s.chats()
                + " /chat at once, "
                + s.logins()
                + " /login "
                + PeerReport.duration(s.loginsAfter())
                + " later; server cap "
                + s.serverLimit()
                + " slots, unbounded queue; sampled every "
                + PeerReport.duration(r.sampleEvery())
                + "."));
    legend(h, r, LEFT, 68);

    // Panel 1: server slots held by waiting chats, on the scale of the whole server cap.
    int y1Max = s.serverLimit();
    panel(
        h,
        r,
        TOP_1,
        PLOT_H_1,
        xMax,
        y1Max,
        Timeline.Point::chatsWaiting,
        "server slots held by chats waiting for the chat guard");
    hline(
        h,
        TOP_1,
        PLOT_H_1,
        y1Max,
        s.llmQueue(),
        Variant.BULKHEAD.title() + "'s queue bound: " + s.llmQueue());
    // Panel 2: requests queued for a server slot (chats and logins).
    int waitingPeak =
        Math.max(
            r.bulkhead().timeline().peak(Timeline.Point::serverWaiting),
            r.resilience4j().timeline().peak(Timeline.Point::serverWaiting));
    int y2Max = Math.max(10, ((waitingPeak + 9) / 10) * 10);
    panel(
        h,
        r,
        TOP_2,
        PLOT_H_2,
        xMax,
        y2Max,
        Timeline.Point::serverWaiting,
        "requests queued for a server slot (chats and logins)");
    h.append(
        text(
            LEFT + PLOT_W / 2.0,
            HEIGHT - 14,
            "middle",
            MUTED,
            "12",
            "400",
            "seconds since the chats were sent"));
    h.append("</svg>\n");
    return h.toString();
  }

  private static void panel(
      StringBuilder h,
      PeerResult r,
      int top,
      int plotH,
      double xMax,
      int yMax,
      ToIntFunction<Timeline.Point> what,
      String title) {
    h.append(text(LEFT, top - 10, "start", INK, "13", "600", title));
    h.append("<rect x=\"")
        .append(LEFT)
        .append("\" y=\"")
        .append(top)
        .append("\" width=\"")
        .append(PLOT_W)
        .append("\" height=\"")
        .append(plotH)
        .append("\" fill=\"#fbfbfc\" stroke=\"#d0d7de\"/>\n");
    int yStep = yMax <= 20 ? 5 : yMax <= 60 ? 10 : yMax <= 120 ? 20 : 50;
    for (int v = 0; v <= yMax; v += yStep) {
      double y = top + plotH - (double) v / yMax * plotH;
      h.append(line(LEFT, y, LEFT + PLOT_W, y, GRID, null));
      h.append(text(LEFT - 8, y + 4, "end", MUTED, "12", "400", Integer.toString(v)));
    }
    double xStep = xMax <= 5 ? 0.5 : xMax <= 12 ? 1 : xMax <= 40 ? 5 : 10;
    for (double t = 0; t <= xMax + 1e-9; t += xStep) {
      double x = LEFT + t / xMax * PLOT_W;
      h.append(line(x, top, x, top + plotH, "#eef0f3", null));
      h.append(text(x, top + plotH + 16, "middle", MUTED, "12", "400", fmt(t) + " s"));
    }
    double loginX =
        LEFT + Math.min(r.settings().loginsAfter().toNanos() / 1e9, xMax) / xMax * PLOT_W;
    h.append(line(loginX, top, loginX, top + plotH, "#6e7781", "2 3"));
    h.append(text(loginX + 4, top + plotH - 6, "start", MUTED, "11", "400", "logins sent"));
    for (VariantResult v : r.variants()) {
      h.append("<path fill=\"none\" stroke=\"")
          .append(color(v.variant()))
          .append("\" stroke-width=\"2\" stroke-linejoin=\"round\" d=\"")
          .append(steps(v.timeline().points(), what, top, plotH, xMax, yMax))
          .append("\"/>\n");
    }
  }

  /** A step line: each sample's value holds until the next sample. */
  private static String steps(
      List<Timeline.Point> points,
      ToIntFunction<Timeline.Point> what,
      int top,
      int plotH,
      double xMax,
      int yMax) {
    StringBuilder d = new StringBuilder();
    double limit = xMax * 1e9;
    for (int i = 0; i < points.size(); i++) {
      Timeline.Point p = points.get(i);
      if (p.atNanos() > limit) {
        break;
      }
      double x = LEFT + p.atNanos() / limit * PLOT_W;
      double y = top + plotH - Math.min(what.applyAsInt(p), yMax) / (double) yMax * plotH;
      if (i == 0) {
        d.append('M').append(f(x)).append(' ').append(f(y));
      } else {
        d.append(" H").append(f(x)).append(" V").append(f(y));
      }
    }
    return d.toString();
  }

  private static void hline(
      StringBuilder h, int top, int plotH, int yMax, int value, String label) {
    double y = top + plotH - (double) value / yMax * plotH;
    h.append(
        line(LEFT, y, LEFT + PLOT_W, y, color(Variant.BULKHEAD), "5 4")
            .replace("/>", " stroke-opacity=\".55\"/>"));
    h.append(text(LEFT + PLOT_W - 6, y - 5, "end", color(Variant.BULKHEAD), "11", "400", label));
  }

  /** One row per variant: its line, its name, and its two key figures. */
  private static void legend(StringBuilder h, PeerResult r, int x, int y) {
    int at = y;
    for (VariantResult v : r.variants()) {
      String label =
          v.variant().title()
              + ": peak "
              + v.timeline().peak(Timeline.Point::chatsWaiting)
              + " slots held by waiting chats, login p99 "
              + PeerReport.ms(v.load().login().p99Ms());
      h.append(
          line(x, at - 4, x + 22, at - 4, color(v.variant()), null)
              .replace("/>", " stroke-width=\"3\"/>"));
      h.append(text(x + 28, at, "start", INK, "12", "400", label));
      at += 18;
    }
  }

  private static String line(
      double x1, double y1, double x2, double y2, String stroke, String dash) {
    return "<line x1=\""
        + f(x1)
        + "\" y1=\""
        + f(y1)
        + "\" x2=\""
        + f(x2)
        + "\" y2=\""
        + f(y2)
        + "\" stroke=\""
        + stroke
        + "\""
        + (dash == null ? "" : " stroke-dasharray=\"" + dash + "\"")
        + "/>\n";
  }

  private static String text(
      double x, double y, String anchor, String fill, String size, String weight, String content) {
    return "<text x=\""
        + f(x)
        + "\" y=\""
        + f(y)
        + "\" text-anchor=\""
        + anchor
        + "\" fill=\""
        + fill
        + "\" font-size=\""
        + size
        + "\" font-weight=\""
        + weight
        + "\">"
        + esc(content)
        + "</text>\n";
  }

  private static String f(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  private static String fmt(double v) {
    return BigDecimal.valueOf(v)
        .setScale(1, RoundingMode.HALF_UP)
        .stripTrailingZeros()
        .toPlainString();
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
