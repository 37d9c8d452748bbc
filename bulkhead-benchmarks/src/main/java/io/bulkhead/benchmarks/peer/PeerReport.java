package io.bulkhead.benchmarks.peer;

import io.bulkhead.demo.DemoSettings;
import io.bulkhead.demo.Latency;
import io.bulkhead.demo.LoadResult;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.Duration;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;

/**
 * The experiment's result as {@code peer.json} (figures, sampled series, and the Markdown section
 * that {@code report.py} puts into BENCHMARKS.md) and as a table for the terminal. Every figure
 * comes from a {@link PeerResult}; none is typed here.
 */
final class PeerReport {

  private PeerReport() {}

  // ----------------------------------------------------------------------------------------------
  // Rows shared by the Markdown and the terminal table

  private record Row(String label, Function<VariantResult, String> value, boolean key) {}

  private static List<Row> rows() {
    return List.of(
        new Row("login p50", v -> ms(v.load().login().p50Ms()), false),
        new Row("login p99", v -> ms(v.load().login().p99Ms()), true),
        new Row("login max", v -> ms(v.load().login().maxMs()), false),
        new Row("chats answered 200 / 503 / other", v -> v.load().chatOk() + " / "
            + v.load().chatRejected() + " / " + v.load().chatOther(), true),
        new Row("503 p50 / p99", v -> ms(v.load().rejected().p50Ms()) + " / "
            + ms(v.load().rejected().p99Ms()), false),
        new Row("server slots held by waiting chats, peak",
            v -> Integer.toString(v.timeline().peak(Timeline.Point::chatsWaiting)), true),
        new Row("server slot-seconds held by waiting chats",
            v -> oneDecimal(v.timeline().integralSeconds(Timeline.Point::chatsWaiting)), false),
        new Row("requests queued for a server slot, peak",
            v -> Integer.toString(v.timeline().peak(Timeline.Point::serverWaiting)), false),
        new Row("upstream connections, most open at once",
            v -> Integer.toString(v.upstreamMaxConnections()), false),
        new Row("last answer (wall time)", v -> ms(v.load().wallMs()), false));
  }

  // ----------------------------------------------------------------------------------------------
  // Terminal

  static String table(PeerResult r) {
    StringBuilder out = new StringBuilder();
    out.append(String.format(Locale.ROOT, "%-44s%22s%22s%n", "", Variant.BULKHEAD.title(),
        Variant.RESILIENCE4J.title()));
    for (Row row : rows()) {
      out.append(String.format(Locale.ROOT, "%-44s%22s%22s%n", row.label(),
          row.value().apply(r.bulkhead()), row.value().apply(r.resilience4j())));
    }
    out.append(machine(r)).append('\n');
    return out.toString();
  }

  // ----------------------------------------------------------------------------------------------
  // Markdown

  /**
   * The section under "The experiment against a peer" in BENCHMARKS.md.
   *
   * @param svgLink the chart's path as BENCHMARKS.md (at the repository's root) links it
   */
  static String markdown(PeerResult r, String svgLink) {
    DemoSettings s = r.settings();
    StringBuilder m = new StringBuilder();
    m.append("The slow-upstream experiment, both variants in one JVM on loopback: a fake upstream "
        + "that answers after ").append(duration(s.delay())).append("; the demo app, every route of "
        + "which sits behind a server-wide cap of ").append(s.serverLimit())
        .append(" slots with an unbounded queue; ").append(s.chats())
        .append(" `/chat` at once, then ")
        .append(s.logins()).append(" `/login` ").append(duration(s.loginsAfter()))
        .append(" later. Only the guard on `/chat` differs. **")
        .append(Variant.BULKHEAD.title()).append("** is the demo's bulkhead mode: compartment "
        + "`llm`, ").append(s.llmLimit()).append(" in flight, at most ").append(s.llmQueue())
        .append(" waiting, ").append(duration(s.llmWait())).append(" wait, waiting without a "
        + "thread. **").append(Variant.RESILIENCE4J.title()).append("** is Resilience4j ")
        .append(r.resilience4jVersion()).append("'s `SemaphoreBulkhead` (maxConcurrentCalls ")
        .append(s.llmLimit()).append(", maxWaitDuration ").append(duration(s.llmWait()))
        .append(", no bound on waiters) around the blocking upstream call, `executeCallable` on "
        + "the Jetty thread. Each variant's client opens at most ").append(s.llmLimit())
        .append(" connections to the upstream.\n\n");

    m.append("| | ").append(Variant.BULKHEAD.title()).append(" (").append(s.llmLimit())
        .append(" / ").append(s.llmQueue()).append(" / ").append(duration(s.llmWait()))
        .append(") | ").append(Variant.RESILIENCE4J.title()).append(" (").append(s.llmLimit())
        .append(", ").append(duration(s.llmWait())).append(", unbounded) |\n");
    m.append("|---|---:|---:|\n");
    for (Row row : rows()) {
      String a = row.value().apply(r.bulkhead());
      String b = row.value().apply(r.resilience4j());
      if (row.key()) {
        m.append("| **").append(row.label()).append("** | **").append(a).append("** | **")
            .append(b).append("** |\n");
      } else {
        m.append("| ").append(row.label()).append(" | ").append(a).append(" | ").append(b)
            .append(" |\n");
      }
    }
    m.append('\n');

    m.append("![Server slots held by waiting chats, and requests queued for a server slot, over "
        + "time, for both variants](").append(svgLink).append(")\n\n");

    long chartEnd = r.chartEndNanos();
    long wholeRun = Math.max(r.bulkhead().load().wallNanos(), r.resilience4j().load().wallNanos());
    m.append("A chat waiting for its guard's verdict has already passed the server cap, so it "
        + "holds "
        + "a server slot that a login could have used. For ").append(Variant.BULKHEAD.title())
        .append(" that is the `llm` compartment's waiting count; for ")
        .append(Variant.RESILIENCE4J.title()).append(", the chats that entered the `/chat` "
        + "handler and were neither admitted nor rejected by the bulkhead yet (a counter around "
        + "`executeCallable`). Both, and the server compartment's queue, were sampled every ")
        .append(duration(r.sampleEvery())).append(" (")
        .append(r.bulkhead().timeline().points().size()).append(" and ")
        .append(r.resilience4j().timeline().points().size())
        .append(" samples; the longest gap between two samples was ")
        .append(ms(Math.max(r.bulkhead().timeline().longestGapNanos(),
            r.resilience4j().timeline().longestGapNanos()) / 1e6))
        .append("), so a peak is the largest sampled value. ");
    String ours = atLogins(r.bulkhead(), s);
    String theirs = atLogins(r.resilience4j(), s);
    if (ours != null && theirs != null) {
      m.append("In the last sample before the logins were sent, the ").append(ours)
          .append("; the ").append(theirs).append(". ");
    }
    if (chartEnd < wholeRun) {
      m.append("The chart shows the first ").append(seconds(chartEnd)).append("; from then to the "
          + "end of the run (").append(seconds(wholeRun)).append(") nothing waited in either "
          + "variant. ");
    }
    m.append("Latencies run from sending a request to the last byte of its answer, one connection "
        + "per request. Both apps' Jetty thread pools were grown to ")
        .append(PeerApp.threadsFor(s)).append(" threads before the load, as on a server that has "
        + "been serving traffic: Resilience4j parks one thread per waiting chat, and a cold pool "
        + "would create them during the burst. Each variant ran once, ")
        .append(Variant.BULKHEAD.title()).append(" first, after a short warm-up run of both.\n\n");
    m.append(machine(r)).append(". Run it alone with `bulkhead-benchmarks/peer-experiment.sh "
        + "DIR [--delay 3s]` after building the benchmarks.\n");
    return m.toString();
  }

  /**
   * "Bulkhead run held 30 of the 50 server slots (10 chats calling the upstream, 20 waiting for the
   * guard) and 0 requests were queued for one", from the last sample before the logins were sent;
   * null if there is none.
   */
  private static String atLogins(VariantResult v, DemoSettings s) {
    Timeline.Point before = null;
    for (Timeline.Point p : v.timeline().points()) {
      if (p.atNanos() > s.loginsAfter().toNanos()) {
        break;
      }
      before = p;
    }
    if (before == null) {
      return null;
    }
    return v.variant().title() + " run held " + before.serverInFlight() + " of the "
        + s.serverLimit() + " server slots (" + before.chatsCalling() + " chats calling the "
        + "upstream, " + before.chatsWaiting() + " waiting for the guard) and "
        + before.serverWaiting() + " requests were queued for one";
  }

  static String machine(PeerResult r) {
    return "Machine: " + r.processors() + " processors, load average " + load(r.loadAverageBefore())
        + " before and " + load(r.loadAverageAfter()) + " after; Java " + r.javaVersion()
        + "; started " + DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
            r.startedAt().atOffset(ZoneOffset.UTC).withNano(0)) + " UTC, "
        + seconds(r.elapsed().toNanos()) + " for both runs";
  }

  // ----------------------------------------------------------------------------------------------
  // JSON

  static String json(PeerResult r, String svgLink, String markdown) {
    DemoSettings s = r.settings();
    StringBuilder j = new StringBuilder(256 * 1024);
    j.append("{\n");
    j.append("  \"date\": ").append(str(DateTimeFormatter.ISO_INSTANT.format(
        r.startedAt().atOffset(ZoneOffset.UTC).withNano(0)))).append(",\n");
    j.append("  \"setup\": {\"delay_ms\": ").append(s.delay().toMillis())
        .append(", \"chats\": ").append(s.chats())
        .append(", \"logins\": ").append(s.logins())
        .append(", \"logins_after_ms\": ").append(s.loginsAfter().toMillis())
        .append(", \"server_limit\": ").append(s.serverLimit())
        .append(", \"chat_limit\": ").append(s.llmLimit())
        .append(", \"chat_queue_bulkhead\": ").append(s.llmQueue())
        .append(", \"chat_wait_ms\": ").append(s.llmWait().toMillis())
        .append(", \"upstream_deadline_ms\": ").append(s.upstreamDeadline().toMillis())
        .append(", \"jetty_threads\": ").append(PeerApp.threadsFor(s))
        .append(", \"sample_every_ms\": ").append(num(r.sampleEvery().toNanos() / 1e6))
        .append("},\n");
    j.append("  \"machine\": {\"processors\": ").append(r.processors())
        .append(", \"load_before\": ").append(num(r.loadAverageBefore()))
        .append(", \"load_after\": ").append(num(r.loadAverageAfter()))
        .append(", \"java\": ").append(str(r.javaVersion()))
        .append(", \"resilience4j\": ").append(str(r.resilience4jVersion()))
        .append(", \"elapsed_ms\": ").append(r.elapsed().toMillis()).append("},\n");
    for (VariantResult v : r.variants()) {
      j.append("  ").append(str(v.variant().key())).append(": ").append(variant(v)).append(",\n");
    }
    j.append("  \"chart_end_ms\": ").append(r.chartEndNanos() / 1_000_000).append(",\n");
    j.append("  \"svg\": ").append(str(svgLink)).append(",\n");
    j.append("  \"markdown\": ").append(str(markdown)).append("\n");
    j.append("}\n");
    return j.toString();
  }

  private static String variant(VariantResult v) {
    LoadResult load = v.load();
    Latency login = load.login();
    Latency rejected = load.rejected();
    Timeline t = v.timeline();
    StringBuilder j = new StringBuilder();
    j.append("{\n");
    j.append("    \"login\": {\"p50_ms\": ").append(num(login.p50Ms())).append(", \"p99_ms\": ")
        .append(num(login.p99Ms())).append(", \"max_ms\": ").append(num(login.maxMs()))
        .append(", \"failures\": ").append(load.loginFailures()).append("},\n");
    j.append("    \"chat\": {\"200\": ").append(load.chatOk()).append(", \"503\": ")
        .append(load.chatRejected()).append(", \"other\": ").append(load.chatOther())
        .append("},\n");
    j.append("    \"rejected\": {\"p50_ms\": ").append(num(rejected.p50Ms()))
        .append(", \"p99_ms\": ").append(num(rejected.p99Ms())).append("},\n");
    j.append("    \"wall_ms\": ").append(num(load.wallMs())).append(",\n");
    j.append("    \"upstream\": {\"max_open_connections\": ").append(v.upstreamMaxConnections())
        .append(", \"requests\": ").append(v.upstreamRequests()).append("},\n");
    j.append("    \"chats_waiting\": {\"peak\": ").append(t.peak(Timeline.Point::chatsWaiting))
        .append(", \"slot_seconds\": ")
        .append(num(round3(t.integralSeconds(Timeline.Point::chatsWaiting)))).append("},\n");
    j.append("    \"server_waiting\": {\"peak\": ").append(t.peak(Timeline.Point::serverWaiting))
        .append(", \"request_seconds\": ")
        .append(num(round3(t.integralSeconds(Timeline.Point::serverWaiting)))).append("},\n");
    j.append("    \"server_in_flight_peak\": ").append(t.peak(Timeline.Point::serverInFlight))
        .append(",\n");
    j.append("    \"samples\": ").append(t.points().size()).append(", \"longest_gap_ms\": ")
        .append(num(round3(t.longestGapNanos() / 1e6))).append(",\n");
    j.append("    \"series\": {\n");
    series(j, "t_ms", t, p -> num(round3(p.atNanos() / 1e6)), false);
    series(j, "chats_waiting", t, p -> Integer.toString(p.chatsWaiting()), false);
    series(j, "chats_calling", t, p -> Integer.toString(p.chatsCalling()), false);
    series(j, "server_in_flight", t, p -> Integer.toString(p.serverInFlight()), false);
    series(j, "server_waiting", t, p -> Integer.toString(p.serverWaiting()), true);
    j.append("    }\n  }");
    return j.toString();
  }

  private static void series(StringBuilder j, String name, Timeline t,
      Function<Timeline.Point, String> value, boolean last) {
    j.append("      ").append(str(name)).append(": [");
    List<Timeline.Point> points = t.points();
    for (int i = 0; i < points.size(); i++) {
      if (i > 0) {
        j.append(", ");
      }
      j.append(value.apply(points.get(i)));
    }
    j.append(last ? "]\n" : "],\n");
  }

  /** A JSON string literal. */
  static String str(String s) {
    StringBuilder out = new StringBuilder(s.length() + 16).append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      switch (c) {
        case '"':
          out.append("\\\"");
          break;
        case '\\':
          out.append("\\\\");
          break;
        case '\n':
          out.append("\\n");
          break;
        case '\r':
          out.append("\\r");
          break;
        case '\t':
          out.append("\\t");
          break;
        default:
          if (c < 0x20) {
            out.append(String.format(Locale.ROOT, "\\u%04x", (int) c));
          } else {
            out.append(c);
          }
      }
    }
    return out.append('"').toString();
  }

  // ----------------------------------------------------------------------------------------------
  // Formatting

  static String ms(Double millis) {
    if (millis == null) {
      return "–";
    }
    if (millis < 100) {
      return String.format(Locale.ROOT, "%.1f ms", millis);
    }
    return String.format(Locale.ROOT, "%,.0f ms", millis);
  }

  /** "30 s", "1 s", "20 ms", "1.5 s". */
  static String duration(Duration d) {
    long millis = d.toMillis();
    if (millis < 1000) {
      return millis + " ms";
    }
    return seconds(d.toNanos());
  }

  static String seconds(long nanos) {
    return BigDecimal.valueOf(nanos / 1e9).setScale(1, RoundingMode.HALF_UP).stripTrailingZeros()
        .toPlainString() + " s";
  }

  private static String oneDecimal(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  private static double round3(double v) {
    return Math.round(v * 1000) / 1000.0;
  }

  private static String num(Double v) {
    return v == null ? "null" : num(v.doubleValue());
  }

  private static String num(double v) {
    if (Double.isNaN(v) || Double.isInfinite(v)) {
      return "null";
    }
    return BigDecimal.valueOf(v).stripTrailingZeros().toPlainString();
  }

  private static String load(double average) {
    return average < 0 ? "unknown" : String.format(Locale.ROOT, "%.2f", average);
  }
}
