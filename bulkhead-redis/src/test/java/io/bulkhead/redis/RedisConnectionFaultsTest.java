package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Faults of the connections to Redis rather than of Redis itself, on servers of the test's own: a
 * server whose ACL refuses SUBSCRIBE, and a connection that lost request bytes (through a proxy the
 * test controls), after which no command on it is ever answered again.
 */
class RedisConnectionFaultsTest {

  private static final Duration POLL = Duration.ofMillis(50);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);
  private static final Duration CALL = Duration.ofMillis(500);

  @Test
  void aRefusedSubscriptionLeaksNoConnectionAndTheLeaseStillWorks() throws Exception {
    int port = RedisServerProcess.freePort();
    try (RedisServerProcess redis =
            new RedisServerProcess(
                    port,
                    "--user",
                    "default",
                    "on",
                    "nopass",
                    "~*",
                    "&*",
                    "+@all",
                    "-subscribe",
                    "-psubscribe",
                    "-ssubscribe")
                .start();
        LogCapture log = LogCapture.library();
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(Duration.ofSeconds(1))
                .rebalanceInterval(POLL)
                .commandTimeout(COMMAND_TIMEOUT)
                .connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder("llm").limit(3).maxCallDuration(CALL).build();
      assertThat(llm.fleetStats().inFallback())
          .as("commands work without the subscription: the lease admits")
          .isFalse();
      RedisOutageTest.awaitSlots(llm, 3); // a fresh server grants nothing for one term
      llm.tryAcquire().orElseThrow().close();
      // Forty intervals: each used to open a pub/sub connection that the refusal left open. Now at
      // most one attempt is open at a time (besides the command connection), and each is closed.
      await()
          .during(POLL.multipliedBy(40))
          .atMost(POLL.multipliedBy(80))
          .until(() -> redis.connectedClients() <= 2);
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(POLL)
          .until(() -> redis.connectedClients() == 1);
      assertThat(log.warningsContaining("SUBSCRIBE"))
          .as("the refusal, logged once however often it is retried")
          .hasSize(1);
      assertThat(llm.fleetStats().inFallback()).as("the syncs went on").isFalse();
      llm.tryAcquire().orElseThrow().close();
    }
  }

  @Test
  void aConnectionThatLostRequestBytesIsReopenedAfterConsecutiveTimeouts() throws Exception {
    Duration ttl = Duration.ofSeconds(5);
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        FaultProxy proxy = new FaultProxy(redis.port());
        LogCapture log = LogCapture.library();
        RedisCompartments fleet =
            RedisCompartments.settings()
                .leaseTtl(ttl)
                .rebalanceInterval(POLL)
                .commandTimeout(COMMAND_TIMEOUT)
                .connectTimeout(Duration.ofSeconds(1))
                .connect(proxy.uri())) {
      FleetBulkhead llm = fleet.builder("llm").limit(3).maxCallDuration(CALL).build();
      RedisOutageTest.awaitSlots(llm, 3);
      assertThat(redis.connectedClients()).isEqualTo(2); // commands and pub/sub

      proxy.dropRequests(); // the syncs' commands are lost; their connection stays up
      await()
          .atMost(Duration.ofSeconds(20))
          .pollInterval(POLL)
          .until(() -> llm.fleetStats().reconnects() >= 1);
      proxy.heal();
      // Without a new connection no reply would pair with its command again: every sync would
      // time out and the lease lapse after its TTL. With one, the syncs go on.
      await()
          .during(ttl)
          .atMost(ttl.multipliedBy(3))
          .pollInterval(POLL)
          .until(() -> !llm.fleetStats().inFallback());
      assertThat(log.warningsContaining("commands in a row timed out"))
          .as("the reconnection, logged")
          .isNotEmpty();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(POLL)
          .until(() -> redis.connectedClients() == 2);
      llm.tryAcquire().orElseThrow().close();
    }
  }
}
