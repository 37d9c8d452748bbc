package io.bulkhead.redis;

/**
 * Where a {@link FleetBudget}'s members live: the two atomic operations it needs, so that a client
 * other than Lettuce can follow. Each method is one round trip and throws {@link
 * StoreUnavailableException} when the store cannot answer within its command timeout.
 */
interface ShareStore extends AutoCloseable {

  /**
   * What one heartbeat found. {@code share} is what the member may hold now; {@code live} how many
   * members are alive, this one included; {@code conflictingCapacity} the capacity the live members
   * registered with, when it differs from this member's (then {@code share} means nothing), else 0.
   */
  record Beat(int share, int live, int conflictingCapacity) {}

  /**
   * Registers or renews {@code member} for {@code ttlMillis}, purges the members whose heartbeat
   * expired, records that {@code member} holds {@code applied}, and returns its share.
   */
  Beat heartbeat(String budget, String member, long ttlMillis, int capacity, int applied);

  /** Removes {@code member} and what it held; the others take its share at their next heartbeat. */
  void leave(String budget, String member);

  @Override
  void close();
}
