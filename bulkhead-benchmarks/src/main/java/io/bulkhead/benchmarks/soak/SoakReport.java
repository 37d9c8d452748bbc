package io.bulkhead.benchmarks.soak;

import io.bulkhead.config.Quantities;
import java.io.IOException;
import java.nio.file.Files;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.ToDoubleFunction;

/** Writes a soak's samples.csv, minutes.csv, soak.svg and summary.md. */
final class SoakReport {

  private static final double MB = 1024 * 1024;

  /** The first minute (JIT, pools filling, the heap settling) is left out of every verdict. */
  private static final double WARM_UP_SECONDS = 60;

  private SoakReport() {}

  static void write(SoakOptions o, SoakResult r) throws IOException {
    Files.writeString(o.out.resolve("samples.csv"), samplesCsv(r));
    Files.writeString(o.out.resolve("minutes.csv"), minutesCsv(r));
    List<Trend> trends = trends(r);
    Files.writeString(o.out.resolve("soak.svg"), SoakChart.svg(r));
    Files.writeString(o.out.resolve("summary.md"), summary(r, trends));
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

  static List<Trend> trends(SoakResult r) {
    List<Trend> out = new ArrayList<>();
    out.add(
        Trend.fit(
            "heap after full GC",
            "MB",
            points(r, s -> s.heapAfterFullGc() < 0 ? Double.NaN : s.heapAfterFullGc() / MB),
            4,
            0.10));
    out.add(Trend.fit("live threads", "threads", points(r, SoakResult.Sample::threads), 2, 0.05));
    out.add(
        Trend.fit(
            "open file descriptors",
            "fds",
            points(r, SoakResult.Sample::fileDescriptors),
            4,
            0.05));
    for (String name : r.compartmentNames()) {
      out.add(
          Trend.fit(
              "slots in flight: " + name,
              "slots",
              points(r, s -> s.inFlight().get(name)),
              1,
              0.25));
    }
    for (int w = 0; w < SoakResult.WORKLOADS.size(); w++) {
      int index = w;
      List<double[]> p99 = new ArrayList<>();
      for (SoakResult.Minute m : r.minutes()) {
        double v = m.workloads().get(index).p99Ms();
        if (m.index() > 1 && !Double.isNaN(v)) {
          p99.add(new double[] {m.endSeconds() / 60, v});
        }
      }
      out.add(Trend.fit(SoakResult.label(w) + " p99 per minute", "ms", p99, 5, 0.25));
    }
    return out;
  }

  private static List<double[]> points(SoakResult r, ToDoubleFunction<SoakResult.Sample> value) {
    List<double[]> out = new ArrayList<>();
    for (SoakResult.Sample s : r.samples()) {
      double v = value.applyAsDouble(s);
      if (s.atSeconds() >= WARM_UP_SECONDS && !Double.isNaN(v) && v >= 0) {
        out.add(new double[] {s.atSeconds() / 60, v});
      }
    }
    return out;
  }

  static String summary(SoakResult r, List<Trend> trends) {
    SoakOptions o = r.options();
    StringBuilder b = new StringBuilder();
    b.append("# Soak: the demo app and the checkout-vs-reports pools under mixed load\n\n");
    b.append("Run ")
        .append(Instant.now().truncatedTo(ChronoUnit.SECONDS))
        .append(" on ")
        .append(Runtime.getRuntime().availableProcessors())
        .append(" cores, ")
        .append(System.getProperty("java.vm.name"))
        .append(' ')
        .append(System.getProperty("java.version"))
        .append(", max heap ")
        .append(Math.round(Runtime.getRuntime().maxMemory() / MB))
        .append(" MB. Machine load")
        .append(" average (1, 5, 15 min) ")
        .append(r.loadBefore())
        .append(" when the load started, ")
        .append(r.loadAfter())
        .append(" when it ended: other processes share these cores, and")
        .append(" their bursts show in the p99s.\n\n");
    b.append(o.describe())
        .append(". The server cap is 50 slots with an unbounded queue; the llm")
        .append(
            " compartment 10 in flight, 20 waiting, 1 s wait; the database pools split a budget")
        .append(
            " of 10 connections: checkout 6 (a queue of 40, 1 s wait), reports 4 (no queue).\n\n");
    b.append("Each sample forces a full collection and records the heap in use after it (from the")
        .append(
            " collector's notification), live threads, open file descriptors (`/proc/self/fd`) and")
        .append(
            " each compartment's slots in flight. The load generator runs in the same process, so")
        .append(
            " threads and descriptors are the whole process's: the app, its clients, the pools and")
        .append(" the generator. Verdicts leave out the first minute; a series is flat when the")
        .append(" least-squares line's rise over the run is within its tolerance.\n\n");
    b.append("## Verdicts\n\n| series | mean | first → last | verdict |\n|---|---:|---:|---|\n");
    for (Trend t : trends) {
      b.append("| ")
          .append(t.series())
          .append(" | ")
          .append(String.format(Locale.ROOT, "%.1f %s", t.mean(), t.unit()))
          .append(" | ")
          .append(String.format(Locale.ROOT, "%.1f → %.1f", t.first(), t.last()))
          .append(" | ")
          .append(t.verdict())
          .append(" |\n");
    }
    b.append("\nAfter the load stopped and the calls in flight finished: slots in flight ");
    List<String> after = new ArrayList<>();
    for (Map.Entry<String, Integer> e : r.after().inFlight().entrySet()) {
      after.add(e.getKey() + " " + e.getValue());
    }
    b.append(String.join(", ", after))
        .append("; ")
        .append(r.after().threads())
        .append(" threads, ")
        .append(r.after().fileDescriptors())
        .append(" file descriptors, heap ")
        .append(String.format(Locale.ROOT, "%.1f MB", r.after().heapAfterFullGc() / MB))
        .append(" after a full collection.\n\n");
    b.append("## Per minute\n\n");
    b.append(
            "Latencies count from when each call was due. chat: ok / the upstream's 500 relayed as")
        .append(
            " 502 or another failure / 503 (llm compartment full) / 504; checkout and report: ok /")
        .append(" rejected / failed. Heap, threads and fds: the minute's last sample; slots: the")
        .append(" minute's peak per compartment (")
        .append(String.join(", ", r.compartmentNames()))
        .append(").\n\n");
    b.append(
            "| min | logins | login p99 | chats ok/fail/503/504 | chat p99 | checkouts ok/rej/fail |")
        .append(" checkout p99 | reports ok/rej/fail | heap MB | threads | fds | peak slots |\n");
    b.append("|---:|---:|---:|---|---:|---|---:|---|---:|---:|---:|---|\n");
    for (SoakResult.Minute m : r.minutes()) {
      Workload.Interval login = m.workloads().get(0);
      Workload.Interval chat = m.workloads().get(1);
      Workload.Interval checkout = m.workloads().get(2);
      Workload.Interval report = m.workloads().get(3);
      SoakResult.Sample last = null;
      int[] peak = new int[r.compartmentNames().size()];
      for (SoakResult.Sample s : r.samples()) {
        if (s.atSeconds() < m.endSeconds() && s.atSeconds() >= m.endSeconds() - 60) {
          last = s;
          for (int i = 0; i < peak.length; i++) {
            peak[i] = Math.max(peak[i], s.inFlight().get(r.compartmentNames().get(i)));
          }
        }
      }
      List<String> peaks = new ArrayList<>();
      for (int p : peak) {
        peaks.add(Integer.toString(p));
      }
      b.append("| ")
          .append(m.index())
          .append(" | ")
          .append(login.calls())
          .append(" | ")
          .append(ms(login.p99Ms()))
          .append(" | ")
          .append(chat.count(Workload.Outcome.OK))
          .append('/')
          .append(chat.count(Workload.Outcome.FAILED))
          .append('/')
          .append(chat.count(Workload.Outcome.REJECTED))
          .append('/')
          .append(chat.count(Workload.Outcome.TIMED_OUT))
          .append(" | ")
          .append(ms(chat.p99Ms()))
          .append(" | ")
          .append(checkout.count(Workload.Outcome.OK))
          .append('/')
          .append(checkout.count(Workload.Outcome.REJECTED))
          .append('/')
          .append(checkout.count(Workload.Outcome.FAILED))
          .append(" | ")
          .append(ms(checkout.p99Ms()))
          .append(" | ")
          .append(report.count(Workload.Outcome.OK))
          .append('/')
          .append(report.count(Workload.Outcome.REJECTED))
          .append('/')
          .append(report.count(Workload.Outcome.FAILED))
          .append(" | ")
          .append(
              last == null ? "" : String.format(Locale.ROOT, "%.1f", last.heapAfterFullGc() / MB))
          .append(" | ")
          .append(last == null ? "" : last.threads())
          .append(" | ")
          .append(last == null ? "" : last.fileDescriptors())
          .append(" | ")
          .append(String.join(", ", peaks))
          .append(" |\n");
    }
    b.append("\nChart: soak.svg. Raw figures: samples.csv (every ")
        .append(Quantities.formatDuration(o.sampleEvery))
        .append("), minutes.csv.\n");
    return b.toString();
  }

  static String ms(double v) {
    return Double.isNaN(v) ? "–" : String.format(Locale.ROOT, "%.1f ms", v);
  }
}
