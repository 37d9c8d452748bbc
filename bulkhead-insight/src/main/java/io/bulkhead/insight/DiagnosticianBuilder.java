package io.bulkhead.insight;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.Objects;

/**
 * Builds a {@link Diagnostician}. Obtain one from {@link Diagnostician#builder()}.
 *
 * <pre>{@code
 * Diagnostician doctor = Diagnostician.builder()
 *     .shortWindow(Duration.ofSeconds(10))   // what "now" means
 *     .longWindow(Duration.ofMinutes(1))     // what "lately" means
 *     .rejectionRatio(0.05, 0.01)            // enter at 5% of calls rejected, leave below 1%
 *     .build();
 * }</pre>
 *
 * <p>Each threshold comes as a pair: the level at which a condition starts and a lower one below
 * which it ends. The gap between them is the hysteresis that keeps a compartment hovering around
 * one level from flapping between two states. Defaults are the {@code DEFAULT_*} constants of
 * {@link Diagnostician}; the README lists them with their reasons.
 *
 * <p>Each setter checks its arguments and throws {@link IllegalArgumentException} naming the field
 * and the value; {@link #build()} checks the combination. {@code build()} copies the settings. This
 * class is <em>not</em> thread-safe.
 */
public final class DiagnosticianBuilder {

  private Duration shortWindow = Diagnostician.DEFAULT_SHORT_WINDOW;
  private Duration longWindow = Diagnostician.DEFAULT_LONG_WINDOW;
  private double saturationEnter = Diagnostician.DEFAULT_SATURATION_ENTER;
  private double saturationExit = Diagnostician.DEFAULT_SATURATION_EXIT;
  private double rejectionRatioEnter = Diagnostician.DEFAULT_REJECTION_RATIO_ENTER;
  private double rejectionRatioExit = Diagnostician.DEFAULT_REJECTION_RATIO_EXIT;
  private double rejectionSpreadEnter = Diagnostician.DEFAULT_REJECTION_SPREAD_ENTER;
  private double rejectionSpreadExit = Diagnostician.DEFAULT_REJECTION_SPREAD_EXIT;
  private double latencyRiseEnter = Diagnostician.DEFAULT_LATENCY_RISE_ENTER;
  private double latencyRiseExit = Diagnostician.DEFAULT_LATENCY_RISE_EXIT;
  private Duration latencyFloor = Diagnostician.DEFAULT_LATENCY_FLOOR;

  DiagnosticianBuilder() {}

  /**
   * Sets the window that the current figures cover: rates, saturation and the spread of rejections.
   * A condition must fill a good part of it before it counts, so this is also how long a problem
   * must last before it is reported.
   *
   * @throws IllegalArgumentException if {@code window} is not positive
   */
  public DiagnosticianBuilder shortWindow(Duration window) {
    this.shortWindow = positive("shortWindow", window);
    return this;
  }

  /**
   * Sets the window the current figures are compared with: the long rejection rate and the normal
   * latency learnt while healthy.
   *
   * @throws IllegalArgumentException if {@code window} is not positive
   */
  public DiagnosticianBuilder longWindow(Duration window) {
    this.longWindow = positive("longWindow", window);
    return this;
  }

  /**
   * Sets the share of sampling intervals at the limit at which a compartment becomes {@link
   * Diagnosis.State#SATURATED} ({@code enter}), and below which it stops being so ({@code exit}).
   *
   * @throws IllegalArgumentException unless {@code 0 < exit <= enter <= 1}
   */
  public DiagnosticianBuilder saturation(double enter, double exit) {
    checkShares("saturation", enter, exit);
    this.saturationEnter = enter;
    this.saturationExit = exit;
    return this;
  }

  /**
   * Sets the share of calls rejected (rejected over admitted plus rejected) at which rejections
   * count ({@code enter}), and below which they stop counting ({@code exit}). Both this and {@link
   * #rejectionSpread} must be met for a compartment to be diagnosed as rejecting.
   *
   * @throws IllegalArgumentException unless {@code 0 < exit <= enter <= 1}
   */
  public DiagnosticianBuilder rejectionRatio(double enter, double exit) {
    checkShares("rejectionRatio", enter, exit);
    this.rejectionRatioEnter = enter;
    this.rejectionRatioExit = exit;
    return this;
  }

  /**
   * Sets the share of sampling intervals that must contain a rejection for rejections to count
   * ({@code enter}), and below which they stop counting ({@code exit}). This is what tells a
   * sustained rejection rate from a single burst.
   *
   * @throws IllegalArgumentException unless {@code 0 < exit <= enter <= 1}
   */
  public DiagnosticianBuilder rejectionSpread(double enter, double exit) {
    checkShares("rejectionSpread", enter, exit);
    this.rejectionSpreadEnter = enter;
    this.rejectionSpreadExit = exit;
    return this;
  }

  /**
   * Sets how many times its normal latency admitted calls must take, while the compartment is
   * rejecting, for the dependency to be diagnosed as degrading ({@code enter}), and below which it
   * stops being so ({@code exit}).
   *
   * @throws IllegalArgumentException unless {@code 1 <= exit <= enter} and both are finite
   */
  public DiagnosticianBuilder latencyRise(double enter, double exit) {
    if (!(exit >= 1.0 && exit <= enter && Double.isFinite(enter))) {
      throw new IllegalArgumentException(
          "latencyRise must satisfy 1 <= exit <= enter (finite) but was"
              + " enter="
              + enter
              + ", exit="
              + exit);
    }
    this.latencyRiseEnter = enter;
    this.latencyRiseExit = exit;
    return this;
  }

  /**
   * Sets the least absolute rise over normal latency that can count as degrading, so that a call
   * going from 40 µs to 120 µs does not read as a failing dependency.
   *
   * @throws IllegalArgumentException if {@code floor} is negative
   */
  public DiagnosticianBuilder latencyFloor(Duration floor) {
    Objects.requireNonNull(floor, "latencyFloor");
    if (floor.isNegative()) {
      throw new IllegalArgumentException("latencyFloor must not be negative but was " + floor);
    }
    this.latencyFloor = floor;
    return this;
  }

  /**
   * Returns a new diagnostician with these settings.
   *
   * @throws IllegalArgumentException if the long window is not longer than the short one
   */
  public Diagnostician build() {
    if (longWindow.compareTo(shortWindow) <= 0) {
      throw new IllegalArgumentException(
          "longWindow " + longWindow + " must be longer than shortWindow " + shortWindow);
    }
    return new Diagnostician(this);
  }

  long shortWindowNanos() {
    return Durations.toNanosSaturated(shortWindow);
  }

  long longWindowNanos() {
    return Durations.toNanosSaturated(longWindow);
  }

  double saturationEnter() {
    return saturationEnter;
  }

  double saturationExit() {
    return saturationExit;
  }

  double rejectionRatioEnter() {
    return rejectionRatioEnter;
  }

  double rejectionRatioExit() {
    return rejectionRatioExit;
  }

  double rejectionSpreadEnter() {
    return rejectionSpreadEnter;
  }

  double rejectionSpreadExit() {
    return rejectionSpreadExit;
  }

  double latencyRiseEnter() {
    return latencyRiseEnter;
  }

  double latencyRiseExit() {
    return latencyRiseExit;
  }

  long latencyFloorNanos() {
    return Durations.toNanosSaturated(latencyFloor);
  }

  private static Duration positive(String field, Duration window) {
    Objects.requireNonNull(window, field);
    if (window.isNegative() || window.isZero()) {
      throw new IllegalArgumentException(field + " must be positive but was " + window);
    }
    return window;
  }

  private static void checkShares(String field, double enter, double exit) {
    if (!(exit > 0.0 && exit <= enter && enter <= 1.0)) {
      throw new IllegalArgumentException(
          field
              + " must satisfy 0 < exit <= enter <= 1 but was"
              + " enter="
              + enter
              + ", exit="
              + exit);
    }
  }
}
