package io.bulkhead.servlet;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Bulkhead;
import io.bulkhead.edge.RouteTable;
import io.bulkhead.edge.testing.EdgeScenarios;
import java.time.Duration;
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

  @AfterEach
  void stop() throws Exception {
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
    EdgeScenarios.streamResetWhileQueued(new EdgeScenarios.Edge(server.port(), llm, app, "/now"));
    assertThat(app.seen()).containsExactly("/chat/holder", "/chat/next");
  }
}
