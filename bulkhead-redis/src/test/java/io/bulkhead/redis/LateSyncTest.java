package io.bulkhead.redis;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.lettuce.core.RedisClient;
import io.lettuce.core.RedisURI;
import java.time.Duration;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A sync that reaches Redis after a newer one of the same member (sent on a connection the watchdog
 * replaced, its bytes held by the network and delivered later) changes nothing: run, its old {@code
 * keep} would lower the member's record below the calls it runs now, and the others would be
 * granted their slots. The late request is played here by sending the syncs out of order on one
 * store, against the real script on the Redis on loopback.
 */
class LateSyncTest {

  private static final RedisURI REDIS = RedisURI.create("redis://127.0.0.1:6379");
  private static final int LIMIT = 6;
  private static final long TERM = 2_000;
  private static final long KEY_LIFE = 60_000;

  @Test
  void aSyncOlderThanOneRedisRanChangesNothing() {
    String name = "late-sync-" + UUID.randomUUID();
    try (LettuceLeaseStore store =
        new LettuceLeaseStore(
            RedisClient.create(REDIS),
            true,
            REDIS,
            Duration.ofSeconds(5),
            Duration.ofSeconds(5),
            Duration.ofSeconds(1),
            message -> {})) {
      assertThat(store.connectIfNeeded()).isTrue();
      // A joins alone and is granted the whole limit; then it runs 4 calls (its sync number 3).
      LeaseStore.SyncReply first = store.sync(request(name, "a", "", 0, 0, 4, 1));
      assertThat(first.cap()).isEqualTo(LIMIT);
      String epoch = first.epoch();
      assertThat(store.sync(request(name, "a", epoch, LIMIT, 4, 4, 3)).held()).isEqualTo(LIMIT);
      // B joins wanting everything: A's record leaves it no room.
      assertThat(store.sync(request(name, "b", "", 0, 0, LIMIT, 1)).cap()).isZero();

      // A's sync number 2, sent when it ran 1 call, arrives now.
      assertThatThrownBy(() -> store.sync(request(name, "a", epoch, 1, 1, 1, 2)))
          .isInstanceOf(StoreUnavailableException.class)
          .hasMessageContaining("older than the last one");

      // A still runs 4 calls: B may be granted at most what they leave.
      LeaseStore.SyncReply b = store.sync(request(name, "b", epoch, 0, 0, LIMIT, 2));
      assertThat(b.cap()).as("B's cap while A runs 4 of " + LIMIT).isLessThanOrEqualTo(LIMIT - 4);
      // A's next sync, in order, is run as usual.
      assertThat(store.sync(request(name, "a", epoch, LIMIT, 4, 4, 4)).held())
          .isGreaterThanOrEqualTo(4);
    }
  }

  private static LeaseStore.SyncRequest request(
      String name, String member, String epoch, int keep, int running, int want, long sequence) {
    return new LeaseStore.SyncRequest(
        name, member, epoch, TERM, LIMIT, keep, running, want, false, KEY_LIFE, sequence);
  }
}
