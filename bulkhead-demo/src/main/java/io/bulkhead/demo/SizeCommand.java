package io.bulkhead.demo;

import io.bulkhead.Sizing;
import io.bulkhead.config.Criticality;
import io.bulkhead.config.Headroom;
import io.bulkhead.config.Quantities;
import java.time.Duration;
import java.util.concurrent.Callable;
import java.util.function.Supplier;
import picocli.CommandLine.Command;
import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.Option;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;
import picocli.CommandLine.TypeConversionException;

/**
 * {@code size --rate 40/s --latency 50ms --headroom 3}: Little's law on the command line, with
 * {@link Sizing}'s arithmetic and bulkhead-config's headrooms. It prints the need ({@code rate ×
 * latency}) and the limit ({@code need × headroom}, rounded up):
 *
 * <pre>
 * need      2 calls in flight (40/s x 50ms)
 * headroom  x3
 * limit     6 (2 x 3 = 6)
 * </pre>
 *
 * <p>Without a headroom it prints the limit for both criticalities. With {@code --limit} it also
 * says what an existing limit does at that rate: the what-if of a dependency that slows down, where
 * the limit keeps the damage in its compartment by rejecting what does not fit.
 */
@Command(
    name = "size",
    mixinStandardHelpOptions = true,
    header = "Little's law: the need of a compartment and the limit to give it.",
    description =
        "Prints the need (rate x latency: the calls in flight on average) and the limit "
            + "(need x headroom, rounded up). Without --headroom, the limit for a critical path (x3) and "
            + "an optional one (x4/3). With --limit, what that limit does at this rate.")
final class SizeCommand implements Callable<Integer> {

  @Spec private CommandSpec spec;

  @Option(
      names = "--rate",
      required = true,
      paramLabel = "RATE",
      converter = RateConverter.class,
      description = "Arrivals, e.g. 40/s, 2400/min or 3/h.")
  double ratePerSecond;

  @Option(
      names = "--latency",
      required = true,
      paramLabel = "DURATION",
      description = "How long one call holds its slot, e.g. 50ms, 1.5s, 30s or PT30S.")
  Duration latency;

  @Option(
      names = "--headroom",
      paramLabel = "FACTOR",
      converter = HeadroomConverter.class,
      description = "The factor above the need, e.g. 3, 1.5 or 4/3 (a third above).")
  Headroom headroom;

  @Option(
      names = "--limit",
      paramLabel = "N",
      description = "An existing limit to compare with the need (a what-if).")
  Integer limit;

  @Override
  public Integer call() {
    if (limit != null && limit < 1) {
      throw new ParameterException(
          spec.commandLine(), "--limit: must be at least 1 but was " + limit);
    }
    double need = usage("--rate/--latency", () -> Sizing.need(ratePerSecond, latency));
    String needText = Quantities.formatNumber(need);
    StringBuilder out = new StringBuilder();
    out.append("need      ")
        .append(needText)
        .append(" call")
        .append(need == 1 ? "" : "s")
        .append(" in flight (")
        .append(Quantities.formatRate(ratePerSecond))
        .append(" x ")
        .append(Quantities.formatDuration(latency))
        .append(")\n");
    if (headroom != null) {
      int l = usage("--headroom", () -> headroom.limitFor(need));
      String product = Quantities.formatNumber(need * headroom.factor());
      out.append("headroom  ").append(headroom).append('\n');
      out.append("limit     ")
          .append(l)
          .append(" (")
          .append(needText)
          .append(" x ")
          .append(headroom.toString().substring(1))
          .append(" = ")
          .append(product)
          .append(product.equals(Integer.toString(l)) ? "" : ", rounded up")
          .append(")\n");
    } else {
      out.append("limit     ");
      String separator = "";
      for (Criticality c : Criticality.values()) {
        int l = usage("--rate/--latency", () -> c.defaultHeadroom().limitFor(need));
        out.append(separator)
            .append(l)
            .append(" if ")
            .append(c.key())
            .append(" (")
            .append(c.defaultHeadroom())
            .append(')');
        separator = ", ";
      }
      out.append('\n');
    }
    if (limit != null) {
      out.append(whatIf(limit, need)).append('\n');
    }
    spec.commandLine().getOut().print(out);
    spec.commandLine().getOut().flush();
    return 0;
  }

  /** Runs one step of the arithmetic; a figure out of range is a usage error naming the options. */
  private <T> T usage(String options, Supplier<T> step) {
    try {
      return step.get();
    } catch (IllegalArgumentException e) {
      throw new ParameterException(spec.commandLine(), options + ": " + e.getMessage());
    }
  }

  private static String whatIf(int limit, double need) {
    String needText = Quantities.formatNumber(need);
    if (limit >= need) {
      return "with limit "
          + limit
          + ": room for the need of "
          + needText
          + " (x"
          + Quantities.formatNumber(limit / need)
          + ")";
    }
    long admitted = Math.round(100.0 * limit / need);
    return "with limit "
        + limit
        + ": at most "
        + limit
        + " of the "
        + needText
        + " calls it needs are"
        + " in flight; about "
        + admitted
        + "% of calls are admitted and "
        + (100 - admitted)
        + "% rejected at once, and other compartments keep their slots";
  }

  /** {@code 40/s}, {@code 2400/min}: the grammar of the YAML file's {@code rate}. */
  static final class RateConverter implements ITypeConverter<Double> {
    @Override
    public Double convert(String value) {
      try {
        return Quantities.parseRate(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }

  /** {@code 3}, {@code 1.5}, {@code 4/3}: the grammar of the YAML file's {@code headroom}. */
  static final class HeadroomConverter implements ITypeConverter<Headroom> {
    @Override
    public Headroom convert(String value) {
      try {
        return Headroom.parse(value);
      } catch (IllegalArgumentException e) {
        throw new TypeConversionException(e.getMessage());
      }
    }
  }
}
