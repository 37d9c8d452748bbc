package io.bulkhead.config;

import io.bulkhead.Sizing;
import java.io.PrintWriter;
import java.time.Duration;

/**
 * The {@code size --rate 40/s --latency 50ms --headroom 3} command: Little's law on the command line.
 * It prints the need ({@code rate × latency}) and the limit ({@code need × headroom}, rounded up):
 *
 * <pre>
 * need      2 calls in flight (40/s x 50ms)
 * headroom  x3
 * limit     6 (2 x 3 = 6)
 * </pre>
 *
 * <p>Without a headroom it prints the limit for both criticalities. With {@code --limit} it also says
 * what an existing limit does at that rate: the what-if of a dependency that slows down, where the
 * limit keeps the damage in its compartment by rejecting what does not fit.
 *
 * <p>Exit codes: 0, or 2 for input it cannot read, with one line on the error stream naming the
 * option.
 */
public final class SizeCommand {

  /** The sizing was printed. */
  public static final int OK = 0;
  /** An option's value could not be read. */
  public static final int INVALID = 2;

  private SizeCommand() {}

  /**
   * Runs the command.
   *
   * @param rate the arrival rate, like {@code 40/s} or {@code 2400/min}
   * @param latency how long one call holds its slot, like {@code 50ms} or {@code 1.5s}
   * @param headroom the factor above the need, like {@code 3} or {@code 4/3}; null for both defaults
   * @param limit an existing limit to compare with; null for none
   */
  public static int run(String rate, String latency, String headroom, String limit, PrintWriter out,
      PrintWriter err) {
    try {
      return size(rate, latency, headroom, limit, out, err);
    } finally {
      out.flush();
      err.flush();
    }
  }

  private static int size(String rate, String latency, String headroom, String limit, PrintWriter out,
      PrintWriter err) {
    double perSecond;
    Duration took;
    Headroom factor = null;
    int existing = 0;
    double need;
    try {
      perSecond = option("--rate", rate, Quantities::ratePerSecond);
      took = option("--latency", latency, Quantities::duration);
      if (headroom != null) {
        factor = option("--headroom", headroom, Headroom::parse);
      }
      if (limit != null) {
        long l = option("--limit", limit, Quantities::whole);
        if (l < 1 || l > Integer.MAX_VALUE) {
          throw new IllegalArgumentException("--limit: must be at least 1 but was " + limit);
        }
        existing = (int) l;
      }
      need = option("--rate/--latency", null, ignored -> Sizing.need(perSecond, took));
    } catch (IllegalArgumentException e) {
      err.println("size: " + e.getMessage());
      return INVALID;
    }
    String needText = Quantities.number(need);
    out.println("need      " + needText + " call" + (need == 1 ? "" : "s") + " in flight ("
        + Quantities.rate(perSecond) + " x " + Quantities.duration(took) + ")");
    if (factor != null) {
      int l;
      try {
        l = factor.limitFor(need);
      } catch (IllegalArgumentException e) {
        err.println("size: " + e.getMessage());
        return INVALID;
      }
      out.println("headroom  " + factor);
      double exact = need * factor.factor();
      String product = Quantities.number(exact);
      out.println("limit     " + l + " (" + needText + " x " + factor.toString().substring(1) + " = "
          + product + (product.equals(Integer.toString(l)) ? "" : ", rounded up") + ")");
    } else {
      StringBuilder sb = new StringBuilder("limit     ");
      boolean first = true;
      for (Criticality c : Criticality.values()) {
        if (!first) {
          sb.append(", ");
        }
        first = false;
        sb.append(c.defaultHeadroom().limitFor(need)).append(" if ").append(c.key()).append(" (")
            .append(c.defaultHeadroom()).append(')');
      }
      out.println(sb);
    }
    if (existing > 0) {
      out.println(whatIf(existing, need));
    }
    return OK;
  }

  private static String whatIf(int limit, double need) {
    String needText = Quantities.number(need);
    if (limit >= need) {
      return "with limit " + limit + ": room for the need of " + needText + " (x"
          + Quantities.number(limit / need) + ")";
    }
    long admitted = Math.round(100.0 * limit / need);
    return "with limit " + limit + ": at most " + limit + " of the " + needText + " calls it needs are"
        + " in flight; about " + admitted + "% of calls are admitted and " + (100 - admitted)
        + "% rejected at once, and other compartments keep their slots";
  }

  private interface Parser<T> {
    T parse(String text);
  }

  private static <T> T option(String name, String text, Parser<T> parser) {
    if (text == null && !name.contains("/")) {
      throw new IllegalArgumentException(name + ": missing");
    }
    try {
      return parser.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }
}
