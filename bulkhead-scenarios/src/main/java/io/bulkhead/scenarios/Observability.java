package io.bulkhead.scenarios;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.insight.Insight;
import io.bulkhead.insight.ResourceView;
import io.bulkhead.insight.Snapshot;
import io.bulkhead.internal.DaemonThreads;
import io.bulkhead.internal.JsonWriter;
import io.bulkhead.micrometer.BulkheadMetrics;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.io.IOException;
import java.io.InputStream;
import java.nio.ByteBuffer;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Optional;
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
 * What the demo shows about the compartments of a registry, on routes that bypass the server-wide
 * cap of the demo app so they answer while the server is saturated (or on a server of their own,
 * see {@link DashboardServer}):
 *
 * <ul>
 *   <li>{@code /metrics}: Prometheus text, from {@link BulkheadMetrics} bound to a {@link
 *       PrometheusMeterRegistry}, and from any other binder bound to {@link #meters()};
 *   <li>{@code /bulkheads}: the library's {@link Snapshot} of every compartment (its settings, the
 *       four numbers, its counters, its diagnosis, the advice on its limit, and the figures of the
 *       resource behind it when a {@link ResourceView} added here knows them: a connection pool's
 *       connections), with the app's uptime and sampling period around it;
 *   <li>{@code /dashboard}: a live page (plain HTML, CSS and JavaScript from this jar's resources)
 *       that polls {@code /bulkheads} twice a second.
 * </ul>
 *
 * A daemon thread samples the {@link Insight} once a second, which feeds both the diagnosis and the
 * sizing advice. {@link #close()} stops it and removes the meters.
 *
 * <p>Thread safety: the handlers run on Jetty's threads and the sampling on its own; they share
 * only the registry, the Prometheus registry, the insight and the list of {@link ResourceView}s,
 * each thread-safe, and this class keeps no other mutable state. A snapshot reads each
 * compartment's stats once, so its numbers for one compartment hang together, while two
 * compartments (and a compartment and its resource) are read a few microseconds apart.
 */
public final class Observability implements AutoCloseable {

  /** How often the insight samples the compartments. */
  static final Duration SAMPLE_EVERY = Duration.ofSeconds(1);

  private static final String RESOURCES = "/io/bulkhead/scenarios/dashboard/";
  private static final Map<String, String> FILES =
      Map.of(
          "dashboard.html", "text/html;charset=utf-8",
          "dashboard.css", "text/css;charset=utf-8",
          "dashboard.js", "text/javascript;charset=utf-8");

  private final PrometheusMeterRegistry prometheus =
      new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
  private final BulkheadMetrics metrics;
  private final Insight insight = Insight.create();
  private final ScheduledExecutorService sampler =
      new ScheduledThreadPoolExecutor(1, DaemonThreads.numbered("bulkhead-insight-"));
  private final long startedNanos = System.nanoTime();
  private final List<ResourceView> resources = new CopyOnWriteArrayList<>();

  Observability(BulkheadRegistry registry) {
    this.metrics = BulkheadMetrics.of(registry);
    metrics.bindTo(prometheus);
    insight.watch(registry);
    sampler.scheduleAtFixedRate(insight::sample, 0, SAMPLE_EVERY.toMillis(), TimeUnit.MILLISECONDS);
  }

  /**
   * Hands {@code /metrics}, {@code /bulkheads} and {@code /dashboard/*} with their handlers to
   * {@code route} (a demo app's {@link DemoApp#adminRoute}, or a {@link DashboardServer}'s routes).
   */
  void install(BiConsumer<String, Handler> route) {
    route.accept(
        "/metrics", new Text("text/plain;version=0.0.4;charset=utf-8", prometheus::scrape));
    route.accept("/bulkheads", new Text("application/json;charset=utf-8", this::snapshotJson));
    route.accept("/dashboard/*", new Dashboard());
  }

  /**
   * Adds what {@code more} knows about the resources behind compartments to every later snapshot;
   * the first view added that knows a compartment's resource gives it.
   */
  public void add(ResourceView more) {
    resources.add(Objects.requireNonNull(more, "more"));
  }

  /** The registry {@code /metrics} scrapes, for binders of other meters (a pool's connections). */
  public MeterRegistry meters() {
    return prometheus;
  }

  Insight insight() {
    return insight;
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

  /**
   * The JSON document served at {@code /bulkheads}: the library's snapshot, with the app's uptime
   * (the dashboard's clock) and how often it samples.
   */
  String snapshotJson() {
    JsonWriter out = JsonWriter.compact();
    out.beginObject();
    out.name("uptimeMs").value(TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startedNanos));
    out.name("sampleEveryMs").value(SAMPLE_EVERY.toMillis());
    out.name("compartments").rawValue(insight.snapshot(this::resourceOf).compartmentsJson());
    return out.endObject().toJson();
  }

  private Optional<ResourceView.Resource> resourceOf(Compartment c) {
    for (ResourceView r : resources) {
      Optional<ResourceView.Resource> found = r.of(c);
      if (found.isPresent()) {
        return found;
      }
    }
    return Optional.empty();
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
            throw new IllegalStateException(
                "dashboard resource " + RESOURCES + name + " is missing");
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
      String name =
          path.equals("/dashboard") || path.equals("/dashboard/")
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
}
