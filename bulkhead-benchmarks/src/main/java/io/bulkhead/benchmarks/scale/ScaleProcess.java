package io.bulkhead.benchmarks.scale;

import io.bulkhead.config.Quantities;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.AppSettings;
import io.bulkhead.scenarios.DemoApp;
import io.bulkhead.scenarios.FakeUpstream;
import io.bulkhead.scenarios.LoadGenerator;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Mode;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadMXBean;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.Map;

/**
 * The three processes of the slow-upstream experiment at ten and a hundred times its load
 * (bulkhead-benchmarks/scripts/scale), each in a JVM of its own so that each has its own open-file
 * limit and its own heap, and so that the app's heap and threads can be measured from outside
 * ({@code jcmd}) without the load generator's in them:
 *
 * <pre>
 * ScaleProcess upstream --delay 10s --port-file F
 * ScaleProcess app --mode bulkhead --upstream URL --server-limit 500 --llm-limit 100 --llm-max-queue 200
 *     --llm-max-wait 1s --max-connections 2000 --port-file F --stats-file S
 * ScaleProcess load --target URL --chats 800 --logins 500 --logins-after 1s --out FILE
 *     [--started-file F]
 * </pre>
 *
 * <p>{@code upstream} and {@code app} run until they are killed; {@code app} then writes its own
 * figures (peak threads, threads started, CPU time) to its stats file. {@code load} runs the
 * experiment's load once and writes what it measured, with its own CPU time and peak threads: the
 * load generator's limits, so that the app's figures can be told from the client's. The script no
 * longer uses {@code load}: its thread and blocking socket per request cost more than the app at a
 * hundred times the load, so the script sends the load with h2load (scripts/lib/scale-load.py);
 * {@code load} stays for a run with the demo's own client.
 */
public final class ScaleProcess {

  private ScaleProcess() {}

  public static void main(String[] args) throws Exception {
    if (args.length < 1) {
      usage("name the role: upstream, app or load");
    }
    Map<String, String> options = new HashMap<>();
    for (int i = 1; i < args.length; i += 2) {
      if (!args[i].startsWith("--") || i + 1 >= args.length) {
        usage("expected --option value pairs, got '" + args[i] + "'");
      }
      options.put(args[i], args[i + 1]);
    }
    try {
      switch (args[0]) {
        case "upstream" -> upstream(options);
        case "app" -> app(options);
        case "load" -> load(options);
        default -> usage("role '" + args[0] + "' is not upstream, app or load");
      }
    } catch (IllegalArgumentException e) {
      usage(e.getMessage());
    }
  }

  private static void upstream(Map<String, String> o) throws Exception {
    FakeUpstream upstream = FakeUpstream.start(0, duration(o, "--delay", "10s"));
    Runtime.getRuntime().addShutdownHook(new Thread(upstream::close, "upstream-stop"));
    writePort(o, upstream.port());
    upstream.join();
  }

  private static void app(Map<String, String> o) throws Exception {
    Mode mode =
        switch (required(o, "--mode")) {
          case "bulkhead" -> Mode.BULKHEAD;
          case "shared" -> Mode.SHARED;
          default -> throw new IllegalArgumentException("--mode must be shared or bulkhead");
        };
    AppSettings settings =
        new AppSettings(
            mode,
            URI.create(required(o, "--upstream")),
            integer(o, "--server-limit", "50"),
            integer(o, "--llm-limit", "10"),
            integer(o, "--llm-max-queue", "20"),
            duration(o, "--llm-max-wait", "1s"),
            duration(o, "--upstream-deadline", "60s"));
    Path stats = Path.of(required(o, "--stats-file"));
    DemoApp app = new DemoApp(settings).maxConnections(integer(o, "--max-connections", "512"));
    app.start(0);
    Runtime.getRuntime()
        .addShutdownHook(
            new Thread(
                () -> {
                  app.close();
                  try {
                    Files.writeString(
                        stats,
                        ownFigures(JsonWriter.pretty()).endObject().toJson(),
                        StandardCharsets.UTF_8);
                  } catch (Exception e) {
                    System.err.println("scale app: cannot write " + stats + ": " + e.getMessage());
                  }
                },
                "app-stop"));
    writePort(o, app.uri().getPort());
    app.server().join();
  }

  private static void load(Map<String, String> o) throws Exception {
    int chats = integer(o, "--chats", "80");
    int logins = integer(o, "--logins", "50");
    LoadGenerator load =
        new LoadGenerator(
            URI.create(required(o, "--target")),
            chats,
            logins,
            duration(o, "--logins-after", "1s"),
            duration(o, "--timeout", "5m"));
    String startedFile = o.get("--started-file");
    if (startedFile != null) {
      // Tells the script when the load's clock started, so it can look at the app at a known
      // moment.
      DaemonThreads.start(
          "load-started",
          () -> {
            while (load.startedAtNanos().isEmpty()) {
              java.util.concurrent.locks.LockSupport.parkNanos(1_000_000); // polling a field, 1 ms
            }
            try {
              Files.writeString(Path.of(startedFile), "started", StandardCharsets.US_ASCII);
            } catch (Exception e) {
              System.err.println("scale load: cannot write " + startedFile + ": " + e.getMessage());
            }
          });
    }
    long cpuBefore = cpuNanos();
    LoadResult r = load.run();
    double cpuDuringRun = (cpuNanos() - cpuBefore) / 1e9;
    JsonWriter doc = ownFigures(JsonWriter.pretty());
    field(doc, "chats", chats);
    field(doc, "logins", logins);
    field(doc, "client_cpu_s_during_run", cpuDuringRun);
    field(doc, "wall_ms", r.wallMs());
    field(doc, "login_p50_ms", r.login().p50Ms());
    field(doc, "login_p99_ms", r.login().p99Ms());
    field(doc, "login_max_ms", r.login().maxMs());
    field(doc, "login_failures", r.loginFailures());
    field(doc, "chat_ok", r.chatOk());
    field(doc, "chat_rejected", r.chatRejected());
    field(doc, "chat_other", r.chatOther());
    field(doc, "rejected_p50_ms", r.rejected().p50Ms());
    field(doc, "rejected_p99_ms", r.rejected().p99Ms());
    doc.endObject();
    Files.writeString(Path.of(required(o, "--out")), doc.toJson(), StandardCharsets.UTF_8);
  }

  /** This process's threads and CPU so far, as the first fields of an open JSON object. */
  private static JsonWriter ownFigures(JsonWriter doc) {
    ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    doc.beginObject();
    field(doc, "java", System.getProperty("java.version"));
    field(doc, "peak_threads", threads.getPeakThreadCount());
    field(doc, "threads_started", threads.getTotalStartedThreadCount());
    field(doc, "cpu_s", cpuNanos() / 1e9);
    return doc;
  }

  private static void field(JsonWriter doc, String name, Object value) {
    doc.name(name);
    if (value == null) {
      doc.nullValue();
    } else if (value instanceof String text) {
      doc.value(text);
    } else if (value instanceof Integer || value instanceof Long) {
      doc.value(((Number) value).longValue());
    } else {
      doc.value(((Number) value).doubleValue());
    }
  }

  private static long cpuNanos() {
    return ((com.sun.management.OperatingSystemMXBean) ManagementFactory.getOperatingSystemMXBean())
        .getProcessCpuTime();
  }

  private static void writePort(Map<String, String> o, int port) throws Exception {
    Files.writeString(
        Path.of(required(o, "--port-file")), Integer.toString(port), StandardCharsets.US_ASCII);
  }

  private static String required(Map<String, String> o, String option) {
    String value = o.get(option);
    if (value == null) {
      throw new IllegalArgumentException(option + " is required");
    }
    return value;
  }

  private static int integer(Map<String, String> o, String option, String fallback) {
    String value = o.getOrDefault(option, fallback);
    try {
      return Integer.parseInt(value);
    } catch (NumberFormatException e) {
      throw new IllegalArgumentException(
          option + " must be a whole number but was '" + value + "'");
    }
  }

  private static Duration duration(Map<String, String> o, String option, String fallback) {
    String value = o.getOrDefault(option, fallback);
    try {
      return Quantities.parseDuration(value);
    } catch (IllegalArgumentException e) {
      throw new IllegalArgumentException(option + ": " + e.getMessage());
    }
  }

  private static void usage(String problem) {
    System.err.println(
        "scale: "
            + problem
            + "; usage: ScaleProcess upstream|app|load --option value"
            + " ... (see the class comment or bulkhead-benchmarks/scripts/scale)");
    System.exit(2);
  }
}
