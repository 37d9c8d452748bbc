package io.bulkhead;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * How a compartment's limit adapts: a {@link LimitController}, the range {@code [min, max]} the
 * limit stays in, and the interval between two decisions (one second by default). In a {@link
 * Budget}, {@code min} is the compartment's guaranteed share.
 *
 * @param controller decides the next limit
 * @param min the lowest limit, at least 1
 * @param max the highest limit, at least {@code min}
 * @param interval how long the compartment measures between two decisions
 */
public record AdaptiveLimit(LimitController controller, int min, int max, Duration interval) {

  /** The default interval between two decisions. */
  public static final Duration DEFAULT_INTERVAL = Duration.ofSeconds(1);

  /**
   * Checks every field, naming it and its value.
   *
   * @throws IllegalArgumentException if {@code min < 1}, {@code max < min}, or {@code interval} is
   *     not positive
   */
  public AdaptiveLimit {
    Objects.requireNonNull(controller, "controller");
    Objects.requireNonNull(interval, "interval");
    if (min < 1) {
      throw new IllegalArgumentException("adaptive min must be at least 1 but was " + min);
    }
    if (max < min) {
      throw new IllegalArgumentException(
          "adaptive max must be at least min (" + min + ") but was " + max);
    }
    if (interval.isNegative() || interval.isZero() || Durations.exceedsNanos(interval)) {
      throw new IllegalArgumentException(
          "adaptive interval must be positive but was " + Durations.format(interval));
    }
  }

  /** An adaptive limit in {@code [min, max]} decided every {@link #DEFAULT_INTERVAL}. */
  public static AdaptiveLimit of(LimitController controller, int min, int max) {
    return new AdaptiveLimit(controller, min, max, DEFAULT_INTERVAL);
  }

  /** A copy deciding every {@code interval}. */
  public AdaptiveLimit withInterval(Duration interval) {
    return new AdaptiveLimit(controller, min, max, interval);
  }

  /**
   * Where an adaptive limit stands: its controller and range, how often it moved, and its last
   * move.
   *
   * @param controller the controller's {@link LimitController#name()}
   * @param min the lowest limit
   * @param max the highest limit
   * @param limit the limit now
   * @param changes how many times the limit moved
   * @param lastFrom the limit before the last move (equal to {@code limit} before any move)
   * @param lastTo the limit after the last move
   * @param lastReason why it last moved, empty before any move
   */
  public record Status(
      String controller,
      int min,
      int max,
      int limit,
      long changes,
      int lastFrom,
      int lastTo,
      String lastReason) {}
}
