package io.bulkhead.jdbc;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * Pools whose total comes from a supplier (a fleet budget's share) on a real PostgreSQL: opened at
 * the supplier's value, divided by the configured proportions, resized as it changes, counted by
 * the server.
 */
class DatabasePoolsTotalTest extends PostgresTestSupport {

  @Test
  void dividesATotalByTheConfiguredProportionsLargestRemaindersFirst() {
    assertThat(DatabasePools.divide(10, new int[] {6, 4})).containsExactly(6, 4);
    assertThat(DatabasePools.divide(4, new int[] {6, 4})).containsExactly(2, 2); // 2.4 and 1.6
    assertThat(DatabasePools.divide(7, new int[] {6, 4})).containsExactly(4, 3); // 4.2 and 2.8
    assertThat(DatabasePools.divide(4, new int[] {1, 1, 1})).containsExactly(2, 1, 1); // tie: first
    assertThat(DatabasePools.divide(3, new int[] {8, 1, 1})).containsExactly(1, 1, 1); // one each
    assertThat(DatabasePools.divide(5, new int[] {18, 1, 1})).containsExactly(3, 1, 1);
    for (int total = 3; total <= 40; total++) {
      int[] parts = DatabasePools.divide(total, new int[] {5, 3, 1});
      assertThat(Arrays.stream(parts).sum()).as("parts of %d", total).isEqualTo(total);
      assertThat(Arrays.stream(parts).min().getAsInt())
          .as("smallest part of %d", total)
          .isPositive();
    }
  }

  @Test
  void opensAtTheSuppliersTotalAndResizesAsItChanges() throws Exception {
    AtomicInteger share = new AtomicInteger(4);
    DatabasePools db =
        open(
            pools()
                .pool(PoolConfig.builder("checkout").limit(6).build())
                .pool(PoolConfig.builder("reports").limit(4).build())
                .total(share::get));
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(2, 2);
    assertThat(backends(prefix + ".")).isEqualTo(4);

    share.set(7);
    db.resize();
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(4, 3);
    useEveryConnection(db); // a pool that grew opens its new connections on demand
    await().atMost(SERVER_SETTLES).until(() -> backends(prefix + "."), n -> n == 7);

    share.set(3);
    db.resize();
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(2, 1);
    await().atMost(SERVER_SETTLES).until(() -> backends(prefix + "."), n -> n == 3);

    assertThatThrownBy(() -> db.resize(1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "total of database '"
                + prefix
                + "' cannot be 1: its 2 pools need at least one"
                + " connection each; they hold one each");
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(1, 1);
    int capacity = db.budget().capacity();
    assertThatThrownBy(() -> db.resize(capacity + 1))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "total of database '"
                + prefix
                + "' cannot be "
                + (capacity + 1)
                + ": its capacity is "
                + capacity);
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(1, 1);
  }

  private static void useEveryConnection(DatabasePools db) throws java.sql.SQLException {
    java.util.List<java.sql.Connection> held = new java.util.ArrayList<>();
    try {
      for (WorkloadPool pool : db.pools()) {
        for (int i = 0; i < pool.stats().limit(); i++) {
          held.add(pool.getConnection());
        }
      }
    } finally {
      for (java.sql.Connection c : held) {
        c.close();
      }
    }
  }

  @Test
  void aTotalBelowOneConnectionPerPoolFailsStartUpWithTheReason() {
    assertThatThrownBy(
            () ->
                open(
                    pools()
                        .pool(PoolConfig.builder("checkout").limit(6).build())
                        .pool(PoolConfig.builder("reports").limit(4).build())
                        .total(() -> 1)))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith(
            "total of database '"
                + prefix
                + "' is 1 connections but must be"
                + " between its 2 pools (one each) and its capacity of ");
  }

  @Test
  void resizeWithoutASupplierSaysWhatToDo() throws Exception {
    DatabasePools db = open(pools().pool(PoolConfig.builder("checkout").limit(2).build()));
    assertThatThrownBy(db::resize)
        .isInstanceOf(IllegalStateException.class)
        .hasMessage(
            "database '"
                + prefix
                + "' has no total supplier: give one with"
                + " DatabasePools.Builder.total(IntSupplier), or call resize(int)");
    db.resize(3);
    assertThat(db.stats()).extracting(PoolStats::limit).containsExactly(3);
  }
}
