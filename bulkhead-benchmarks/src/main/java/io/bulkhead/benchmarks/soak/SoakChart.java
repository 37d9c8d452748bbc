package io.bulkhead.benchmarks.soak;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.function.ToDoubleFunction;

/**
 * The soak's chart as a self-contained SVG, drawn like the peer experiment's: panels sharing the
 * time axis (minutes since the load started), one line per series, every value from the samples.
 */
final class SoakChart {

  private static final int WIDTH = 900;
  private static final int LEFT = 64;
  private static final int RIGHT = 150;
  private static final int PLOT_W = WIDTH - LEFT - RIGHT;
  private static final int TOP = 70;
  private static final int PLOT_H = 120;
  private static final int GAP = 64;
  private static final String INK = "#1f2328";
  private static final String MUTED = "#57606a";
  private static final String GRID = "#e5e7eb";
  private static final String[] COLORS = {"#2563eb", "#ea580c", "#16a34a", "#9333ea", "#0891b2"};
  private static final double MB = 1024 * 1024;
  private static final int SUBTITLE_CHARS = 120;

  private record Series(String label, double[] xs, double[] ys) {}

  private SoakChart() {}

  static String svg(SoakResult r) {
    double xMax = Math.max(1, r.options().duration.toNanos() / 60e9);
    List<List<Series>> panels = new ArrayList<>();
    List<String> titles = new ArrayList<>();
    titles.add("heap in use after each full GC (MB)");
    panels.add(
        List.of(
            samples(
                r, "heap", s -> s.heapAfterFullGc() < 0 ? Double.NaN : s.heapAfterFullGc() / MB)));
    titles.add("live threads (whole process)");
    panels.add(List.of(samples(r, "threads", SoakResult.Sample::threads)));
    titles.add("open file descriptors (whole process)");
    panels.add(List.of(samples(r, "fds", SoakResult.Sample::fileDescriptors)));
    titles.add("slots in flight per compartment");
    List<Series> slots = new ArrayList<>();
    for (String name : r.compartmentNames()) {
      slots.add(samples(r, name, s -> s.inFlight().get(name)));
    }
    panels.add(slots);
    titles.add("p99 per minute, from when each call was due (ms)");
    List<Series> p99 = new ArrayList<>();
    for (int w = 0; w < 3; w++) { // login, chat, checkout; reports are seconds long
      int index = w;
      double[] xs = new double[r.minutes().size()];
      double[] ys = new double[xs.length];
      for (int i = 0; i < xs.length; i++) {
        SoakResult.Minute m = r.minutes().get(i);
        xs[i] = m.endSeconds() / 60;
        ys[i] = m.workloads().get(index).p99Ms();
      }
      p99.add(new Series(SoakResult.label(w), xs, ys));
    }
    panels.add(p99);

    int height = TOP + panels.size() * (PLOT_H + GAP) + 10;
    StringBuilder h = new StringBuilder(64 * 1024);
    h.append("<svg xmlns=\"http://www.w3.org/2000/svg\" width=\"")
        .append(WIDTH)
        .append("\" height=\"")
        .append(height)
        .append("\" viewBox=\"0 0 ")
        .append(WIDTH)
        .append(' ')
        .append(height)
        .append(
            "\" font-family=\"system-ui,-apple-system,Segoe UI,"
                + "Roboto,sans-serif\" font-size=\"12\" role=\"img\" aria-label=\"Heap after full GC,"
                + " threads, file descriptors, slots in flight and p99 over the soak\">\n");
    h.append("<rect width=\"100%\" height=\"100%\" fill=\"#ffffff\"/>\n");
    h.append(
        text(
            LEFT,
            24,
            "start",
            INK,
            "15",
            "600",
            "Soak: does anything grow under long mixed load?"));
    // The setup in two lines at most: one would run past the right edge.
    String setup = r.options().describe() + ".";
    int cut = setup.lastIndexOf(' ', SUBTITLE_CHARS);
    if (setup.length() <= SUBTITLE_CHARS || cut < 0) {
      h.append(text(LEFT, 44, "start", MUTED, "12", "400", setup));
    } else {
      h.append(text(LEFT, 42, "start", MUTED, "12", "400", setup.substring(0, cut)));
      h.append(text(LEFT, 57, "start", MUTED, "12", "400", setup.substring(cut + 1)));
    }
    for (int p = 0; p < panels.size(); p++) {
      panel(h, TOP + 20 + p * (PLOT_H + GAP), xMax, titles.get(p), panels.get(p));
    }
    h.append("</svg>\n");
    return h.toString();
  }

  private static Series samples(
      SoakResult r, String label, ToDoubleFunction<SoakResult.Sample> value) {
    double[] xs = new double[r.samples().size()];
    double[] ys = new double[xs.length];
    for (int i = 0; i < xs.length; i++) {
      SoakResult.Sample s = r.samples().get(i);
      xs[i] = s.atSeconds() / 60;
      ys[i] = value.applyAsDouble(s);
    }
    return new Series(label, xs, ys);
  }

  private static void panel(
      StringBuilder h, int top, double xMax, String title, List<Series> series) {
    double peak = 0;
    for (Series s : series) {
      for (double y : s.ys()) {
        if (!Double.isNaN(y)) {
          peak = Math.max(peak, y);
        }
      }
    }
    double yStep = niceStep(peak);
    double yMax = Math.max(yStep, Math.ceil(peak * 1.1 / yStep) * yStep);
    h.append(text(LEFT, top - 10, "start", INK, "13", "600", title));
    h.append("<rect x=\"")
        .append(LEFT)
        .append("\" y=\"")
        .append(top)
        .append("\" width=\"")
        .append(PLOT_W)
        .append("\" height=\"")
        .append(PLOT_H)
        .append("\" fill=\"#fbfbfc\" stroke=\"#d0d7de\"/>\n");
    for (double v = 0; v <= yMax + 1e-9; v += yStep) {
      double y = top + PLOT_H - v / yMax * PLOT_H;
      h.append(line(LEFT, y, LEFT + PLOT_W, y, GRID));
      h.append(text(LEFT - 8, y + 4, "end", MUTED, "11", "400", num(v)));
    }
    double xStep = xMax <= 2 ? 0.5 : xMax <= 12 ? 1 : xMax <= 60 ? 5 : 30;
    for (double t = 0; t <= xMax + 1e-9; t += xStep) {
      double x = LEFT + t / xMax * PLOT_W;
      h.append(line(x, top, x, top + PLOT_H, "#eef0f3"));
      h.append(text(x, top + PLOT_H + 15, "middle", MUTED, "11", "400", num(t) + " min"));
    }
    for (int i = 0; i < series.size(); i++) {
      Series s = series.get(i);
      String color = COLORS[i % COLORS.length];
      StringBuilder d = new StringBuilder();
      for (int k = 0; k < s.xs().length; k++) {
        if (Double.isNaN(s.ys()[k])) {
          continue;
        }
        double x = LEFT + Math.min(s.xs()[k], xMax) / xMax * PLOT_W;
        double y = top + PLOT_H - Math.min(s.ys()[k], yMax) / yMax * PLOT_H;
        d.append(d.length() == 0 ? "M" : " L").append(f(x)).append(' ').append(f(y));
      }
      h.append("<path fill=\"none\" stroke=\"")
          .append(color)
          .append("\" stroke-width=\"2\" stroke-linejoin=\"round\" d=\"")
          .append(d)
          .append("\"/>\n");
      double ly = top + 14 + i * 16;
      h.append(
          line(LEFT + PLOT_W + 10, ly - 4, LEFT + PLOT_W + 28, ly - 4, color)
              .replace("/>", " stroke-width=\"3\"/>"));
      h.append(text(LEFT + PLOT_W + 34, ly, "start", INK, "11", "400", s.label()));
    }
  }

  /** 1, 2 or 5 times a power of ten, giving four to ten grid lines up to {@code peak}. */
  private static double niceStep(double peak) {
    if (peak <= 0) {
      return 1;
    }
    double raw = peak / 5;
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    double m = raw / power;
    double step = m <= 1 ? 1 : m <= 2 ? 2 : m <= 5 ? 5 : 10;
    return Math.max(step * power, 1e-3);
  }

  private static String line(double x1, double y1, double x2, double y2, String stroke) {
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
        + "\"/>\n";
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

  private static String num(double v) {
    return v == Math.rint(v) ? Long.toString((long) v) : String.format(Locale.ROOT, "%.2g", v);
  }

  private static String esc(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }
}
