package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Permit;
import io.lettuce.core.RedisClient;
import io.lettuce.core.api.StatefulRedisConnection;
import io.lettuce.core.api.sync.RedisCommands;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A fleet compartment's keys on the Redis at 127.0.0.1:6379 ({@code {bulkhead:NAME}:epoch}, {@code
 * :fence}, {@code :limit} and the others) carry a lifetime: refreshed by every sync while a member
 * lives, gone once the whole fleet has been gone for it. A fencing token issued after they expired
 * is still above every token issued before.
 */
class FleetKeysLifetimeTest {

  private static final String REDIS = "redis://127.0.0.1:6379";
  private static final Duration TTL = Duration.ofSeconds(1);
  private static final Duration CALL = Duration.ofSeconds(1);
  // Twice the term (lease TTL + maxCallDuration), as the syncs ask.
  private static final long KEY_LIFE_MILLIS = 2 * (TTL.toMillis() + CALL.toMillis());
  private static final Duration SETTLES = Duration.ofSeconds(60);

  private final String name = "keys-" + UUID.randomUUID();

  private List<String> keys() {
    String tag = "{bulkhead:" + name + "}";
    return List.of(
        tag + ":epoch",
        tag + ":fence",
        tag + ":limit",
        tag + ":learn",
        tag + ":members",
        tag + ":held",
        tag + ":want");
  }

  /** Each existing key of the compartment with its PTTL (-1: no expiry). */
  private Map<String, Long> lifetimes(RedisCommands<String, String> redis) {
    Map<String, Long> left = new TreeMap<>();
    for (String key : keys()) {
      long pttl = redis.pttl(key);
      if (pttl != -2) {
        left.put(key.substring(key.indexOf("}:") + 2), pttl);
      }
    }
    return left;
  }

  private long grantedToken(FleetBulkhead llm) {
    AtomicReference<Permit> taken = new AtomicReference<>();
    await()
        .atMost(SETTLES)
        .until(
            () -> {
              Optional<Permit> p = llm.tryAcquire();
              p.ifPresent(taken::set);
              return p.isPresent();
            });
    try (Permit permit = taken.get()) {
      return ((FleetPermit) permit).fencingToken();
    }
  }

  private static RedisCompartments connect() {
    return RedisCompartments.settings()
        .leaseTtl(TTL)
        .rebalanceInterval(Duration.ofMillis(100))
        .connect(REDIS);
  }

  @Test
  void theKeysAreRefreshedWhileAMemberLivesAndExpireAfterTheFleetIsGone() throws Exception {
    RedisClient client = RedisClient.create(REDIS);
    try (StatefulRedisConnection<String, String> connection = client.connect()) {
      RedisCommands<String, String> redis = connection.sync();
      long firstToken;
      String epoch;
      try (RedisCompartments fleet = connect()) {
        FleetBulkhead llm = fleet.builder(name).limit(3).maxCallDuration(CALL).build();
        firstToken = grantedToken(llm);
        assertThat(firstToken).isPositive();

        Map<String, Long> alive = lifetimes(redis);
        System.out.println("fleet keys while a member lives (PTTL ms): " + alive);
        assertThat(alive).containsKeys("epoch", "fence", "limit", "learn", "members", "held");
        assertThat(alive.values())
            .as("every key expires, within the key life")
            .allSatisfy(pttl -> assertThat(pttl).isBetween(1L, KEY_LIFE_MILLIS));

        // A later sync of the living member pushes the expiry of every key further out.
        epoch = redis.get(keys().get(0));
        long epochLeft = alive.get("epoch");
        long fenceLeft = alive.get("fence");
        long limitLeft = alive.get("limit");
        await()
            .atMost(SETTLES)
            .until(
                () -> lifetimes(redis),
                now ->
                    now.getOrDefault("epoch", -2L) > epochLeft
                        && now.getOrDefault("fence", -2L) > fenceLeft
                        && now.getOrDefault("limit", -2L) > limitLeft);
        assertThat(redis.get(keys().get(0))).as("the same state, never lost").isEqualTo(epoch);
      }

      long closed = System.nanoTime();
      await().atMost(SETTLES).until(() -> lifetimes(redis), Map::isEmpty);
      long goneMillis = Duration.ofNanos(System.nanoTime() - closed).toMillis();
      System.out.println(
          "fleet keys: all gone "
              + goneMillis
              + " ms after the last member closed (key life "
              + KEY_LIFE_MILLIS
              + " ms)");

      // The fleet comes back to a Redis without its keys: a new state, and a newer token.
      try (RedisCompartments fleet = connect()) {
        FleetBulkhead llm = fleet.builder(name).limit(3).maxCallDuration(CALL).build();
        long secondToken = grantedToken(llm);
        assertThat(redis.get(keys().get(0))).isNotEqualTo(epoch);
        assertThat(secondToken).as("fencing tokens only grow").isGreaterThan(firstToken);
      }
    } finally {
      client.shutdown();
    }
  }
}
