package io.bulkhead.edge.testing;

import java.net.InetSocketAddress;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;
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

/**
 * One HTTP/2 connection without TLS (h2c, prior knowledge) on which a test opens streams and resets
 * them one by one, as a client that gives up on one request of many does.
 */
public final class H2c implements AutoCloseable {

  private final HTTP2Client client;
  private final Session session;
  private final int port;

  private H2c(HTTP2Client client, Session session, int port) {
    this.client = client;
    this.session = session;
    this.port = port;
  }

  /** Connects to 127.0.0.1:{@code port}. */
  public static H2c connect(int port) throws Exception {
    HTTP2Client client = new HTTP2Client();
    client.start();
    try {
      Session session =
          client
              .connect(new InetSocketAddress("127.0.0.1", port), new Session.Listener() {})
              .get(10, TimeUnit.SECONDS);
      return new H2c(client, session, port);
    } catch (Exception e) {
      client.stop();
      throw e;
    }
  }

  /** Opens a stream with a GET of {@code pathAndQuery}. */
  public Exchange get(String pathAndQuery) throws Exception {
    MetaData.Request request =
        new MetaData.Request(
            "GET",
            HttpURI.from("http://127.0.0.1:" + port + pathAndQuery),
            HttpVersion.HTTP_2,
            HttpFields.EMPTY);
    Exchange exchange = new Exchange();
    exchange.stream =
        session
            .newStream(new HeadersFrame(request, null, true), exchange)
            .get(10, TimeUnit.SECONDS);
    return exchange;
  }

  @Override
  public void close() throws Exception {
    client.stop();
  }

  /** One stream: its response's status when it comes, its body read and dropped. */
  public static final class Exchange implements Stream.Listener {
    private final CompletableFuture<Integer> status = new CompletableFuture<>();
    private volatile Stream stream;

    /** Completes with the response's status. */
    public CompletableFuture<Integer> status() {
      return status;
    }

    /** Whether the response has a status, and it is {@code code}. */
    public boolean answered(int code) {
      return status.isDone() && status.getNow(-1) == code;
    }

    /** Resets the stream (CANCEL), as a client that gives up on this request. */
    public void reset() throws Exception {
      Stream s = stream;
      s.reset(new ResetFrame(s.getId(), ErrorCode.CANCEL_STREAM_ERROR.code))
          .get(10, TimeUnit.SECONDS);
    }

    @Override
    public void onHeaders(Stream stream, HeadersFrame frame) {
      if (frame.getMetaData() instanceof MetaData.Response response) {
        status.complete(response.getStatus());
      }
      stream.demand();
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
