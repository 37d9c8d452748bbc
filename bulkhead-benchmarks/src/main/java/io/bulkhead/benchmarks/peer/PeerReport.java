package io.bulkhead.benchmarks.peer;

import io.bulkhead.internal.JsonWriter;
import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Experiment;
import java.math.BigDecimal;
import java.math.RoundingMode;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.List;
import java.util.Locale;
import java.util.function.Function;
import java.util.function.ToDoubleFunction;

/**
 * The experiment's result as {@code peer.json} (figures and sampled series, which {@code
 * scripts/report.py} turns into the chart and the section of BENCHMARKS.md) and as a table for the
 * terminal. Every figure comes from a {@link PeerResult}; none is typed here.
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
        new Row(
            "chats answered 200 / 503 / other",
            v -> v.load().chatOk() + " / " + v.load().chatRejected() + " / " + v.load().chatOther(),
            true),
        new Row(
            "503 p50 / p99",
            v -> ms(v.load().rejected().p50Ms()) + " / " + ms(v.load().rejected().p99Ms()),
            false),
        new Row(
            "server slots held by waiting chats, peak",
            v -> Integer.toString(v.timeline().peak(Timeline.Point::chatsWaiting)),
            true),
        new Row(
            "server slot-seconds held by waiting chats",
            v -> oneDecimal(v.timeline().integralSeconds(Timeline.Point::chatsWaiting)),
            false),
        new Row(
            "requests queued for a server slot, peak",
            v -> Integer.toString(v.timeline().peak(Timeline.Point::serverWaiting)),
            false),
        new Row(
            "upstream connections, most open at once",
            v -> Integer.toString(v.upstreamMaxConnections()),
            false),
        new Row("last answer (wall time)", v -> ms(v.load().wallMs()), false));
  }

  // ----------------------------------------------------------------------------------------------
  // Terminal

  static String table(PeerResult r) {
    StringBuilder out = new StringBuilder();
    out.append(
        String.format(
            Locale.ROOT,
            "%-44s%22s%22s%n",
            "",
            Variant.BULKHEAD.title(),
            Variant.RESILIENCE4J.title()));
    for (Row row : rows()) {
      out.append(
          String.format(
              Locale.ROOT,
              "%-44s%22s%22s%n",
              row.label(),
              row.value().apply(r.bulkhead()),
              row.value().apply(r.resilience4j())));
    }
    out.append(machine(r)).append('\n');
    return out.toString();
  }

  static String machine(PeerResult r) {
    return "Machine: "
        + Experiment.machineLine(
            r.processors(), r.loadAverageBefore(), r.loadAverageAfter(), r.javaVersion())
        + "; started "
        + DateTimeFormatter.ISO_LOCAL_DATE_TIME.format(
            r.startedAt().atOffset(ZoneOffset.UTC).withNano(0))
        + " UTC, "
        + seconds(r.elapsed().toNanos())
        + " for both runs";
  }

  // ----------------------------------------------------------------------------------------------
  // JSON

  static String json(PeerResult r) {
    DemoSettings s = r.settings();
    JsonWriter j = JsonWriter.pretty().beginObject();
    j.name("date")
        .value(
            DateTimeFormatter.ISO_INSTANT.format(
                r.startedAt().atOffset(ZoneOffset.UTC).withNano(0)));
    j.name("setup")
        .beginObject()
        .name("delay_ms")
        .value(s.delay().toMillis())
        .name("chats")
        .value(s.chats())
        .name("logins")
        .value(s.logins())
        .name("logins_after_ms")
        .value(s.loginsAfter().toMillis())
        .name("server_limit")
        .value(s.serverLimit())
        .name("chat_limit")
        .value(s.llmLimit())
        .name("chat_queue_bulkhead")
        .value(s.llmQueue())
        .name("chat_wait_ms")
        .value(s.llmWait().toMillis())
        .name("upstream_deadline_ms")
        .value(s.upstreamDeadline().toMillis())
        .name("jetty_threads")
        .value(PeerApp.threadsFor(s))
        .name("sample_every_ms")
        .value(r.sampleEvery().toNanos() / 1e6)
        .endObject();
    j.name("machine")
        .beginObject()
        .name("processors")
        .value(r.processors())
        .name("load_before")
        .value(r.loadAverageBefore())
        .name("load_after")
        .value(r.loadAverageAfter())
        .name("java")
        .value(r.javaVersion())
        .name("resilience4j")
        .value(r.resilience4jVersion())
        .name("elapsed_ms")
        .value(r.elapsed().toMillis())
        .endObject();
    for (VariantResult v : r.variants()) {
      variant(j.name(v.variant().key()), v);
    }
    j.name("chart_end_ms").value(round3(r.chartEndNanos() / 1e6));
    j.name("run_end_ms")
        .value(
            round3(
                Math.max(r.bulkhead().load().wallNanos(), r.resilience4j().load().wallNanos())
                    / 1e6));
    return j.endObject().toJson() + "\n";
  }

  private static void variant(JsonWriter j, VariantResult v) {
    Timeline t = v.timeline();
    j.beginObject();
    v.load().writeFields(j, true);
    j.name("upstream")
        .beginObject()
        .name("max_open_connections")
        .value(v.upstreamMaxConnections())
        .name("requests")
        .value(v.upstreamRequests())
        .endObject();
    j.name("chats_waiting")
        .beginObject()
        .name("peak")
        .value(t.peak(Timeline.Point::chatsWaiting))
        .name("slot_seconds")
        .value(round3(t.integralSeconds(Timeline.Point::chatsWaiting)))
        .endObject();
    j.name("server_waiting")
        .beginObject()
        .name("peak")
        .value(t.peak(Timeline.Point::serverWaiting))
        .name("request_seconds")
        .value(round3(t.integralSeconds(Timeline.Point::serverWaiting)))
        .endObject();
    j.name("server_in_flight_peak").value(t.peak(Timeline.Point::serverInFlight));
    j.name("samples").value(t.points().size());
    j.name("longest_gap_ms").value(round3(t.longestGapNanos() / 1e6));
    j.name("series").beginObject();
    series(j, "t_ms", t, p -> round3(p.atNanos() / 1e6));
    series(j, "chats_waiting", t, Timeline.Point::chatsWaiting);
    series(j, "chats_calling", t, Timeline.Point::chatsCalling);
    series(j, "server_in_flight", t, Timeline.Point::serverInFlight);
    series(j, "server_waiting", t, Timeline.Point::serverWaiting);
    j.endObject();
    j.endObject();
  }

  private static void series(
      JsonWriter j, String name, Timeline t, ToDoubleFunction<Timeline.Point> value) {
    j.name(name).beginArray();
    for (Timeline.Point p : t.points()) {
      j.value(value.applyAsDouble(p));
    }
    j.endArray();
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

  static String seconds(long nanos) {
    return BigDecimal.valueOf(nanos / 1e9)
            .setScale(1, RoundingMode.HALF_UP)
            .stripTrailingZeros()
            .toPlainString()
        + " s";
  }

  private static String oneDecimal(double v) {
    return String.format(Locale.ROOT, "%.1f", v);
  }

  private static double round3(double v) {
    return Math.round(v * 1000) / 1000.0;
  }
}
