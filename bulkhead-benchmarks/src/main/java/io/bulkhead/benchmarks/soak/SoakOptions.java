package io.bulkhead.benchmarks.soak;

import io.bulkhead.config.Quantities;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Locale;

/**
 * The soak's options, each with the default a plain run uses: ten minutes of mixed open-loop load
 * sampled every ten seconds.
 */
final class SoakOptions {

  static final String USAGE =
      "usage: soak [--duration 10m] [--sample-every 10s] [--logins 50/s]"
          + " [--chats 20/s] [--checkouts 20/s] [--reports 2/s] [--upstream-delay 300ms]"
          + " [--upstream-failures 0.05] [--jdbc-url URL] [--out DIR]";

  private static final Duration MAX_DURATION = Duration.ofHours(24);
  private static final double MAX_RATE = 1000;

  Duration duration = Duration.ofMinutes(10);
  Duration sampleEvery = Duration.ofSeconds(10);
  double loginsPerSecond = 50;
  double chatsPerSecond = 20;
  double checkoutsPerSecond = 20;
  double reportsPerSecond = 2;
  Duration upstreamDelay = Duration.ofMillis(300);
  double upstreamFailures = 0.05;

  /**
   * The checkout query (pg_sleep) and the report query: the checkout-vs-reports outage's healthy
   * ones.
   */
  Duration checkoutQuery = Duration.ofMillis(50);

  Duration reportQuery = Duration.ofMillis(1500);
  String jdbcUrl; // null: 127.0.0.1:5432/test, or an embedded PostgreSQL when none answers
  Path out = Path.of("bulkhead-benchmarks/target/soak");

  /**
   * Reads the options; returns null for {@code --help}.
   *
   * @throws IllegalArgumentException naming the option and the value that is wrong
   */
  static SoakOptions parse(String[] args) {
    SoakOptions o = new SoakOptions();
    for (int i = 0; i < args.length; i++) {
      String name = args[i];
      if (name.equals("--help") || name.equals("-h")) {
        return null;
      }
      if (i + 1 >= args.length) {
        throw new IllegalArgumentException(
            name.startsWith("--") ? name + " needs a value" : "unexpected argument '" + name + "'");
      }
      String value = args[++i];
      switch (name) {
        case "--duration":
          o.duration = duration(name, value, Duration.ofSeconds(10), MAX_DURATION);
          break;
        case "--sample-every":
          o.sampleEvery = duration(name, value, Duration.ofSeconds(1), Duration.ofMinutes(1));
          break;
        case "--logins":
          o.loginsPerSecond = rate(name, value);
          break;
        case "--chats":
          o.chatsPerSecond = rate(name, value);
          break;
        case "--checkouts":
          o.checkoutsPerSecond = rate(name, value);
          break;
        case "--reports":
          o.reportsPerSecond = rate(name, value);
          break;
        case "--upstream-delay":
          o.upstreamDelay = duration(name, value, Duration.ZERO, Duration.ofSeconds(30));
          break;
        case "--upstream-failures":
          o.upstreamFailures = fraction(name, value);
          break;
        case "--jdbc-url":
          o.jdbcUrl = value;
          break;
        case "--out":
          o.out = Path.of(value);
          break;
        default:
          throw new IllegalArgumentException("unknown option '" + name + "'");
      }
    }
    if (o.sampleEvery.compareTo(o.duration) > 0) {
      throw new IllegalArgumentException(
          "--sample-every ("
              + Quantities.formatDuration(o.sampleEvery)
              + ") must not be longer than --duration ("
              + Quantities.formatDuration(o.duration)
              + ")");
    }
    return o;
  }

  private static Duration duration(String option, String value, Duration min, Duration max) {
    Duration d;
    try {
      d = Quantities.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
    }
    if (d.compareTo(min) < 0 || d.compareTo(max) > 0) {
      throw new IllegalArgumentException(
          option
              + " must be from "
              + Quantities.formatDuration(min)
              + " to "
              + Quantities.formatDuration(max)
              + " but was "
              + value);
    }
    return d;
  }

  private static double rate(String option, String value) {
    double r;
    try {
      r = Quantities.parseRate(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
    }
    if (!(r > 0 && r <= MAX_RATE)) {
      throw new IllegalArgumentException(
          option + " must be above 0 and at most " + (int) MAX_RATE + "/s but was " + value);
    }
    return r;
  }

  private static double fraction(String option, String value) {
    double f;
    try {
      f = Double.parseDouble(value.trim());
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          option + " must be a number from 0 to 1 but was '" + value + "'");
    }
    if (!(f >= 0 && f <= 1)) {
      throw new IllegalArgumentException(option + " must be from 0 to 1 but was " + value);
    }
    return f;
  }

  String describe() {
    return String.format(
        Locale.ROOT,
        "%s of open-loop load: /login %s, /chat %s (upstream %s,"
            + " %.0f%% answered 500), checkout %s (%s query), reports %s (%s query); sampled every %s",
        Quantities.formatDuration(duration),
        Quantities.formatRate(loginsPerSecond),
        Quantities.formatRate(chatsPerSecond),
        Quantities.formatDuration(upstreamDelay),
        upstreamFailures * 100,
        Quantities.formatRate(checkoutsPerSecond),
        Quantities.formatDuration(checkoutQuery),
        Quantities.formatRate(reportsPerSecond),
        Quantities.formatDuration(reportQuery),
        Quantities.formatDuration(sampleEvery));
  }
}
