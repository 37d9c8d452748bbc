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
   * Runs the command: prints {@link #report} to {@code out}, or one line naming the option to
   * {@code err}.
   *
   * @return {@link #OK}, or {@link #INVALID} for a value it cannot read
   */
  public static int run(String rate, String latency, String headroom, String limit, PrintWriter out,
      PrintWriter err) {
    try {
      out.print(report(rate, latency, headroom, limit));
      return OK;
    } catch (IllegalArgumentException e) {
      err.println("size: " + e.getMessage());
      return INVALID;
    } finally {
      out.flush();
      err.flush();
    }
  }

  /**
   * Returns what the command prints, one line per figure.
   *
   * @param rate the arrival rate, like {@code 40/s} or {@code 2400/min}
   * @param latency how long one call holds its slot, like {@code 50ms} or {@code 1.5s}
   * @param headroom the factor above the need, like {@code 3} or {@code 4/3}; null for both defaults
   * @param limit an existing limit to compare with; null for none
   * @throws IllegalArgumentException with a message that starts with the option it is about, such as
   *     {@code --rate: expected a rate with a unit, like 40/s, ...}
   */
  public static String report(String rate, String latency, String headroom, String limit) {
    double perSecond = option("--rate", rate, Quantities::ratePerSecond);
    Duration took = option("--latency", latency, Quantities::duration);
    Headroom factor = headroom == null ? null : option("--headroom", headroom, Headroom::parse);
    int existing = 0;
    if (limit != null) {
      long l = option("--limit", limit, Quantities::whole);
      if (l < 1 || l > Integer.MAX_VALUE) {
        throw new IllegalArgumentException("--limit: must be at least 1 but was " + limit.trim());
      }
      existing = (int) l;
    }
    double need = option("--rate/--latency", rate, ignored -> Sizing.need(perSecond, took));
    String needText = Quantities.number(need);
    StringBuilder out = new StringBuilder();
    out.append("need      ").append(needText).append(" call").append(need == 1 ? "" : "s")
        .append(" in flight (").append(Quantities.rate(perSecond)).append(" x ")
        .append(Quantities.duration(took)).append(")\n");
    if (factor != null) {
      Headroom f = factor;
      int l = option("--headroom", headroom, ignored -> f.limitFor(need));
      String product = Quantities.number(need * factor.factor());
      out.append("headroom  ").append(factor).append('\n');
      out.append("limit     ").append(l).append(" (").append(needText).append(" x ")
          .append(factor.toString().substring(1)).append(" = ").append(product)
          .append(product.equals(Integer.toString(l)) ? "" : ", rounded up").append(")\n");
    } else {
      out.append("limit     ");
      boolean first = true;
      for (Criticality c : Criticality.values()) {
        if (!first) {
          out.append(", ");
        }
        first = false;
        int l = option("--rate/--latency", rate, ignored -> c.defaultHeadroom().limitFor(need));
        out.append(l).append(" if ").append(c.key()).append(" (").append(c.defaultHeadroom()).append(')');
      }
      out.append('\n');
    }
    if (existing > 0) {
      out.append(whatIf(existing, need)).append('\n');
    }
    return out.toString();
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
    if (text == null) {
      throw new IllegalArgumentException(name + ": missing");
    }
    try {
      return parser.parse(text);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(name + ": " + e.getMessage(), e);
    }
  }
}
