package io.bulkhead.jetty;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
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
import org.eclipse.jetty.http2.server.HTTP2CServerConnectionFactory;
import org.eclipse.jetty.server.HttpConfiguration;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.thread.QueuedThreadPool;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * HTTP/2 (h2c) in front of a compartment: many requests share one connection, so a client that
 * gives up on one of them resets its stream rather than closing the socket. A reset stream that
 * waits must leave the queue as a closed HTTP/1 connection does, and leave the connection's other
 * streams alone.
 */
class Http2StreamResetTest {

  private Server server;
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

  @Test
  void streamResetWhileQueued_freesItsPlace_andTheConnectionsOtherStreamsCarryOn()
      throws Exception {
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofSeconds(60)).build();
    QueuedThreadPool pool = new QueuedThreadPool(16, 2);
    pool.setName("h2-server");
    server = new Server(pool);
    ServerConnector connector =
        new ServerConnector(server, new HTTP2CServerConnectionFactory(new HttpConfiguration()));
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    server.addConnector(connector);
    HeldRequests app = new HeldRequests();
    BulkheadHandler edge = BulkheadHandler.of(RouteTable.builder().route("/chat", llm).build());
    edge.setHandler(app);
    server.setHandler(edge);
    server.start();
    int port = connector.getLocalPort();

    client = new HTTP2Client();
    client.start();
    Session session =
        client
            .connect(new InetSocketAddress("127.0.0.1", port), new Session.Listener() {})
            .get(10, SECONDS);

    Answer holder = new Answer();
    session.newStream(get(port, "/chat?who=holder"), holder).get(10, SECONDS);
    HeldRequests.Held held = app.next();

    Answer leaver = new Answer();
    Stream leaving = session.newStream(get(port, "/chat?who=leaver"), leaver).get(10, SECONDS);
    await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

    leaving
        .reset(new ResetFrame(leaving.getId(), ErrorCode.CANCEL_STREAM_ERROR.code))
        .get(10, SECONDS); // the client gives up on this request only

    await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 0);
    assertThat(llm.stats().cancelled()).isEqualTo(1);
    assertThat(llm.stats().inFlight()).isEqualTo(1); // the holder still has its slot

    // The place is free: a newcomer on the same connection queues instead of being refused.
    Answer next = new Answer();
    session.newStream(get(port, "/chat?who=next"), next).get(10, SECONDS);
    await().atMost(5, SECONDS).until(() -> llm.stats().waiting() == 1);

    held.answer("done");
    assertThat(holder.status.get(10, SECONDS)).isEqualTo(200);
    HeldRequests.Held after = app.next();
    assertThat(after.path()).isEqualTo("/chat");
    assertThat(after.request.getHttpURI().getQuery()).isEqualTo("who=next"); // never the leaver
    after.answer("next");
    assertThat(next.status.get(10, SECONDS)).isEqualTo(200);
    assertThat(app.poll(300)).as("the reset request never reached the handler").isNull();
    assertThat(leaver.status).isNotDone();
    await().atMost(5, SECONDS).until(() -> llm.stats().inFlight() == 0);
    assertThat(llm.stats().admitted()).isEqualTo(2);
  }

  private static HeadersFrame get(int port, String pathAndQuery) {
    MetaData.Request request =
        new MetaData.Request(
            "GET",
            HttpURI.from("http://127.0.0.1:" + port + pathAndQuery),
            HttpVersion.HTTP_2,
            HttpFields.EMPTY);
    return new HeadersFrame(request, null, true);
  }

  /** Collects the status of a stream's response. */
  private static final class Answer implements Stream.Listener {
    final CompletableFuture<Integer> status = new CompletableFuture<>();

    @Override
    public void onHeaders(Stream stream, HeadersFrame frame) {
      if (frame.getMetaData() instanceof MetaData.Response) {
        status.complete(((MetaData.Response) frame.getMetaData()).getStatus());
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
