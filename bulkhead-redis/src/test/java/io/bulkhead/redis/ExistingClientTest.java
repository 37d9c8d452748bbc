package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import io.lettuce.core.api.StatefulRedisConnection;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** A fleet on a Lettuce client the application already has, on the Redis at 127.0.0.1:6379. */
class ExistingClientTest {

  private static final RedisURI REDIS = RedisURI.create("redis://127.0.0.1:6379");

  @Test
  void theFleetUsesTheClientAndLeavesItOpenAndWarnsOnceAboutLettucesDefaults() throws Exception {
    String name = "client-" + UUID.randomUUID();
    RedisClient client = RedisClient.create(); // Lettuce's defaults
    try (LogCapture log = LogCapture.library()) {
      try (RedisCompartments fleet = RedisCompartments.connect(client, REDIS)) {
        FleetBulkhead llm =
            fleet.builder(name).limit(1).maxCallDuration(Duration.ofSeconds(5)).build();
        assertThat(llm.fleetStats().inFallback()).isFalse();
        Permit held = llm.tryAcquire().orElseThrow();
        assertThat(llm.tryAcquire()).as("a fleet limit of 1, through the given client").isEmpty();
        held.close();
        assertThat(llm.fleetStats().leaseInUse()).isZero();
      }
      assertThat(log.warningsContaining("the Redis client given for 127.0.0.1:6379"))
          .as("one line: Lettuce's defaults queue commands while disconnected")
          .singleElement()
          .asString()
          .contains("disconnectedBehavior")
          .contains("60 s");
      assertThat(client.getOptions().getDisconnectedBehavior())
          .as("the client's options are the application's: left as they were")
          .isEqualTo(io.lettuce.core.ClientOptions.DisconnectedBehavior.DEFAULT);
      try (StatefulRedisConnection<String, String> c = client.connect(REDIS)) {
        assertThat(c.sync().ping()).as("closing the fleet left the client open").isEqualTo("PONG");
      }
    } finally {
      client.shutdown();
    }
  }

  @Test
  void aClientSetUpForABulkheadIsTakenWithoutAWarning() throws Exception {
    RedisClient client = RedisClient.create();
    client.setOptions(LettuceLeaseStore.bulkheadOptions(Duration.ofSeconds(5)));
    try (LogCapture log = LogCapture.library();
        RedisCompartments fleet = RedisCompartments.connect(client, REDIS)) {
      FleetBulkhead llm =
          fleet
              .builder("client-" + UUID.randomUUID())
              .limit(1)
              .maxCallDuration(Duration.ofSeconds(5))
              .build();
      llm.tryAcquire().orElseThrow().close();
      assertThat(log.warningsContaining("the Redis client given")).isEmpty();
    } finally {
      client.shutdown();
    }
  }
}
