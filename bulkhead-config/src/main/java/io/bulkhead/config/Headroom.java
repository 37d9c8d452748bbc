package io.bulkhead.config;

import io.bulkhead.Sizing;
import io.bulkhead.config.internal.Printable;
import java.util.Objects;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.jspecify.annotations.Nullable;

/**
 * A headroom factor and the way it was written: {@code 3}, {@code 1.5}, or a fraction such as
 * {@code 4/3} ("a third above the need"), which a decimal like 1.34 only approximates: 3 × 1.34 is
 * 4.02, which rounds up to a fifth slot, while 3 × 4/3 is exactly 4.
 *
 * <p>This class is immutable.
 */
public final class Headroom {

  private static final Pattern FORM =
      Pattern.compile(
          "\\s*[x×]?\\s*([0-9]+(?:\\.[0-9]+)?)\\s*(?:/\\s*([0-9]+(?:\\.[0-9]+)?))?\\s*");

  private final double factor;
  private final String text;

  private Headroom(double factor, String text) {
    this.factor = factor;
    this.text = text;
  }

  /**
   * Parses {@code 3}, {@code x3}, {@code 1.5} or {@code 4/3}.
   *
   * @throws IllegalArgumentException if {@code text} is not one of those forms, or the factor is
   *     below 1
   */
  public static Headroom parse(String text) {
    Objects.requireNonNull(text, "text");
    Matcher m = FORM.matcher(text);
    if (!m.matches()) {
      throw new IllegalArgumentException(
          "expected a headroom factor like 3, 1.5 or 4/3 but was " + Printable.quote(text));
    }
    double numerator = Double.parseDouble(m.group(1));
    String written = m.group(1);
    double factor = numerator;
    if (m.group(2) != null) {
      double denominator = Double.parseDouble(m.group(2));
      if (denominator == 0) {
        throw new IllegalArgumentException(
            "headroom " + Printable.quote(text) + " divides by zero");
      }
      factor = numerator / denominator;
      written = m.group(1) + "/" + m.group(2);
    }
    checked(factor, text);
    return new Headroom(factor, written);
  }

  /**
   * Returns the headroom {@code factor}.
   *
   * @throws IllegalArgumentException if {@code factor} is below 1, NaN or infinite
   */
  public static Headroom of(double factor) {
    checked(factor, Double.toString(factor));
    return new Headroom(factor, Quantities.formatNumber(factor));
  }

  private static void checked(double factor, String text) {
    try {
      Sizing.requireHeadroom(factor);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(
          "headroom must be at least 1 (1 = exactly the need) but was " + Printable.quote(text), e);
    }
  }

  /** The factor the need is multiplied by. */
  public double factor() {
    return factor;
  }

  /** The limit for {@code need}: {@code need × factor}, rounded up; see {@link Sizing#limit}. */
  public int limitFor(double need) {
    return Sizing.limit(need, factor);
  }

  /** As written, with an {@code x}: {@code x3}, {@code x4/3}, {@code x1.5}. */
  @Override
  public String toString() {
    return "x" + text;
  }

  @Override
  public boolean equals(@Nullable Object o) {
    return o instanceof Headroom
        && ((Headroom) o).factor == factor
        && ((Headroom) o).text.equals(text);
  }

  @Override
  public int hashCode() {
    return Double.hashCode(factor) * 31 + text.hashCode();
  }
}
