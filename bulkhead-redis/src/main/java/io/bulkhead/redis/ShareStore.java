package io.bulkhead.redis;

/**
 * Where a {@link FleetBudget}'s members live: the two atomic operations it needs, so that a client
 * other than Lettuce can follow. Each method is one round trip and throws {@link
 * StoreUnavailableException} when the store cannot answer within its command timeout.
 */
interface ShareStore extends AutoCloseable {

  /**
   * What one heartbeat found. {@code share} is what the member may hold now; {@code live} how many
   * members are alive, this one included; {@code target} the share it is heading for (0: parked,
   * the fleet has no room for it); {@code joinedAt} when it first registered (the store's clock, in
   * ms), to be sent back with every later heartbeat; {@code conflictingCapacity} and {@code
   * conflictingMinimum} the capacity and minimum share the live members registered with, when
   * either differs from this member's (then the rest means nothing), else 0.
   */
  record Beat(
      int share,
      int live,
      int target,
      long joinedAt,
      int conflictingCapacity,
      int conflictingMinimum) {}

  /**
   * Registers or renews {@code member} for {@code ttlMillis}, purges the members whose heartbeat
   * expired, records that {@code member} holds {@code applied}, and returns its share: 0 or at
   * least {@code minimum}, and 0 for the members beyond {@code capacity / minimum} in the order
   * they joined. {@code joinedAt} is what an earlier beat returned (0 before the first), so that a
   * member keeps its place in that order after the store lost its data.
   */
  Beat heartbeat(
      String budget,
      String member,
      long ttlMillis,
      int capacity,
      int minimum,
      int applied,
      long joinedAt);

  /** Removes {@code member} and what it held; the others take its share at their next heartbeat. */
  void leave(String budget, String member);

  @Override
  void close();
}
