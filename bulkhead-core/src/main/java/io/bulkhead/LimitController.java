package io.bulkhead;

import java.time.Duration;
import java.util.Objects;

/**
 * Decides a compartment's next limit from what it measured over the last interval; kept apart from
 * admission, which it never touches: the compartment feeds it and applies its answer through the
 * same non-blocking {@link Compartment#setLimit} as anyone else, clamped to the adaptive range.
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(5).maxWait(Duration.ofSeconds(1))
 *     .adaptive(AdaptiveLimit.of(LimitController.gradient(), 2, 20))
 *     .build();
 * }</pre>
 *
 * <p>The compartment calls {@link #next} at most once per interval, from one thread at a time (the
 * thread whose release found the interval over), holding no lock; an implementation may keep state
 * without synchronising it, and must be quick: it runs on a caller's thread.
 */
public interface LimitController {

  /** The short name shown in diagnosis and configuration: {@code gradient}, {@code aimd}. */
  String name();

  /**
   * The limit to move to after {@code sample}; the compartment clamps it to {@code [min, max]} and
   * to what its budget allows. Returning {@code sample.limit()} keeps the limit.
   */
  Decision next(Sample sample);

  /**
   * What the compartment measured over one interval.
   *
   * @param limit the limit during the interval
   * @param inFlight the most calls seen in flight at a release during the interval
   * @param latency admitted latency of the calls timed during the interval
   * @param rejected calls refused during the interval
   * @param waiting callers in the queue at the end of the interval
   */
  record Sample(int limit, int inFlight, LatencySummary latency, long rejected, int waiting) {
    public Sample {
      Objects.requireNonNull(latency, "latency");
    }

    /** Whether demand reached the limit: callers waited or were refused, or every slot ran. */
    public boolean saturated() {
      return waiting > 0 || rejected > 0 || inFlight >= limit;
    }
  }

  /**
   * A limit and why, in one line a person reads in a diagnosis ("admitted p50 rose from 2.1 s to 29
   * s against a baseline of 2.0 s").
   */
  record Decision(int limit, String reason) {
    public Decision {
      Objects.requireNonNull(reason, "reason");
    }
  }

  /**
   * A gradient controller: with g the ratio of 1.5 × a long-term baseline of admitted p50 to the
   * last interval's (at least 0.5), a rise past the tolerance drops the limit to {@code limit × g +
   * 4} (so it settles where the 4 extra slots make up for the gradient), never below half the limit
   * it had while latency was within tolerance; while latency holds and demand reaches the limit, it
   * grows by 2 per interval, or returns at once to that earlier limit when p50 is back at the
   * baseline. The baseline learns a lasting rise slowly: by at most 1% per interval, and only from
   * intervals in which demand stayed below the limit.
   */
  static LimitController gradient() {
    return new GradientController(1.5, 4, 100);
  }

  /**
   * Additive increase, multiplicative decrease: +1 per interval while demand reaches the limit and
   * the admitted p50 stays under twice its long-term baseline, otherwise the limit times 0.75, but
   * not below 0.75 times the most calls recently in flight while p50 was under that threshold, nor
   * below half the limit then: a dependency that just got slower is not cut far below the calls it
   * served.
   */
  static LimitController aimd() {
    return new AimdController(2.0, 0.75);
  }

  /**
   * The controller a configuration names by its {@link #name}: {@code gradient} or {@code aimd}
   * (with their defaults); empty for any other name, which the caller reports with its own field.
   */
  static java.util.Optional<LimitController> named(String name) {
    switch (name) {
      case "gradient":
        return java.util.Optional.of(gradient());
      case "aimd":
        return java.util.Optional.of(aimd());
      default:
        return java.util.Optional.empty();
    }
  }

  /** {@link #aimd()} with a fixed threshold instead of twice the baseline. */
  static LimitController aimd(Duration threshold) {
    return new AimdController(threshold, 0.75);
  }
}
