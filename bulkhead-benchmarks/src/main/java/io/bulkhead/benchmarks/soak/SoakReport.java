package io.bulkhead.benchmarks.soak;

import io.bulkhead.config.Quantities;
import io.bulkhead.internal.JsonWriter;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a soak's samples.csv, minutes.csv and soak.json (the run's setup, machine and last
 * sample), from which {@code scripts/report.py soak DIR} writes summary.md (a verdict per series)
 * and soak.svg.
 */
final class SoakReport {

  private static final double MB = 1024 * 1024;

  private SoakReport() {}

  static void write(SoakOptions o, SoakResult r) throws IOException {
    Files.writeString(o.out.resolve("samples.csv"), samplesCsv(r));
    Files.writeString(o.out.resolve("minutes.csv"), minutesCsv(r));
    Files.writeString(o.out.resolve("soak.json"), json(r));
  }

  static String json(SoakResult r) {
    SoakOptions o = r.options();
    JsonWriter j = JsonWriter.pretty().beginObject();
    j.name("date").value(Instant.now().truncatedTo(ChronoUnit.SECONDS).toString());
    j.name("cores").value(Runtime.getRuntime().availableProcessors());
    j.name("jvm")
        .value(System.getProperty("java.vm.name") + " " + System.getProperty("java.version"));
    j.name("max_heap_mb").value(Math.round(Runtime.getRuntime().maxMemory() / MB));
    j.name("load_before").value(r.loadBefore());
    j.name("load_after").value(r.loadAfter());
    j.name("setup").value(o.describe());
    j.name("duration_s").value(o.duration.toMillis() / 1000.0);
    j.name("sample_every").value(Quantities.formatDuration(o.sampleEvery));
    j.name("after").beginObject();
    j.name("in_flight").beginObject();
    for (Map.Entry<String, Integer> e : r.after().inFlight().entrySet()) {
      j.name(e.getKey()).value(e.getValue());
    }
    j.endObject();
    j.name("threads").value(r.after().threads());
    j.name("fds").value(r.after().fileDescriptors());
    j.name("heap_bytes").value(r.after().heapAfterFullGc());
    j.endObject();
    return j.endObject().toJson() + "\n";
  }

  static String samplesCsv(SoakResult r) {
    StringBuilder b = new StringBuilder("t_s,heap_after_full_gc_bytes,threads,open_fds");
    for (String name : r.compartmentNames()) {
      b.append(",in_flight_").append(name);
    }
    b.append('\n');
    for (SoakResult.Sample s : r.samples()) {
      b.append(
          String.format(
              Locale.ROOT,
              "%.1f,%d,%d,%d",
              s.atSeconds(),
              s.heapAfterFullGc(),
              s.threads(),
              s.fileDescriptors()));
      for (String name : r.compartmentNames()) {
        b.append(',').append(s.inFlight().get(name));
      }
      b.append('\n');
    }
    return b.toString();
  }

  static String minutesCsv(SoakResult r) {
    StringBuilder b = new StringBuilder("minute,end_s");
    for (String w : SoakResult.WORKLOADS) {
      b.append(',')
          .append(w)
          .append("_calls,")
          .append(w)
          .append("_p99_ms,")
          .append(w)
          .append("_ok,")
          .append(w)
          .append("_rejected,")
          .append(w)
          .append("_timed_out,")
          .append(w)
          .append("_failed");
    }
    b.append('\n');
    for (SoakResult.Minute m : r.minutes()) {
      b.append(m.index()).append(',').append(String.format(Locale.ROOT, "%.1f", m.endSeconds()));
      for (Workload.Interval i : m.workloads()) {
        b.append(',')
            .append(i.calls())
            .append(',')
            .append(Double.isNaN(i.p99Ms()) ? "" : String.format(Locale.ROOT, "%.1f", i.p99Ms()));
        for (Workload.Outcome outcome : Workload.Outcome.values()) {
          b.append(',').append(i.count(outcome));
        }
      }
      b.append('\n');
    }
    return b.toString();
  }
}
