package io.bulkhead.scenarios;

import java.util.Locale;

/**
 * The few SVG elements the demo's charts draw (the reports' latency plots, {@link LineChart}), as
 * text: coordinates with one decimal, the reports' grey for labels, and one HTML escape for
 * whatever a chart takes from a name or a title.
 */
public final class Svg {

  private Svg() {}

  /** {@code s} safe inside HTML or SVG text and double-quoted attributes. */
  public static String escape(String s) {
    return s.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace("\"", "&quot;");
  }

  /**
   * The opening tag of a chart of {@code width} × {@code height}, labelled {@code label} for screen
   * readers (escaped here); {@code extra} is more attributes, each led by a space, or empty.
   */
  public static String open(int width, int height, String label, String extra) {
    return "<svg xmlns=\"http://www.w3.org/2000/svg\" width=\""
        + width
        + "\" height=\""
        + height
        + "\" viewBox=\"0 0 "
        + width
        + ' '
        + height
        + "\" role=\"img\" aria-label=\""
        + escape(label)
        + "\""
        + extra
        + ">\n";
  }

  /** The plot's background: a light rectangle with a grey border. */
  public static String plotArea(int left, int top, int width, int height) {
    return "<rect x=\""
        + left
        + "\" y=\""
        + top
        + "\" width=\""
        + width
        + "\" height=\""
        + height
        + "\" fill=\"#fbfbfc\" stroke=\"#d0d7de\"/>\n";
  }

  /** A coordinate or length: one decimal, a dot whatever the locale. */
  public static String num(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  /** A line; {@code extra} is more attributes, each led by a space, or empty. */
  public static String line(
      double x1, double y1, double x2, double y2, String stroke, String extra) {
    return "<line x1=\""
        + num(x1)
        + "\" y1=\""
        + num(y1)
        + "\" x2=\""
        + num(x2)
        + "\" y2=\""
        + num(y2)
        + "\" stroke=\""
        + stroke
        + "\""
        + extra
        + "/>\n";
  }

  /**
   * A grey label; {@code extra} is more attributes, each followed by a space, or empty; {@code
   * markup} goes in as it is (escape what came from outside).
   */
  public static String text(double x, double y, String anchor, String extra, String markup) {
    return "<text x=\""
        + num(x)
        + "\" y=\""
        + num(y)
        + "\" text-anchor=\""
        + anchor
        + "\" "
        + extra
        + "fill=\"#57606a\">"
        + markup
        + "</text>\n";
  }
}
