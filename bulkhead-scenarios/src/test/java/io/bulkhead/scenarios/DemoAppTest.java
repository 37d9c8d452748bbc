package io.bulkhead.scenarios;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.Compartment;
import io.bulkhead.testing.Closer;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.Invocable.InvocationType;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

class DemoAppTest {

  private final HttpClient client =
      HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
  @RegisterExtension final Closer closer = new Closer();

  private HttpResponse<String> get(URI base, String path) throws Exception {
    return client.send(
        HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private CompletableFuture<HttpResponse<String>> getAsync(URI base, String path) {
    return client.sendAsync(
        HttpRequest.newBuilder(base.resolve(path)).build(), HttpResponse.BodyHandlers.ofString());
  }

  private static AppSettings settings(
      Mode mode,
      URI upstream,
      int serverLimit,
      int llmLimit,
      int llmQueue,
      Duration llmWait,
      Duration deadline) {
    return new AppSettings(mode, upstream, serverLimit, llmLimit, llmQueue, llmWait, deadline);
  }

  @Test
  void registryHoldsTheCompartmentsOfEachMode() {
    URI upstream = URI.create("http://127.0.0.1:1");
    DemoApp shared = closer.closeLater(new DemoApp(AppSettings.defaults(Mode.SHARED, upstream)));
    DemoApp bulkhead =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream)));

    assertThat(shared.registry().all()).extracting(Compartment::name).containsExactly("server");
    assertThat(bulkhead.registry().all())
        .extracting(Compartment::name)
        .containsExactly("server", "llm");
    Bulkhead server = bulkhead.registry().bulkhead("server").orElseThrow();
    assertThat(server.config().limit()).isEqualTo(50);
    assertThat(server.config().maxQueue()).isEmpty();
    assertThat(server.config().maxWait()).isEmpty();
    Bulkhead llm = bulkhead.registry().bulkhead("llm").orElseThrow();
    assertThat(llm.config().limit()).isEqualTo(10);
    assertThat(llm.config().maxQueue()).hasValue(20);
    assertThat(llm.config().maxWait()).hasValue(Duration.ofSeconds(1));
  }

  @Test
  void aGivenLlmCompartmentIsTheOneChatGoesThrough() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(5)));
    Bulkhead given = Bulkhead.builder("llm").limit(1).build(); // no queue: a second chat is refused
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri()), given));
    app.start(0);
    assertThat(app.registry().bulkhead("llm")).containsSame(given);

    CompletableFuture<HttpResponse<String>> holding = getAsync(app.uri(), "/chat");
    await().atMost(10, SECONDS).until(() -> upstream.requests() == 1);
    assertThat(given.stats().inFlight()).isEqualTo(1);
    assertThat(get(app.uri(), "/chat").statusCode()).isEqualTo(503);
    holding.cancel(true);
  }

  @Test
  void requestsRunOnTheThreadThatReadThem_unlessARouteBlocks() {
    URI upstream = URI.create("http://127.0.0.1:1");
    DemoApp lean = closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream)));
    lean.start(0);
    // Every handler of the app is non-blocking, so Jetty serves a request on its selector thread.
    assertThat(lean.server().getInvocationType()).isEqualTo(InvocationType.NON_BLOCKING);

    DemoApp blocking =
        closer.closeLater(
            new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream))
                .replaceRoute(
                    "/login",
                    new Handler.Abstract() { // blocking, as Handler.Abstract is by default
                      @Override
                      public boolean handle(Request request, Response response, Callback callback) {
                        callback.succeeded();
                        return true;
                      }
                    }));
    blocking.start(0);
    // One route that may block, and Jetty hands every request to a pool thread again.
    assertThat(blocking.server().getInvocationType()).isEqualTo(InvocationType.BLOCKING);
  }

  @Test
  void aGivenLlmCompartmentNeedsBulkheadMode() {
    URI upstream = URI.create("http://127.0.0.1:1");
    Bulkhead given = Bulkhead.builder("llm").limit(1).build();
    assertThatThrownBy(() -> new DemoApp(AppSettings.defaults(Mode.SHARED, upstream), given))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("bulkhead mode");
  }

  @Test
  void bulkheadMode_fullCompartment_is503WithRetryAfter_andLoginStillAnswers() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(5)));
    DemoApp app =
        closer.closeLater(
            new DemoApp(
                settings(
                    Mode.BULKHEAD,
                    upstream.uri(),
                    10,
                    1,
                    0,
                    Duration.ZERO,
                    Duration.ofSeconds(30))));
    app.start(0);
    CompletableFuture<HttpResponse<String>> holding = getAsync(app.uri(), "/chat");
    await().atMost(10, SECONDS).until(() -> upstream.requests() == 1);

    HttpResponse<String> refused = get(app.uri(), "/chat");
    HttpResponse<String> login = get(app.uri(), "/login");

    assertThat(refused.statusCode()).isEqualTo(503);
    assertThat(refused.headers().firstValue("Retry-After")).isPresent();
    assertThat(Long.parseLong(refused.headers().firstValue("Retry-After").get()))
        .isGreaterThanOrEqualTo(1);
    assertThat(refused.body()).contains("'llm'");
    assertThat(login.statusCode()).isEqualTo(200);
    assertThat(holding.get(30, SECONDS).body()).isEqualTo(FakeUpstream.ANSWER);
  }

  @Test
  void missedDeadline_is504_inBothModes() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(5)));
    for (Mode mode : Mode.values()) {
      DemoApp app =
          closer.closeLater(
              new DemoApp(
                  settings(mode, upstream.uri(), 10, 2, 0, Duration.ZERO, Duration.ofMillis(300))));
      app.start(0);

      HttpResponse<String> late = get(app.uri(), "/chat");

      assertThat(late.statusCode()).as(mode.label()).isEqualTo(504);
    }
  }

  @Test
  void upstreamDown_is502_inBothModes() throws Exception {
    int down;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      down = s.getLocalPort();
    }
    for (Mode mode : Mode.values()) {
      DemoApp app =
          closer.closeLater(
              new DemoApp(AppSettings.defaults(mode, URI.create("http://127.0.0.1:" + down))));
      app.start(0);

      assertThat(get(app.uri(), "/chat").statusCode()).as(mode.label()).isEqualTo(502);
      assertThat(get(app.uri(), "/nowhere").statusCode()).isEqualTo(404);
    }
  }

  @Test
  void adminRoute_answersWhileEverySlotIsTaken_andRouteWaitsBehindTheCap() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(3)));
    DemoApp app =
        closer.closeLater(
            new DemoApp(
                settings(
                    Mode.SHARED, upstream.uri(), 1, 1, 0, Duration.ZERO, Duration.ofSeconds(30))));
    app.adminRoute("/probe", text("probe")); // /metrics itself is built in: see ObservabilityTest
    app.route("/hello", text("hello"));
    app.start(0);
    CompletableFuture<HttpResponse<String>> holding = getAsync(app.uri(), "/chat");
    Bulkhead server = app.registry().bulkhead("server").orElseThrow();
    await().atMost(10, SECONDS).until(() -> upstream.requests() == 1);

    HttpResponse<String> probe = get(app.uri(), "/probe"); // bypasses the full cap
    CompletableFuture<HttpResponse<String>> hello = getAsync(app.uri(), "/hello");
    await().atMost(10, SECONDS).until(() -> server.stats().waiting() == 1);

    assertThat(probe.body()).isEqualTo("probe");
    assertThat(hello.isDone())
        .isFalse(); // queued behind the chat, like /login in the slow-upstream experiment
    assertThat(holding.get(30, SECONDS).statusCode()).isEqualTo(200);
    assertThat(hello.get(30, SECONDS).body()).isEqualTo("hello");
  }

  @Test
  void routesAreFixedOnceStarted_andNamesAreChecked() throws Exception {
    DemoApp app =
        closer.closeLater(
            new DemoApp(AppSettings.defaults(Mode.SHARED, URI.create("http://127.0.0.1:1"))));
    assertThatThrownBy(() -> app.route("/login", text("x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'/login'");
    assertThatThrownBy(() -> app.route("metrics", text("x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'metrics'");
    app.start(0);
    assertThatThrownBy(() -> app.adminRoute("/late", text("x")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'/late'");
  }

  @Test
  void maxConnections_setsTheConnectorsCapAndAcceptQueue_beforeTheStartOnly() throws Exception {
    DemoApp app =
        closer.closeLater(
            new DemoApp(AppSettings.defaults(Mode.BULKHEAD, URI.create("http://127.0.0.1:1"))));
    assertThatThrownBy(() -> app.maxConnections(0))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("was 0");
    app.maxConnections(3_000).start(0);
    org.eclipse.jetty.server.NetworkConnectionLimit cap =
        app.server().getBean(org.eclipse.jetty.server.NetworkConnectionLimit.class);
    assertThat(cap.getMaxNetworkConnectionCount()).isEqualTo(3_000);
    org.eclipse.jetty.server.ServerConnector connector =
        (org.eclipse.jetty.server.ServerConnector) app.server().getConnectors()[0];
    assertThat(connector.getAcceptQueueSize()).isEqualTo(3_000);
    assertThatThrownBy(() -> app.maxConnections(10)).isInstanceOf(IllegalStateException.class);
  }

  @Test
  void replaceRoute_swapsTheHandler_andKeepsTheRouteBehindTheServerCap() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofSeconds(3)));
    DemoApp app =
        closer.closeLater(
            new DemoApp(
                settings(
                    Mode.SHARED, upstream.uri(), 1, 1, 0, Duration.ZERO, Duration.ofSeconds(30))));
    CompletableFuture<Void> release = new CompletableFuture<>();
    CompletableFuture<Void> entered = new CompletableFuture<>();
    app.replaceRoute(
        "/chat",
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            entered.complete(null);
            // Answers when the test says so, holding its server slot until then.
            release.thenRun(() -> Content.Sink.write(response, true, "replaced", callback));
            return true;
          }
        });
    app.start(0);
    Bulkhead server = app.registry().bulkhead("server").orElseThrow();

    CompletableFuture<HttpResponse<String>> chat = getAsync(app.uri(), "/chat");
    entered.get(10, SECONDS);
    CompletableFuture<HttpResponse<String>> login = getAsync(app.uri(), "/login");
    await().atMost(10, SECONDS).until(() -> server.stats().waiting() == 1);
    assertThat(login.isDone()).isFalse(); // the replaced /chat holds the only server slot
    release.complete(null);

    assertThat(chat.get(10, SECONDS).body()).isEqualTo("replaced");
    assertThat(login.get(10, SECONDS).body()).isEqualTo("ok\n");
    assertThat(upstream.requests()).isZero(); // the demo's own /chat handler never ran
  }

  @Test
  void replaceRoute_needsAnExistingRoute_beforeTheStart() {
    DemoApp app =
        closer.closeLater(
            new DemoApp(AppSettings.defaults(Mode.SHARED, URI.create("http://127.0.0.1:1"))));
    assertThatThrownBy(() -> app.replaceRoute("/nowhere", text("x")))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageContaining("'/nowhere'")
        .hasMessageContaining("/chat");
    app.start(0);
    assertThatThrownBy(() -> app.replaceRoute("/chat", text("x")))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("'/chat'");
  }

  @Test
  void loadGenerator_tellsWhenItsClockStarted() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(100)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.start(0);
    LoadGenerator load =
        new LoadGenerator(app.uri(), 2, 2, Duration.ofMillis(50), Duration.ofSeconds(30));
    assertThat(load.startedAtNanos()).isEmpty();

    long before = System.nanoTime();
    LoadResult result = load.run();
    long after = System.nanoTime();

    assertThat(load.startedAtNanos()).isPresent();
    long start = load.startedAtNanos().getAsLong();
    assertThat(start - before).isBetween(0L, after - before);
    // Every request was sent after the clock started and answered before run() returned.
    assertThat(result.samples())
        .hasSize(4)
        .allSatisfy(
            sample -> {
              assertThat(sample.sentAtNanos()).isNotNegative();
              assertThat(start + sample.answeredAtNanos()).isLessThanOrEqualTo(after);
            });
  }

  @Test
  void threadPool_isStartedInFull_andABurstOfLoginsAndChatsStartsNoThread() throws Exception {
    FakeUpstream upstream = closer.closeLater(FakeUpstream.start(0, Duration.ofMillis(200)));
    DemoApp app =
        closer.closeLater(new DemoApp(AppSettings.defaults(Mode.BULKHEAD, upstream.uri())));
    app.start(0);
    QueuedThreadPool pool = (QueuedThreadPool) app.server().getThreadPool();
    assertThat(pool.getMaxThreads()).isEqualTo(DemoApp.THREADS);
    assertThat(pool.getThreads()).isEqualTo(DemoApp.THREADS);

    // Three times the app's threads at once, each on its own connection: with Jetty's default pool
    // (8 growing to 200 on demand) such a burst starts threads; the fixed pool queues the work.
    int requests = 3 * DemoApp.THREADS;
    HttpClient burst = HttpClient.newBuilder().version(HttpClient.Version.HTTP_1_1).build();
    List<CompletableFuture<HttpResponse<String>>> answers = new ArrayList<>();
    for (int i = 0; i < requests; i++) {
      answers.add(
          burst.sendAsync(
              HttpRequest.newBuilder(app.uri().resolve(i % 3 == 0 ? "/chat" : "/login")).build(),
              HttpResponse.BodyHandlers.ofString()));
    }
    for (CompletableFuture<HttpResponse<String>> answer : answers) {
      assertThat(answer.get(30, SECONDS).statusCode()).isIn(200, 503);
    }

    assertThat(pool.getThreads()).isEqualTo(DemoApp.THREADS);
  }

  private static Handler text(String body) {
    return new Handler.Abstract() {
      @Override
      public boolean handle(Request request, Response response, Callback callback) {
        Content.Sink.write(response, true, body, callback);
        return true;
      }
    };
  }
}
