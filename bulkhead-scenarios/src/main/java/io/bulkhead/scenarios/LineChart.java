package io.bulkhead.scenarios;

import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * A self-contained SVG chart of values that hold until they change (a compartment's limit over
 * time): one step line per series, vertical markers with labels, axes from zero. Shared by the
 * demo's HTML report and the adaptive side-by-side benchmark's {@code limits.svg}.
 *
 * <pre>{@code
 * String svg = new LineChart("llm limit", "s", 12.0, 20)
 *     .marker(1.0, "logins sent")
 *     .series("gradient", new double[] {0, 3.2}, new double[] {10, 12})
 *     .svg();
 * }</pre>
 *
 * <p>Each series is drawn as a {@code <polyline>} with a {@code data-series} attribute naming it
 * and one {@code <circle>} per point carrying the point's own numbers in its {@code <title>}.
 */
public final class LineChart {

  private static final int WIDTH = 900;
  private static final int HEIGHT = 300;
  private static final int LEFT = 56;
  private static final int RIGHT = 24;
  private static final int TOP = 34;
  private static final int BOTTOM = 44;
  private static final String[] COLOURS = {
    "#444444", "#1f77b4", "#2ca02c", "#d62728", "#ff7f0e", "#9467bd"
  };

  private record Series(String name, double[] xs, double[] ys) {}

  private record Marker(double x, String label) {}

  private final String title;
  private final String xUnit;
  private final double xMax;
  private final double yMax;
  private final List<Series> series = new ArrayList<>();
  private final List<Marker> markers = new ArrayList<>();

  /**
   * @param title the chart's heading and accessible name
   * @param xUnit the horizontal unit, after each tick ("s")
   * @param xMax the right end of the horizontal axis, above zero
   * @param yMax the top of the vertical axis, above zero
   */
  public LineChart(String title, String xUnit, double xMax, double yMax) {
    if (!(xMax > 0) || !(yMax > 0)) {
      throw new IllegalArgumentException(
          "chart axes must end above zero but were x " + xMax + ", y " + yMax);
    }
    this.title = title;
    this.xUnit = xUnit;
    this.xMax = xMax;
    this.yMax = yMax;
  }

  /** A labelled vertical line at {@code x}. */
  public LineChart marker(double x, String label) {
    markers.add(new Marker(x, label));
    return this;
  }

  /** A series: the value {@code ys[i]} from {@code xs[i]} until the next point. */
  public LineChart series(String name, double[] xs, double[] ys) {
    if (xs.length != ys.length) {
      throw new IllegalArgumentException(
          "series '" + name + "' has " + xs.length + " times but " + ys.length + " values");
    }
    series.add(new Series(name, xs.clone(), ys.clone()));
    return this;
  }

  /** The chart as an {@code <svg>} element. */
  public String svg() {
    int plotW = WIDTH - LEFT - RIGHT;
    int plotH = HEIGHT - TOP - BOTTOM;
    StringBuilder h = new StringBuilder(4096);
    h.append(
        Svg.open(WIDTH, HEIGHT, title, " font-family=\"system-ui,sans-serif\" font-size=\"12\""));
    h.append(Svg.text(LEFT, 20, "start", "font-weight=\"600\" ", Svg.escape(title)));
    h.append(Svg.plotArea(LEFT, TOP, plotW, plotH));
    double yStep = step(yMax);
    for (double v = 0; v <= yMax + 1e-9; v += yStep) {
      double y = y(v, plotH);
      h.append(Svg.line(LEFT, y, LEFT + plotW, y, "#e5e7eb", ""))
          .append(Svg.text(LEFT - 8, y + 4, "end", "", Svg.escape(number(v))));
    }
    double xStep = step(xMax);
    for (double t = 0; t <= xMax + 1e-9; t += xStep) {
      double x = x(t, plotW);
      h.append(Svg.line(x, TOP, x, TOP + plotH, "#eef0f3", ""))
          .append(Svg.text(x, TOP + plotH + 16, "middle", "", Svg.escape(number(t) + " " + xUnit)));
    }
    for (Marker m : markers) {
      double x = x(m.x(), plotW);
      h.append(Svg.line(x, TOP, x, TOP + plotH, "#8b949e", " stroke-dasharray=\"4 4\""))
          .append(Svg.text(x + 4, TOP + 12, "start", "", Svg.escape(m.label())));
    }
    for (int i = 0; i < series.size(); i++) {
      Series s = series.get(i);
      String colour = COLOURS[i % COLOURS.length];
      StringBuilder points = new StringBuilder();
      for (int p = 0; p < s.xs().length; p++) {
        double x = x(s.xs()[p], plotW);
        if (p > 0) { // hold the previous value until this point: a step
          points
              .append(Svg.num(x))
              .append(',')
              .append(Svg.num(y(s.ys()[p - 1], plotH)))
              .append(' ');
        }
        points.append(Svg.num(x)).append(',').append(Svg.num(y(s.ys()[p], plotH))).append(' ');
      }
      h.append("<polyline data-series=\"")
          .append(Svg.escape(s.name()))
          .append("\" fill=\"none\" stroke-width=\"1.5\" stroke=\"")
          .append(colour)
          .append("\" points=\"")
          .append(points.toString().strip())
          .append("\"/>\n");
      for (int p = 0; p < s.xs().length; p++) {
        h.append("<circle cx=\"")
            .append(Svg.num(x(s.xs()[p], plotW)))
            .append("\" cy=\"")
            .append(Svg.num(y(s.ys()[p], plotH)))
            .append("\" r=\"2.5\" fill=\"")
            .append(colour)
            .append("\"><title>")
            .append(Svg.escape(s.name()))
            .append(": ")
            .append(number(s.ys()[p]))
            .append(" at ")
            .append(number(s.xs()[p]))
            .append(' ')
            .append(Svg.escape(xUnit))
            .append("</title></circle>\n");
      }
      h.append(
          Svg.text(LEFT + i * 170, HEIGHT - 8, "start", "", Svg.escape(s.name()))
              .replace("fill=\"#57606a\"", "fill=\"" + colour + "\""));
    }
    return h.append("</svg>\n").toString();
  }

  private double x(double v, int plotW) {
    return LEFT + Math.max(0, Math.min(v, xMax)) / xMax * plotW;
  }

  private double y(double v, int plotH) {
    return TOP + plotH - Math.max(0, Math.min(v, yMax)) / yMax * plotH;
  }

  /** A tick step of 1, 2 or 5 times a power of ten giving at most about ten ticks. */
  static double step(double max) {
    double raw = max / 10;
    double power = Math.pow(10, Math.floor(Math.log10(raw)));
    for (double m : new double[] {1, 2, 5, 10}) {
      if (m * power >= raw) {
        return m * power;
      }
    }
    return 10 * power;
  }

  private static String number(double v) {
    return v == Math.rint(v)
        ? Long.toString((long) v)
        : String.format(Locale.ROOT, "%.3f", v).replaceAll("\\.?0+$", "");
  }
}
