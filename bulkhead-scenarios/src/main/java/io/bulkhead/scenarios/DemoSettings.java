package io.bulkhead.scenarios;

import io.bulkhead.internal.Durations;
import java.net.URI;
import java.time.Duration;
import java.util.Objects;

/**
 * The whole experiment's numbers; the defaults are the slow-upstream experiment's (a 30-second
 * upstream, 80 chats, 50 logins one second later, a server cap of 50, an llm compartment of 10/20/1
 * s).
 *
 * @param delay how long the upstream takes to answer
 * @param chats how many /chat requests are sent at once
 * @param logins how many /login requests are sent at once, {@code loginsAfter} later
 * @param loginsAfter when the logins are sent, after the chats
 * @param serverLimit the app's server-wide cap
 * @param llmLimit the llm compartment's limit and its client's connection cap (bulkhead mode)
 * @param llmQueue how many calls may wait for the llm compartment (bulkhead mode)
 * @param llmWait how long one call may wait for it (bulkhead mode)
 * @param upstreamDeadline how long one upstream call may take, in both modes
 */
public record DemoSettings(
    Duration delay,
    int chats,
    int logins,
    Duration loginsAfter,
    int serverLimit,
    int llmLimit,
    int llmQueue,
    Duration llmWait,
    Duration upstreamDeadline) {

  public static final Duration DELAY = Duration.ofSeconds(30);

  public DemoSettings {
    Objects.requireNonNull(delay, "delay");
    Objects.requireNonNull(loginsAfter, "loginsAfter");
    Objects.requireNonNull(llmWait, "llmWait");
    Objects.requireNonNull(upstreamDeadline, "upstreamDeadline");
    LoadGenerator.checkCounts(chats, logins);
    if (delay.isNegative()) {
      throw new CliException("--delay must not be negative but was " + Durations.format(delay));
    }
    LoadGenerator.checkLoginsAfter(loginsAfter);
    AppSettings.check(serverLimit, llmLimit, llmQueue, llmWait, upstreamDeadline);
    if (upstreamDeadline.compareTo(delay) <= 0) {
      throw new CliException(
          "--upstream-deadline ("
              + Durations.format(upstreamDeadline)
              + ") must be longer than --delay ("
              + Durations.format(delay)
              + "), or every chat would time out");
    }
  }

  /** The slow-upstream experiment with an upstream that takes {@code delay}. */
  public static DemoSettings slowUpstream(Duration delay) {
    return new DemoSettings(
        delay,
        LoadGenerator.CHATS,
        LoadGenerator.LOGINS,
        LoadGenerator.LOGINS_AFTER,
        AppSettings.SERVER_LIMIT,
        AppSettings.LLM_LIMIT,
        AppSettings.LLM_QUEUE,
        AppSettings.LLM_WAIT,
        defaultDeadline(delay));
  }

  /** The upstream deadline when none is given: a minute, or twice the delay if that is longer. */
  public static Duration defaultDeadline(Duration delay) {
    Duration twice = delay.multipliedBy(2);
    return twice.compareTo(AppSettings.UPSTREAM_DEADLINE) > 0
        ? twice
        : AppSettings.UPSTREAM_DEADLINE;
  }

  /** The app's settings in {@code mode} against {@code upstream}. */
  public AppSettings app(Mode mode, URI upstream) {
    return new AppSettings(
        mode, upstream, serverLimit, llmLimit, llmQueue, llmWait, upstreamDeadline);
  }

  /**
   * How long the load generator waits for one answer: long enough for a chat that waits behind
   * every wave of the server cap and then for its own upstream call.
   */
  public Duration loadTimeout() {
    long waves =
        ((long) chats + logins + serverLimit - 1)
            / serverLimit; // long: serverLimit may be int's max
    return upstreamDeadline.multipliedBy(waves + 1).plusMinutes(1);
  }
}
