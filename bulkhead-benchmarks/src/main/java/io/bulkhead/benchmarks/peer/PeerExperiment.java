package io.bulkhead.benchmarks.peer;

import io.bulkhead.config.Quantities;
import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Properties;

/**
 * The slow-upstream experiment against a peer: the demo's app with {@code /chat} guarded by our
 * compartment, then by Resilience4j's {@code SemaphoreBulkhead}, under the same load; reports login
 * latency, chat outcomes, and how many server slots waiting chats held over time.
 *
 * <pre>
 * java -cp bulkhead-benchmarks/target/benchmarks.jar io.bulkhead.benchmarks.peer.PeerExperiment \
 *     [--delay 30s] [--logins-after 1s] [--out DIR] [--sample-every 20ms]
 * </pre>
 *
 * Writes {@code DIR/peer.json} (the figures and the sampled series, from which {@code
 * scripts/report.py} writes the chart and the section of BENCHMARKS.md) and prints a table. Exit
 * codes: 0 done, 1 failed, 2 bad usage; a failure is one line on standard error.
 */
public final class PeerExperiment {

  static final Duration DEFAULT_SAMPLE_EVERY = Duration.ofMillis(20);
  static final Path DEFAULT_OUT = Path.of("bulkhead-benchmarks", "target", "results");

  private static final String USAGE =
      "usage: PeerExperiment [--delay 30s] [--logins-after 1s]"
          + " [--out DIR] [--sample-every 20ms]";

  private PeerExperiment() {}

  public static void main(String[] args) {
    Options options;
    try {
      options = Options.parse(args);
    } catch (IllegalArgumentException e) {
      System.err.println("peer-experiment: " + e.getMessage() + " (" + USAGE + ")");
      System.exit(2);
      return;
    }
    if (options == null) {
      System.out.println(USAGE);
      System.exit(0);
      return;
    }
    try {
      run(options);
    } catch (RuntimeException e) {
      System.err.println("peer-experiment: failed: " + oneLine(e));
      System.exit(1);
    }
    System.exit(0); // the JDK 17 HttpClients' selector threads are not daemons until collected
  }

  static void run(Options o) {
    DemoSettings defaults = DemoSettings.slowUpstream(o.delay);
    DemoSettings settings =
        new DemoSettings(
            defaults.delay(),
            defaults.chats(),
            defaults.logins(),
            o.loginsAfter != null ? o.loginsAfter : defaults.loginsAfter(),
            defaults.serverLimit(),
            defaults.llmLimit(),
            defaults.llmQueue(),
            defaults.llmWait(),
            defaults.upstreamDeadline());
    String r4jVersion = resilience4jVersion(); // before the runs: a broken jar fails at once
    Path json = o.out.resolve("peer.json");
    createParent(json, "--out"); // and a directory that cannot be written
    System.err.println("peer-experiment: warming up both variants (a 300 ms upstream)");
    DemoSettings warmUp =
        new DemoSettings(
            Duration.ofMillis(300),
            settings.chats(),
            settings.logins(),
            Duration.ofMillis(100),
            settings.serverLimit(),
            settings.llmLimit(),
            settings.llmQueue(),
            Duration.ofMillis(200),
            settings.upstreamDeadline());
    for (Variant v : Variant.values()) {
      runVariant(v, warmUp, o.sampleEvery);
    }

    double loadBefore = Experiment.loadAverage();
    Instant started = Instant.now();
    long t0 = System.nanoTime();
    VariantResult ours = announce(runVariant(Variant.BULKHEAD, settings, o.sampleEvery));
    VariantResult peer = announce(runVariant(Variant.RESILIENCE4J, settings, o.sampleEvery));
    Duration elapsed = Duration.ofNanos(System.nanoTime() - t0);
    PeerResult result =
        new PeerResult(
            settings,
            o.sampleEvery,
            ours,
            peer,
            started,
            elapsed,
            loadBefore,
            Experiment.loadAverage(),
            Runtime.getRuntime().availableProcessors(),
            System.getProperty("java.version"),
            r4jVersion);

    write(json, PeerReport.json(result), "--out");
    System.out.print(PeerReport.table(result));
    System.out.println("wrote " + json + " (scripts/report.py draws its chart and its section)");
  }

  private static VariantResult announce(VariantResult r) {
    System.err.println(
        "peer-experiment: "
            + r.variant().title()
            + " done: login p99 "
            + PeerReport.ms(r.load().login().p99Ms())
            + ", chats "
            + r.load().chatOk()
            + " / "
            + r.load().chatRejected()
            + " / "
            + r.load().chatOther());
    return r;
  }

  /** One run: a fresh upstream and app, the load, the sampler alongside; all stopped after. */
  static VariantResult runVariant(Variant variant, DemoSettings s, Duration sampleEvery) {
    try (FakeUpstream upstream = FakeUpstream.start(0, s.delay());
        PeerApp app = PeerApp.start(variant, s, upstream.uri())) {
      LoadGenerator load =
          new LoadGenerator(app.uri(), s.chats(), s.logins(), s.loginsAfter(), s.loadTimeout());
      Sampler sampler = Sampler.start(sampleEvery, app::sample);
      LoadResult result;
      List<Timeline.Point> raw;
      try {
        result = load.run();
      } finally {
        raw = sampler.stop();
      }
      long start =
          load.startedAtNanos()
              .orElseThrow(
                  () -> new IllegalStateException("the load generator never started its clock"));
      return new VariantResult(
          variant,
          result,
          Timeline.relativeTo(raw, start),
          upstream.maxOpenConnections(),
          upstream.requests());
    }
  }

  /** Resilience4j's version, as the build that made this jar resolved it. */
  static String resilience4jVersion() {
    try (InputStream in = PeerExperiment.class.getResourceAsStream("peer-versions.properties")) {
      if (in == null) {
        throw new IllegalStateException("peer-versions.properties is missing from the jar");
      }
      Properties p = new Properties();
      p.load(in);
      String v = p.getProperty("resilience4j");
      if (v == null || v.startsWith("${")) {
        throw new IllegalStateException(
            "peer-versions.properties was not filled in by Maven: " + v);
      }
      return v;
    } catch (IOException e) {
      throw new UncheckedIOException("cannot read peer-versions.properties", e);
    }
  }

  private static void createParent(Path file, String option) {
    Path parent = file.toAbsolutePath().getParent();
    try {
      if (parent != null) {
        Files.createDirectories(parent);
      }
    } catch (IOException e) {
      throw new UncheckedIOException(
          "cannot create the directory of " + file + " (" + option + "): " + e, e);
    }
    if (parent != null && !Files.isWritable(parent)) {
      throw new IllegalArgumentException("cannot write into " + parent + " (" + option + ")");
    }
  }

  private static void write(Path file, String content, String option) {
    try {
      Files.writeString(file, content, StandardCharsets.UTF_8);
    } catch (IOException e) {
      throw new UncheckedIOException("cannot write " + file + " (" + option + "): " + e, e);
    }
  }

  private static String oneLine(Throwable e) {
    String m = e.getMessage() == null ? e.toString() : e.getMessage();
    return m.replaceAll("\\s*\\R\\s*", " ").trim();
  }

  /** The command line. */
  static final class Options {
    Duration delay = DemoSettings.DELAY;
    Duration loginsAfter; // null: the experiment's default
    Path out = DEFAULT_OUT;
    Duration sampleEvery = DEFAULT_SAMPLE_EVERY;

    /**
     * Reads the options; returns null for {@code --help}.
     *
     * @throws IllegalArgumentException naming the option and the value that is wrong
     */
    static Options parse(String[] args) {
      Options o = new Options();
      for (int i = 0; i < args.length; i++) {
        String name = args[i];
        if (name.equals("--help") || name.equals("-h")) {
          return null;
        }
        if (i + 1 >= args.length) {
          throw new IllegalArgumentException(
              name.startsWith("--")
                  ? name + " needs a value"
                  : "unexpected argument '" + name + "'");
        }
        String value = args[++i];
        switch (name) {
          case "--delay":
            o.delay = duration(name, value);
            if (o.delay.isNegative() || o.delay.compareTo(Duration.ofMinutes(10)) > 0) {
              throw new IllegalArgumentException("--delay must be from 0 to 10m but was " + value);
            }
            break;
          case "--logins-after":
            o.loginsAfter = duration(name, value);
            if (o.loginsAfter.isNegative() || o.loginsAfter.compareTo(Duration.ofMinutes(1)) > 0) {
              throw new IllegalArgumentException(
                  "--logins-after must be from 0 to 1m but was " + value);
            }
            break;
          case "--sample-every":
            o.sampleEvery = duration(name, value);
            if (o.sampleEvery.compareTo(Duration.ofMillis(1)) < 0
                || o.sampleEvery.compareTo(Duration.ofSeconds(1)) > 0) {
              throw new IllegalArgumentException(
                  "--sample-every must be from 1ms to 1s but was " + value);
            }
            break;
          case "--out":
            o.out = Path.of(value);
            break;
          default:
            throw new IllegalArgumentException("unknown option '" + name + "'");
        }
      }
      return o;
    }

    /** The grammar of every other duration option and of the YAML file: 30s, 500ms, 2m, PT30S. */
    static Duration duration(String option, String value) {
      try {
        return Quantities.parseDuration(value);
      } catch (IllegalArgumentException e) {
        throw new IllegalArgumentException(option + ": " + e.getMessage(), e);
      }
    }
  }
}
