package io.bulkhead.edge.testing;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadStats;
import io.bulkhead.edge.testing.HostileClients.Resources;
import java.net.Socket;
import java.util.ArrayList;
import java.util.List;

/**
 * The hostile-client and HTTP/2 cases every edge must pass, run against one started edge at a time.
 * Each edge's test class starts its server (Jetty, Tomcat, Jetty ee10) and calls these; what only
 * one edge does (Jetty seeing HTTP/1 clients leave, the container's answer to a huge head) stays in
 * that edge's own test.
 */
public final class EdgeScenarios {

  private EdgeScenarios() {}

  /**
   * A started edge: {@code chat} guards {@code /chat/**}, a path outside it answers at once.
   *
   * @param port the server's port on 127.0.0.1
   * @param chat the compartment of {@code /chat/**}
   * @param app the application behind the edge, holding every {@code /chat} request
   * @param openPath a path outside every compartment that answers {@code 200} at once
   */
  public record Edge(int port, Bulkhead chat, HeldApp app, String openPath) {}

  /**
   * Fills {@code /chat} (limit and queue), then opens {@code idle} silent connections and {@code
   * slowHeads} half-sent heads of {@code /chat}: the open path still answers, no half-sent head
   * takes a slot or is refused, every queued request is served, and the descriptors and threads the
   * clients took come back (within the slack a leak would break).
   */
  public static void idleAndSlowHeads(
      Edge edge, int idle, int slowHeads, int threadSlack, int fdSlack, String label)
      throws Exception {
    Bulkhead chat = edge.chat();
    int limit = chat.config().limit();
    int maxQueue = chat.config().maxQueue().orElseThrow();
    assertThat(RawHttp.get(edge.port(), edge.openPath()).status()).isEqualTo(200); // warm up
    Resources before = Resources.now();
    List<Socket> hostile = new ArrayList<>();
    List<Socket> chats = new ArrayList<>();
    try {
      for (int i = 0; i < limit + maxQueue; i++) {
        chats.add(RawHttp.sendGet(edge.port(), "/chat/" + i));
      }
      await()
          .atMost(10, SECONDS)
          .until(() -> chat.stats().inFlight() == limit && chat.stats().waiting() == maxQueue);
      hostile.addAll(HostileClients.idle(edge.port(), idle));
      hostile.addAll(HostileClients.slowHeads(edge.port(), slowHeads, "/chat/x"));
      Resources during = Resources.now();

      // Behind the silent clients in the accept queue if there is a connection cap.
      assertThat(RawHttp.get(edge.port(), edge.openPath()).status()).isEqualTo(200);
      assertThat(chat.stats().admitted()).isEqualTo(limit); // no half-sent head took a slot
      assertThat(chat.stats().rejected()).isZero();

      for (int i = 0; i < limit + maxQueue; i++) {
        edge.app().next().answer("chat");
      }
      for (Socket socket : chats) {
        assertThat(RawHttp.read(socket).body()).isEqualTo("chat");
      }
      await()
          .atMost(10, SECONDS)
          .until(() -> chat.stats().inFlight() == 0 && chat.stats().waiting() == 0);
      BulkheadStats stats = chat.stats();
      assertThat(stats.admitted()).isEqualTo(limit + maxQueue);
      assertThat(stats.completed()).isEqualTo(stats.admitted());
      assertThat(stats.cancelled()).isZero();

      RawHttp.closeAll(hostile);
      RawHttp.closeAll(chats);
      await().atMost(30, SECONDS).until(() -> Resources.now().fds() <= before.fds() + fdSlack);
      Resources after = Resources.now();
      Resources.print(label + " idle+slow-head", before, during, after);
      assertThat(after.threads()).isLessThanOrEqualTo(before.threads() + threadSlack);
    } finally {
      RawHttp.closeAll(hostile);
      RawHttp.closeAll(chats);
    }
  }

  /**
   * Over one h2c connection, with {@code /chat} at limit 1 and a queue of 1: a holder takes the
   * slot, a second request waits and its stream is reset. The reset request leaves the queue (one
   * cancelled), never reaches the application, and its place is usable at once by a third request
   * on the same connection, which runs when the holder is answered.
   */
  public static void streamResetWhileQueued(Edge edge) throws Exception {
    Bulkhead chat = edge.chat();
    try (H2c client = H2c.connect(edge.port())) {
      H2c.Exchange holder = client.get("/chat/holder");
      HeldApp.Held held = edge.app().next();

      H2c.Exchange leaver = client.get("/chat/leaver");
      await().atMost(10, SECONDS).until(() -> chat.stats().waiting() == 1);

      leaver.reset(); // the client gives up on this request only

      await().atMost(10, SECONDS).until(() -> chat.stats().cancelled() == 1);
      assertThat(chat.stats().waiting()).isZero();
      assertThat(chat.stats().inFlight()).isEqualTo(1); // the holder still has its slot

      // The place is free: a newcomer on the same connection queues instead of being refused.
      H2c.Exchange next = client.get("/chat/next");
      await().atMost(10, SECONDS).until(() -> chat.stats().waiting() == 1);

      held.answer("holder");
      assertThat(holder.status().get(10, SECONDS)).isEqualTo(200);
      HeldApp.Held after = edge.app().next();
      assertThat(after.path()).isEqualTo("/chat/next"); // never the leaver
      after.answer("next");
      assertThat(next.status().get(10, SECONDS)).isEqualTo(200);
      assertThat(leaver.status()).isNotDone();

      await().atMost(10, SECONDS).until(() -> chat.stats().inFlight() == 0);
      BulkheadStats stats = chat.stats();
      assertThat(stats.admitted()).isEqualTo(2);
      assertThat(stats.cancelled()).isEqualTo(1);
      assertThat(stats.rejected()).isZero();
    }
  }
}
