package io.bulkhead.benchmarks.soak;

import java.util.List;
import java.util.Locale;

/**
 * Whether a series is flat: the least-squares line through its points (after the warm-up), and
 * whether the rise of that line over the span exceeds a tolerance (an absolute floor, or a fraction
 * of the series' mean, whichever is larger). The tolerance is the noise a healthy series shows: a
 * heap that wobbles by a few megabytes between full collections, a pool's thread that idles out.
 *
 * @param slopePerMinute the fitted line's slope, in the series' unit per minute
 * @param rise the fitted line's rise from the first point to the last
 * @param tolerance the largest rise still called flat
 * @param first the first point's value, and {@code last} the last one's: a step early in the run (a
 *     pool filling once) and a steady climb can have the same slope, not the same shape
 */
record Trend(
    String series,
    String unit,
    int points,
    double mean,
    double slopePerMinute,
    double rise,
    double tolerance,
    double first,
    double last) {

  static Trend fit(
      String series, String unit, List<double[]> minuteAndValue, double absolute, double relative) {
    int n = minuteAndValue.size();
    double sx = 0;
    double sy = 0;
    for (double[] p : minuteAndValue) {
      sx += p[0];
      sy += p[1];
    }
    double mx = n == 0 ? 0 : sx / n;
    double my = n == 0 ? 0 : sy / n;
    double sxy = 0;
    double sxx = 0;
    for (double[] p : minuteAndValue) {
      sxy += (p[0] - mx) * (p[1] - my);
      sxx += (p[0] - mx) * (p[0] - mx);
    }
    double slope = sxx == 0 ? 0 : sxy / sxx;
    double span = n < 2 ? 0 : minuteAndValue.get(n - 1)[0] - minuteAndValue.get(0)[0];
    return new Trend(
        series,
        unit,
        n,
        my,
        slope,
        slope * span,
        Math.max(absolute, relative * Math.abs(my)),
        n == 0 ? Double.NaN : minuteAndValue.get(0)[1],
        n == 0 ? Double.NaN : minuteAndValue.get(n - 1)[1]);
  }

  boolean flat() {
    return Math.abs(rise) <= tolerance;
  }

  String verdict() {
    if (points < 3) {
      return "too few points to judge (" + points + ")";
    }
    String fitted =
        String.format(
            Locale.ROOT,
            "slope %+.3g %s/min, rise %+.3g %s over the run",
            slopePerMinute,
            unit,
            rise,
            unit);
    if (flat()) {
      return String.format(
          Locale.ROOT, "**flat** (%s; tolerance ±%.3g %s)", fitted, tolerance, unit);
    }
    return String.format(
        Locale.ROOT,
        "**%s** (%s; tolerance ±%.3g %s)",
        rise > 0 ? "growing" : "falling",
        fitted,
        tolerance,
        unit);
  }
}
