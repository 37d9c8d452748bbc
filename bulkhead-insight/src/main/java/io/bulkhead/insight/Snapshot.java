package io.bulkhead.insight;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadStats;
import io.bulkhead.LatencySummary;
import io.bulkhead.internal.JsonWriter;
import java.time.Duration;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * What an {@link Insight} knows of every compartment it watches, at one moment ({@link
 * Insight#snapshot()}), as the JSON document a {@code /bulkheads} endpoint or a dashboard serves:
 * {@link #toJson()} writes {@code {"compartments": [...]}}, one object per compartment in the order
 * they were watched:
 *
 * <pre>
 * name                      the compartment's name
 * config                    {limit, maxQueue, maxWaitMs}: its settings (null: unbounded or none)
 * limit, inFlight, waiting  the four numbers to watch, with rejected below
 * maxQueue                  the current queue bound, null when unbounded
 * admitted, completed, cancelled, rejected     counters since it was built
 * rejectedByReason          {queue_full, wait_timeout, ...}: rejected by reason, lower case
 * latency, queueWait        {windowMs, count, meanMs, p50Ms, p99Ms, maxMs} over the stats window;
 *                           the durations are null when nothing was observed
 * diagnosis                 {state, judged, inStateForMs, explanation, windowMs, saturation,
 *                           admittedRate, rejectionRate, rejectionRatio, rejectionSpread,
 *                           longRejectionRate, latencyMs, normalLatencyMs}: see {@link Diagnosis}
 * advice                    {summary, headroom, spanMs, arrivalRate, rejectionRate, latencyMs, need,
 *                           recommendedLimit}: see {@link SizingAdvice}; null until first sampled
 * resource                  {kind, figures, summary} from a {@link ResourceView}, or null
 * adaptive                  {controller, min, max, limit, changes, lastMove}: an adaptive limit's
 *                           controller, range and how often it moved; lastMove is why it last
 *                           moved ("admitted p50 rose from 2s to 29s against a baseline of 2s:
 *                           limit 10 → 4"), null before any move; adaptive is null for a static
 *                           limit
 * </pre>
 *
 * Durations are in milliseconds (fractions kept), rates per second, shares from 0 to 1; a figure
 * that is not known is {@code null}, never a made-up zero. {@link #compartmentsJson()} is the array
 * alone, for an endpoint that adds fields of its own. The stats are read once per compartment when
 * the snapshot is taken, so its numbers hang together; the diagnosis and the advice are those of
 * the insight's latest sample. This class is immutable.
 */
public final class Snapshot {

  /** One compartment as the snapshot saw it; advice and resource are null when unknown. */
  record Row(
      String name,
      BulkheadConfig config,
      BulkheadStats stats,
      Diagnosis diagnosis,
      SizingAdvice advice,
      ResourceView.Resource resource,
      AdaptiveLimit.Status adaptive) {}

  private final List<Row> rows;

  Snapshot(List<Row> rows) {
    this.rows = List.copyOf(rows);
  }

  /** The names of the compartments in this snapshot, in order. */
  public List<String> names() {
    return rows.stream().map(Row::name).toList();
  }

  /**
   * This snapshot with the compartment named {@code name} alone, or with none if it has no such
   * compartment: for an endpoint that serves one compartment in the same document.
   */
  public Snapshot only(String name) {
    Objects.requireNonNull(name, "name");
    return new Snapshot(rows.stream().filter(r -> r.name().equals(name)).toList());
  }

  /** The document: {@code {"compartments": [...]}}, compact. */
  public String toJson() {
    JsonWriter out = JsonWriter.compact();
    out.beginObject().name("compartments");
    writeCompartments(out);
    return out.endObject().toJson();
  }

  /**
   * The array of compartments alone, {@code [...]}, compact: for an endpoint that puts it inside a
   * document of its own (with its JSON library's raw value, such as Jackson's {@code
   * writeRawValue}).
   */
  public String compartmentsJson() {
    JsonWriter out = JsonWriter.compact();
    writeCompartments(out);
    return out.toJson();
  }

  private void writeCompartments(JsonWriter out) {
    out.beginArray();
    for (Row r : rows) {
      compartment(out, r);
    }
    out.endArray();
  }

  private static void compartment(JsonWriter j, Row r) {
    BulkheadStats s = r.stats();
    BulkheadConfig c = r.config();
    j.beginObject();
    j.name("name").value(r.name());
    j.name("config").beginObject();
    j.name("limit").value(c.limit());
    j.name("maxQueue");
    wholeOrNull(j, c.maxQueue());
    j.name("maxWaitMs");
    if (c.maxWait().isPresent()) {
      j.value(c.maxWait().get().toMillis());
    } else {
      j.nullValue();
    }
    j.endObject();
    j.name("limit").value(s.limit());
    j.name("inFlight").value(s.inFlight());
    j.name("waiting").value(s.waiting());
    j.name("maxQueue");
    wholeOrNull(j, s.maxQueue());
    j.name("admitted").value(s.admitted());
    j.name("completed").value(s.completed());
    j.name("cancelled").value(s.cancelled());
    j.name("rejected").value(s.rejected());
    j.name("rejectedByReason").beginObject();
    for (BulkheadFullException.Reason reason : BulkheadFullException.Reason.values()) {
      j.name(reason.name().toLowerCase(Locale.ROOT)).value(s.rejected(reason));
    }
    j.endObject();
    j.name("latency");
    latency(j, s.latency(), s.window());
    j.name("queueWait");
    latency(j, s.queueWait(), s.window());
    j.name("diagnosis");
    diagnosis(j, r.diagnosis());
    j.name("advice");
    advice(j, r.advice());
    j.name("resource");
    resource(j, r.resource());
    j.name("adaptive");
    adaptive(j, r.adaptive());
    j.endObject();
  }

  private static void adaptive(JsonWriter j, AdaptiveLimit.Status a) {
    if (a == null) {
      j.nullValue(); // a static limit
      return;
    }
    j.beginObject();
    j.name("controller").value(a.controller());
    j.name("min").value(a.min());
    j.name("max").value(a.max());
    j.name("limit").value(a.limit());
    j.name("changes").value(a.changes());
    j.name("lastMove");
    if (a.changes() == 0) {
      j.nullValue();
    } else {
      j.value(lastMove(a));
    }
    j.endObject();
  }

  /** Why the limit last moved, and from what to what: "...: limit 10 → 4". */
  static String lastMove(AdaptiveLimit.Status a) {
    return a.lastReason() + ": limit " + a.lastFrom() + " → " + a.lastTo();
  }

  private static void latency(JsonWriter j, LatencySummary l, Duration window) {
    boolean any = l.count() > 0;
    j.beginObject();
    j.name("windowMs").value(window.toMillis());
    j.name("count").value(l.count());
    j.name("meanMs").value(millis(any ? Optional.of(l.mean()) : Optional.empty()));
    j.name("p50Ms").value(millis(any ? Optional.of(l.p50()) : Optional.empty()));
    j.name("p99Ms").value(millis(any ? Optional.of(l.p99()) : Optional.empty()));
    j.name("maxMs").value(millis(any ? Optional.of(l.max()) : Optional.empty()));
    j.endObject();
  }

  private static void diagnosis(JsonWriter j, Diagnosis d) {
    j.beginObject();
    j.name("state").value(d.state().name());
    j.name("judged").value(d.judged());
    j.name("inStateForMs").value(d.inStateFor().toMillis());
    j.name("explanation").value(d.explanation());
    j.name("windowMs").value(d.window().toMillis());
    j.name("saturation").value(d.saturation());
    j.name("admittedRate").value(d.admittedRate());
    j.name("rejectionRate").value(d.rejectionRate());
    j.name("rejectionRatio").value(d.rejectionRatio());
    j.name("rejectionSpread").value(d.rejectionSpread());
    j.name("longRejectionRate").value(d.longRejectionRate());
    j.name("latencyMs").value(millis(d.latency()));
    j.name("normalLatencyMs").value(millis(d.normalLatency()));
    j.endObject();
  }

  private static void advice(JsonWriter j, SizingAdvice a) {
    if (a == null) {
      j.nullValue(); // watched since the last sample: the next one has it
      return;
    }
    j.beginObject();
    j.name("summary").value(a.summary());
    j.name("headroom").value(a.headroom());
    j.name("spanMs").value(millis(a.span()));
    j.name("arrivalRate").value(a.arrivalRate().orElse(Double.NaN));
    j.name("rejectionRate").value(a.rejectionRate().orElse(Double.NaN));
    j.name("latencyMs").value(millis(a.latency()));
    j.name("need").value(a.need().orElse(Double.NaN));
    j.name("recommendedLimit");
    wholeOrNull(j, a.recommendedLimit());
    j.endObject();
  }

  private static void resource(JsonWriter j, ResourceView.Resource r) {
    if (r == null) {
      j.nullValue(); // nothing known behind this compartment
      return;
    }
    j.beginObject();
    j.name("kind").value(r.kind());
    j.name("figures").beginObject();
    for (Map.Entry<String, Long> f : r.figures().entrySet()) {
      j.name(f.getKey()).value(f.getValue());
    }
    j.endObject();
    j.name("summary").value(r.summary());
    j.endObject();
  }

  /** Milliseconds with the fraction kept; NaN (written as null) when absent. */
  private static double millis(Optional<Duration> d) {
    return d.isPresent() ? d.get().toNanos() / 1e6 : Double.NaN;
  }

  private static void wholeOrNull(JsonWriter j, OptionalInt value) {
    if (value.isPresent()) {
      j.value(value.getAsInt());
    } else {
      j.nullValue();
    }
  }

  @Override
  public String toString() {
    return "Snapshot" + names();
  }
}
