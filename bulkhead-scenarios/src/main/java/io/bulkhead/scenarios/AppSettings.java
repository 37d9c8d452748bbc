package io.bulkhead.scenarios;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadBuilder;
import io.bulkhead.httpclient.UpstreamClient;
import io.bulkhead.internal.Durations;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;
import java.util.function.Supplier;

/**
 * How the demo app is set up. The defaults are the slow-upstream experiment's numbers: a
 * server-wide cap of 50 slots with an unbounded queue, and in bulkhead mode an "llm" compartment of
 * 10 in flight, 20 waiting and one second of patience, whose client is capped at the same 10
 * connections.
 *
 * @param mode shared or bulkhead
 * @param upstream the slow provider, a loopback URL
 * @param serverLimit the server-wide cap: requests in flight over every route
 * @param llmLimit calls in flight to the upstream in bulkhead mode, and the client's connection cap
 * @param llmQueue calls that may wait for the upstream in bulkhead mode
 * @param llmWait how long one call may wait for the upstream in bulkhead mode
 * @param upstreamDeadline how long one upstream call may take, in both modes
 */
public record AppSettings(
    Mode mode,
    URI upstream,
    int serverLimit,
    int llmLimit,
    int llmQueue,
    Duration llmWait,
    Duration upstreamDeadline) {

  public static final int SERVER_LIMIT = 50;
  public static final int LLM_LIMIT = 10;
  public static final int LLM_QUEUE = 20;
  public static final Duration LLM_WAIT = Duration.ofSeconds(1);

  /**
   * The experiment sets no deadline of its own; ours only has to outlast its 30-second upstream.
   */
  public static final Duration UPSTREAM_DEADLINE = Duration.ofSeconds(60);

  public AppSettings {
    Objects.requireNonNull(mode, "mode");
    Objects.requireNonNull(upstream, "upstream");
    Objects.requireNonNull(llmWait, "llmWait");
    Objects.requireNonNull(upstreamDeadline, "upstreamDeadline");
    check(serverLimit, llmLimit, llmQueue, llmWait, upstreamDeadline);
  }

  /** Checks the numbers, naming the option and the value of the first that is wrong. */
  static void check(
      int serverLimit, int llmLimit, int llmQueue, Duration llmWait, Duration upstreamDeadline) {
    requireAtLeast("--server-limit", serverLimit, 1);
    requireAtLeast("--llm-limit", llmLimit, 1);
    requireAtLeast("--llm-max-queue", llmQueue, 0);
    if (llmWait.isNegative() || (llmQueue > 0 && llmWait.isZero())) {
      throw new CliException(
          "--llm-max-wait must be above zero when --llm-max-queue lets calls wait, but was "
              + Durations.format(llmWait));
    }
    if (upstreamDeadline.isNegative() || upstreamDeadline.isZero()) {
      throw new CliException(
          "--upstream-deadline must be above zero but was " + Durations.format(upstreamDeadline));
    }
    // The bounds the app's builders apply (a queue a compartment can count, a wait a nanosecond
    // deadline holds, a deadline the upstream client takes), applied by the builders themselves so
    // that
    // they cannot drift: a value they refuse is a usage error naming its option, not a failure
    // later.
    option("--server-limit", () -> Bulkhead.builder("server").limit(serverLimit));
    BulkheadBuilder llm = Bulkhead.builder("llm");
    option("--llm-limit", () -> llm.limit(llmLimit));
    option("--llm-max-queue", () -> llm.maxQueue(llmQueue));
    option("--llm-max-wait", () -> llm.maxWait(llmWait));
    Bulkhead compartment =
        option("--llm-max-wait", llm::build); // holds nothing: no thread, no budget
    option(
        "--upstream-deadline",
        () -> UpstreamClient.builder(compartment).deadline(upstreamDeadline));
  }

  private static <T> T option(String option, Supplier<T> check) {
    try {
      return check.get();
    } catch (IllegalArgumentException refused) {
      throw new CliException(option + ": " + refused.getMessage());
    }
  }

  /** A builder of the llm compartment of these figures: limit, max-queue and max-wait. */
  public BulkheadBuilder llm() {
    return Bulkhead.builder("llm").limit(llmLimit).maxQueue(llmQueue).maxWait(llmWait);
  }

  /** The slow-upstream experiment's settings for {@code mode} against {@code upstream}. */
  public static AppSettings defaults(Mode mode, URI upstream) {
    return new AppSettings(
        mode, upstream, SERVER_LIMIT, LLM_LIMIT, LLM_QUEUE, LLM_WAIT, UPSTREAM_DEADLINE);
  }

  /** The same settings in another mode. */
  public AppSettings withMode(Mode other) {
    return new AppSettings(
        other, upstream, serverLimit, llmLimit, llmQueue, llmWait, upstreamDeadline);
  }

  private static void requireAtLeast(String option, int value, int min) {
    if (value < min) {
      throw new CliException(option + " must be at least " + min + " but was " + value);
    }
  }
}
