package io.bulkhead.scenarios;

import io.bulkhead.Compartment;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Diagnosis;
import io.bulkhead.Diagnostician;
import io.bulkhead.LatencySummary;
import io.bulkhead.SizingAdvice;
import io.bulkhead.SizingAdvisor;
import io.bulkhead.micrometer.BulkheadMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ScheduledExecutorService;
import java.util.concurrent.ScheduledThreadPoolExecutor;
import java.util.concurrent.TimeUnit;
import java.util.function.BiConsumer;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.http.HttpStatus;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;

/**
 * What the demo shows about the compartments of a registry, on routes that bypass the server-wide cap
 * of the demo app so they answer while the server is saturated (or on a server of their own, see
 * {@link DashboardServer}):
 * <ul>
 *   <li>{@code /metrics}: Prometheus text, from {@link BulkheadMetrics} bound to a
 *       {@link PrometheusMeterRegistry}, and from any other binder bound to {@link #meters()};
 *   <li>{@code /bulkheads}: a JSON snapshot of every compartment: its settings, the four numbers,
 *       its counters, its {@link Diagnosis}, a {@link SizingAdvisor}'s advice on its limit, and the
 *       figures of the resource behind it when a {@link Resources} knows them (a connection pool's
 *       connections);
 *   <li>{@code /dashboard}: a live page (plain HTML, CSS and JavaScript from this jar's resources)
 *       that polls {@code /bulkheads} twice a second.
 * </ul>
 * A daemon thread samples the {@link Diagnostician} once a second. {@link #close()} stops it and
 * removes the meters.
 *
 * <p>Thread safety: the handlers run on Jetty's threads and the sampling on its own; they share only
 * the registry, the Prometheus registry, the diagnostician, the advisor and the list of
 * {@link Resources}, each thread-safe, and this class keeps no other mutable state. A snapshot reads
 * each compartment's stats once, so its numbers for one compartment hang together, while two
 * compartments (and a compartment and its resource) are read a few microseconds apart.
 */
public final class Observability implements AutoCloseable {

  /**
   * Knows the resource behind some compartments: what a connection pool holds behind the compartment
   * in front of it. Called on Jetty's threads for every compartment of every snapshot, so it must be
   * thread-safe and quick.
   */
  public interface Resources {
    /** The figures of the resource behind {@code compartment}; empty when this knows none. */
    Optional<Resource> of(Compartment compartment);
  }

  /**
   * What a compartment guards, in its own units: {@code kind} says what it is ("pool"), {@code
   * figures} are whole numbers by name in the order to show them ("active", "idle", "total",
   * "awaiting"), and {@code summary} says them in a sentence.
   */
  public record Resource(String kind, Map<String, Long> figures, String summary) {
    public Resource {
      Objects.requireNonNull(kind, "kind");
      Objects.requireNonNull(summary, "summary");
      figures = Collections.unmodifiableMap(new LinkedHashMap<>(figures));
    }
  }

  /** How often the diagnosis samples the compartments. */
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(1);

  private static final String RESOURCES = "/io/bulkhead/scenarios/dashboard/";
  private static final Map<String, String> FILES = Map.of(
      "dashboard.html", "text/html;charset=utf-8",
      "dashboard.css", "text/css;charset=utf-8",
      "dashboard.js", "text/javascript;charset=utf-8");

  private final BulkheadRegistry registry;
  private final PrometheusMeterRegistry prometheus =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final BulkheadMetrics metrics;
  private final Diagnostician diagnostician = Diagnostician.create();
  private final SizingAdvisor advisor = SizingAdvisor.create();
  private final ScheduledExecutorService sampler =
      new ScheduledThreadPoolExecutor(1, Threads.daemon("bulkhead-diagnosis-"));
  private final long startedNanos = System.nanoTime();
  private final List<Resources> resources = new CopyOnWriteArrayList<>();

  Observability(BulkheadRegistry registry) {
    this.registry = registry;
    this.metrics = BulkheadMetrics.of(registry);
    metrics.bindTo(prometheus);
    diagnostician.watch(registry);
    registry.addListener(new BulkheadRegistry.Listener() {
      @Override
      public void onRemoved(Compartment bulkhead) {
        advisor.forget(bulkhead.name());
      }
    });
    sampler.scheduleAtFixedRate(diagnostician::sample, 0, SAMPLE_EVERY.toMillis(),
        TimeUnit.MILLISECONDS);
  }

  /**
   * Hands {@code /metrics}, {@code /bulkheads} and {@code /dashboard/*} with their handlers to
   * {@code route} (a demo app's {@link DemoApp#adminRoute}, or a {@link DashboardServer}'s routes).
   */
  void install(BiConsumer<String, Handler> route) {
    route.accept("/metrics", new Text("text/plain;version=0.0.4;charset=utf-8", prometheus::scrape));
    route.accept("/bulkheads", new Text("application/json;charset=utf-8", this::snapshotJson));
    route.accept("/dashboard/*", new Dashboard());
  }

  /**
   * Adds what {@code more} knows about the resources behind compartments to every later snapshot; the
   * first {@link Resources} added that knows a compartment's resource gives it.
   */
  public void add(Resources more) {
    resources.add(Objects.requireNonNull(more, "more"));
  }

  /** The registry {@code /metrics} scrapes, for binders of other meters (a pool's connections). */
  MeterRegistry meters() {
    return prometheus;
  }

  Diagnostician diagnostician() {
    return diagnostician;
  }

  String scrape() {
    return prometheus.scrape();
  }

  @Override
  public void close() {
    sampler.shutdownNow();
    try {
      sampler.awaitTermination(5, TimeUnit.SECONDS);
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
    metrics.close();
    prometheus.close();
  }

  // --- /bulkheads -------------------------------------------------------------------------------

  /** The JSON document served at {@code /bulkheads}. */
  String snapshotJson() {
    Json j = new Json();
    j.open('{');
    j.field("uptimeMs").number(millis(System.nanoTime() - startedNanos));
    j.field("sampleEveryMs").number(SAMPLE_EVERY.toMillis());
    j.field("compartments").open('[');
    for (Compartment b : registry.all()) {
      compartment(j, b);
    }
    j.close(']');
    j.close('}');
    return j.toString();
  }

  private void compartment(Json j, Compartment b) {
    BulkheadStats s = b.stats();
    BulkheadConfig c = b.config();
    j.open('{');
    j.field("name").string(b.name());
    j.field("config").open('{');
    j.field("limit").number(c.limit());
    j.field("maxQueue").number(c.maxQueue());
    Optional<Duration> maxWait = c.maxWait();
    j.field("maxWaitMs");
    if (maxWait.isPresent()) {
      j.number(maxWait.get().toMillis());
    } else {
      j.nul();
    }
    j.close('}');
    j.field("limit").number(s.limit());
    j.field("inFlight").number(s.inFlight());
    j.field("waiting").number(s.waiting());
    j.field("maxQueue").number(s.maxQueue());
    j.field("admitted").number(s.admitted());
    j.field("completed").number(s.completed());
    j.field("cancelled").number(s.cancelled());
    j.field("rejected").number(s.rejected());
    j.field("rejectedByReason").open('{');
    for (BulkheadFullException.Reason r : BulkheadFullException.Reason.values()) {
      j.field(r.name().toLowerCase(Locale.ROOT)).number(s.rejected(r));
    }
    j.close('}');
    j.field("latency");
    latency(j, s.latency(), s.window());
    j.field("queueWait");
    latency(j, s.queueWait(), s.window());
    j.field("diagnosis");
    diagnosis(j, diagnostician.diagnosis(b.name()));
    j.field("advice");
    advice(j, advisor.advise(b));
    j.field("resource");
    resource(j, resourceOf(b));
    j.close('}');
  }

  private Optional<Resource> resourceOf(Compartment b) {
    for (Resources r : resources) {
      Optional<Resource> found = r.of(b);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
  }

  private static void resource(Json j, Optional<Resource> found) {
    if (found.isEmpty()) {
      j.nul(); // a compartment with nothing known behind it
      return;
    }
    Resource r = found.get();
    j.open('{');
    j.field("kind").string(r.kind());
    j.field("figures").open('{');
    for (Map.Entry<String, Long> f : r.figures().entrySet()) {
      j.field(f.getKey()).number(f.getValue());
    }
    j.close('}');
    j.field("summary").string(r.summary());
    j.close('}');
  }

  private static void advice(Json j, SizingAdvice a) {
    j.open('{');
    j.field("summary").string(a.summary());
    j.field("headroom").decimal(a.headroom());
    j.field("spanMs");
    millisOrNull(j, a.span().isPresent(), a.span().orElse(Duration.ZERO));
    j.field("arrivalRate").decimal(a.arrivalRate().orElse(Double.NaN));
    j.field("rejectionRate").decimal(a.rejectionRate().orElse(Double.NaN));
    j.field("latencyMs");
    millisOrNull(j, a.latency().isPresent(), a.latency().orElse(Duration.ZERO));
    j.field("need").decimal(a.need().orElse(Double.NaN));
    j.field("recommendedLimit").number(a.recommendedLimit());
    j.close('}');
  }

  private static void latency(Json j, LatencySummary l, Duration window) {
    j.open('{');
    j.field("windowMs").number(window.toMillis());
    j.field("count").number(l.count());
    boolean any = l.count() > 0;
    j.field("meanMs");
    millisOrNull(j, any, l.mean());
    j.field("p50Ms");
    millisOrNull(j, any, l.p50());
    j.field("p99Ms");
    millisOrNull(j, any, l.p99());
    j.field("maxMs");
    millisOrNull(j, any, l.max());
    j.close('}');
  }

  private static void diagnosis(Json j, Optional<Diagnosis> found) {
    if (found.isEmpty()) {
      j.nul(); // registered after the last look; the next snapshot has it
      return;
    }
    Diagnosis d = found.get();
    j.open('{');
    j.field("state").string(d.state().name());
    j.field("judged").bool(d.judged());
    j.field("inStateForMs").number(d.inStateFor().toMillis());
    j.field("explanation").string(d.explanation());
    j.field("windowMs").number(d.window().toMillis());
    j.field("saturation").decimal(d.saturation());
    j.field("admittedRate").decimal(d.admittedRate());
    j.field("rejectionRate").decimal(d.rejectionRate());
    j.field("rejectionRatio").decimal(d.rejectionRatio());
    j.field("rejectionSpread").decimal(d.rejectionSpread());
    j.field("longRejectionRate").decimal(d.longRejectionRate());
    j.field("latencyMs");
    millisOrNull(j, d.latency().isPresent(), d.latency().orElse(Duration.ZERO));
    j.field("normalLatencyMs");
    millisOrNull(j, d.normalLatency().isPresent(), d.normalLatency().orElse(Duration.ZERO));
    j.close('}');
  }

  private static void millisOrNull(Json j, boolean present, Duration d) {
    if (present) {
      j.decimal(d.toNanos() / 1e6);
    } else {
      j.nul();
    }
  }

  private static long millis(long nanos) {
    return TimeUnit.NANOSECONDS.toMillis(nanos);
  }

  // --- handlers ---------------------------------------------------------------------------------

  /** Answers every GET with text made fresh for it; never cached. */
  private static final class Text extends Handler.Abstract.NonBlocking {
    private final String contentType;
    private final java.util.function.Supplier<String> body;

    Text(String contentType, java.util.function.Supplier<String> body) {
      this.contentType = contentType;
      this.body = body;
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      response.setStatus(HttpStatus.OK_200);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, contentType);
      response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-store");
      Content.Sink.write(response, true, body.get(), callback);
      return true;
    }
  }

  /** Serves the three dashboard files; {@code /dashboard} and {@code /dashboard/} get the page. */
  private static final class Dashboard extends Handler.Abstract.NonBlocking {
    private final Map<String, byte[]> files = new java.util.HashMap<>();

    Dashboard() {
      for (String name : FILES.keySet()) {
        try (InputStream in = Observability.class.getResourceAsStream(RESOURCES + name)) {
          if (in == null) {
            throw new IllegalStateException("dashboard resource " + RESOURCES + name + " is missing");
          }
          files.put(name, in.readAllBytes());
        } catch (IOException e) {
          throw new IllegalStateException("cannot read dashboard resource " + name, e);
        }
      }
    }

    @Override
    public boolean handle(Request request, Response response, Callback callback) {
      String path = request.getHttpURI().getDecodedPath();
      String name = path.equals("/dashboard") || path.equals("/dashboard/")
          ? "dashboard.html"
          : path.substring("/dashboard/".length());
      byte[] content = files.get(name);
      if (content == null) {
        response.setStatus(HttpStatus.NOT_FOUND_404);
        response.getHeaders().put(HttpHeader.CONTENT_TYPE, "text/plain;charset=utf-8");
        Content.Sink.write(response, true, "no such dashboard file: " + name + "\n", callback);
        return true;
      }
      response.setStatus(HttpStatus.OK_200);
      response.getHeaders().put(HttpHeader.CONTENT_TYPE, FILES.get(name));
      response.getHeaders().put(HttpHeader.CACHE_CONTROL, "no-cache");
      response.write(true, ByteBuffer.wrap(content), callback);
      return true;
    }
  }

  // --- a small JSON writer -------------------------------------------------------------------------

  /** Just enough JSON for the snapshot: objects, arrays, strings, numbers, booleans and null. */
  static final class Json {
    private final StringBuilder out = new StringBuilder(1024);
    private boolean needComma;

    Json open(char bracket) {
      comma();
      out.append(bracket);
      needComma = false;
      return this;
    }

    Json close(char bracket) {
      out.append(bracket);
      needComma = true;
      return this;
    }

    Json field(String name) {
      comma();
      quote(name);
      out.append(':');
      needComma = false;
      return this;
    }

    Json string(String value) {
      comma();
      quote(value);
      needComma = true;
      return this;
    }

    Json number(long value) {
      comma();
      out.append(value);
      needComma = true;
      return this;
    }

    Json number(OptionalInt value) {
      return value.isPresent() ? number(value.getAsInt()) : nul();
    }

    Json decimal(double value) {
      if (!Double.isFinite(value)) {
        return nul();
      }
      comma();
      out.append(String.format(Locale.ROOT, "%.3f", value));
      needComma = true;
      return this;
    }

    Json bool(boolean value) {
      comma();
      out.append(value);
      needComma = true;
      return this;
    }

    Json nul() {
      comma();
      out.append("null");
      needComma = true;
      return this;
    }

    private void comma() {
      if (needComma) {
        out.append(',');
        needComma = false;
      }
    }

    private void quote(String s) {
      out.append('"');
      for (int i = 0; i < s.length(); i++) {
        char ch = s.charAt(i);
        switch (ch) {
          case '"' -> out.append("\\\"");
          case '\\' -> out.append("\\\\");
          case '\n' -> out.append("\\n");
          case '\r' -> out.append("\\r");
          case '\t' -> out.append("\\t");
          default -> {
            if (ch < 0x20) {
              out.append(String.format(Locale.ROOT, "\\u%04x", (int) ch));
            } else {
              out.append(ch);
            }
          }
        }
      }
      out.append('"');
    }

    @Override
    public String toString() {
      return out.toString();
    }
  }
}
