package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import java.time.Duration;
import java.util.Optional;
import org.junit.jupiter.api.Test;

/**
 * Faults of the connections to Redis rather than of Redis itself, on servers of the test's own: a
 * server whose ACL refuses SUBSCRIBE, and a connection that lost request bytes (through a proxy the
 * test controls), after which no command on it is ever answered again.
 */
class RedisConnectionFaultsTest {

  private static final Duration POLL = Duration.ofMillis(50);
  private static final Duration COMMAND_TIMEOUT = Duration.ofMillis(200);

  @Test
  void aRefusedSubscriptionLeaksNoConnectionAndLeasesStillWork() throws Exception {
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
                .pollInterval(POLL)
                .commandTimeout(COMMAND_TIMEOUT)
                .connect(redis.uri())) {
      FleetBulkhead llm = fleet.builder("llm").limit(3).failClosed().build();
      assertThat(llm.fleetStats().inFallback())
          .as("commands work without the subscription: the fleet admits by leases")
          .isFalse();
      llm.tryAcquire().orElseThrow().close();
      // Forty polls: each used to open a pub/sub connection that the refusal left open. Now at most
      // one attempt is open at a time (besides the command connection), and each is closed.
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
      llm.tryAcquire().orElseThrow().close();
    }
  }

  @Test
  void aConnectionThatLostRequestBytesIsReopenedAfterConsecutiveTimeouts() throws Exception {
    try (RedisServerProcess redis = new RedisServerProcess(RedisServerProcess.freePort()).start();
        FaultProxy proxy = new FaultProxy(redis.port());
        LogCapture log = LogCapture.library();
        RedisCompartments fleet =
            RedisCompartments.settings()
                .pollInterval(POLL)
                .commandTimeout(COMMAND_TIMEOUT)
                .connect(proxy.uri())) {
      FleetBulkhead llm = fleet.builder("llm").limit(3).failClosed().build();
      llm.tryAcquire().orElseThrow().close(); // a lease: failClosed admits nothing without one
      assertThat(redis.connectedClients()).isEqualTo(2); // commands and pub/sub

      proxy.dropRequests();
      assertThat(llm.tryAcquire()).as("its request was lost: timed out, fail closed").isEmpty();
      proxy.heal();
      // The connection is up, but the lost command is never answered: each reply now goes to the
      // command before it. Only a new connection pairs them again.
      await()
          .atMost(Duration.ofSeconds(15))
          .pollInterval(POLL)
          .until(
              () -> {
                Optional<Permit> p = llm.tryAcquire();
                p.ifPresent(Permit::close);
                return p.isPresent();
              });
      assertThat(log.warningsContaining("timed out")).as("the reconnection, logged").isNotEmpty();
      await()
          .atMost(Duration.ofSeconds(10))
          .pollInterval(POLL)
          .until(() -> redis.connectedClients() == 2);
    }
  }
}
