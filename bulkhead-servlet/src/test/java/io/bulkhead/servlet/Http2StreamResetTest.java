package io.bulkhead.servlet;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.RouteTable;
import java.net.InetSocketAddress;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import org.eclipse.jetty.http.HttpFields;
import org.eclipse.jetty.http.HttpURI;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.http.MetaData;
import org.eclipse.jetty.http2.ErrorCode;
import org.eclipse.jetty.http2.api.Session;
import org.eclipse.jetty.http2.api.Stream;
import org.eclipse.jetty.http2.client.HTTP2Client;
import org.eclipse.jetty.http2.frames.HeadersFrame;
import org.eclipse.jetty.http2.frames.ResetFrame;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

/**
 * HTTP/2 (h2c) in front of the filter: many requests share one connection, so a client that gives
 * up on one of them resets its stream, and the container reports that to the parked request through
 * {@code AsyncListener.onError}. The waiting request must leave the queue, count as cancelled,
 * never reach the servlet, and leave the connection's other streams alone.
 */
class Http2StreamResetTest {

  private Container.Running server;
  private HTTP2Client client;

  @AfterEach
  void stop() throws Exception {
    if (client != null) {
      client.stop();
    }
    if (server != null) {
      server.stop();
    }
  }

  @ParameterizedTest
  @EnumSource(Container.class)
  void streamResetWhileWaiting_leavesTheQueue_andTheConnectionsOtherStreamsCarryOn(
      Container container) throws Exception {
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(60)).build();
    HeldServlet app = new HeldServlet();
    server =
        container.start(
            new Returns(),
            BulkheadFilter.of(RouteTable.builder().route("/chat/**", llm).build()),
            app,
            new Container.Options(true, true, true));
    int port = server.port();
    client = new HTTP2Client();
    client.start();
    Session session =
        client
            .connect(new InetSocketAddress("127.0.0.1", port), new Session.Listener() {})
            .get(10, SECONDS);

    Answer holder = new Answer();
    session.newStream(get(port, "/chat/holder"), holder).get(10, SECONDS);
    HeldServlet.Held held = app.next();

    Stream leaving = session.newStream(get(port, "/chat/leaver"), new Answer()).get(10, SECONDS);
    await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);

    leaving
        .reset(new ResetFrame(leaving.getId(), ErrorCode.CANCEL_STREAM_ERROR.code))
        .get(10, SECONDS); // the client gives up on this request only

    await().atMost(10, SECONDS).until(() -> llm.stats().cancelled() == 1);
    assertThat(llm.stats().waiting()).isZero();
    assertThat(llm.stats().inFlight()).isEqualTo(1); // the holder still has its slot

    // The place is free: a newcomer on the same connection queues instead of being refused.
    Answer next = new Answer();
    session.newStream(get(port, "/chat/next"), next).get(10, SECONDS);
    await().atMost(10, SECONDS).until(() -> llm.stats().waiting() == 1);

    held.answer("holder");
    assertThat(holder.status.get(10, SECONDS)).isEqualTo(200);
    HeldServlet.Held after = app.next();
    assertThat(after.path).isEqualTo("/chat/next"); // never the leaver
    after.answer("next");
    assertThat(next.status.get(10, SECONDS)).isEqualTo(200);

    await().atMost(10, SECONDS).until(() -> llm.stats().inFlight() == 0);
    BulkheadStats stats = llm.stats();
    assertThat(stats.admitted()).isEqualTo(2);
    assertThat(stats.cancelled()).isEqualTo(1);
    assertThat(stats.rejected()).isZero();
    assertThat(app.seen()).containsExactly("/chat/holder", "/chat/next");
  }

  private static HeadersFrame get(int port, String path) {
    MetaData.Request request =
        new MetaData.Request(
            "GET",
            HttpURI.from("http://127.0.0.1:" + port + path),
            HttpVersion.HTTP_2,
            HttpFields.EMPTY);
    return new HeadersFrame(request, null, true);
  }

  /** Collects the status of a stream's response. */
  private static final class Answer implements Stream.Listener {
    final CompletableFuture<Integer> status = new CompletableFuture<>();

    @Override
    public void onHeaders(Stream stream, HeadersFrame frame) {
      if (frame.getMetaData() instanceof MetaData.Response response) {
        status.complete(response.getStatus());
      }
      stream.demand(); // read and drop the body
    }

    @Override
    public void onDataAvailable(Stream stream) {
      Stream.Data data = stream.readData();
      if (data != null) {
        data.release();
      }
      if (data == null || !data.frame().isEndStream()) {
        stream.demand();
      }
    }
  }
}
