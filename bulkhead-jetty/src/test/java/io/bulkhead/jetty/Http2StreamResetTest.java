package io.bulkhead.jetty;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.edge.testing.EdgeScenarios;
import java.time.Duration;
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

  @AfterEach
  void stop() throws Exception {
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
    BulkheadHandler edge = BulkheadHandler.of(RouteTable.builder().route("/chat/**", llm).build());
    edge.setHandler(app);
    server.setHandler(edge);
    server.start();
    EdgeScenarios.streamResetWhileQueued(
        new EdgeScenarios.Edge(connector.getLocalPort(), llm, app, "/now"));
    assertThat(app.poll(300)).as("the reset request never reached the handler").isNull();
  }
}
