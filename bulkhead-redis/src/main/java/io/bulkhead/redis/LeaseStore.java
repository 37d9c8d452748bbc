package io.bulkhead.redis;

import org.jspecify.annotations.Nullable;

/**
 * Where the fleet's leases live: the few atomic operations a fleet compartment needs, so that a
 * client other than Lettuce can follow without touching the compartment. Every method is one round
 * trip, is called from the fleet's sync thread only (never from a caller's), and throws {@link
 * StoreUnavailableException} when the store cannot answer within its command timeout.
 */
interface LeaseStore extends AutoCloseable {

  /**
   * One member's sync for one compartment.
   *
   * @param member this process's id in the fleet
   * @param expectedEpoch the epoch of the state this member's slots were granted under ("" if none)
   * @param termMillis how long the store keeps the member's record without another sync: the lease
   *     TTL plus the longest call, so that every call the member admits ends before its record goes
   * @param ownLimit this process's limit, stored if the store has none
   * @param keep what the member holds at least: its calls running plus the free slots it keeps; it
   *     has already lowered its own cap to this before sending
   * @param running its calls running now (licensed or not): what it must be counted for
   * @param want how many slots it would use now (its recent demand)
   * @param announceUnmet whether to announce on the channel that this member wants more than it
   *     gets
   * @param keyLifeMillis how long the compartment's keys live after this sync, at least
   * @param sequence this member's number for this sync, above every earlier one's: the store runs
   *     no sync older than one it already ran (a request delayed on a replaced connection)
   */
  record SyncRequest(
      String compartment,
      String member,
      String expectedEpoch,
      long termMillis,
      int ownLimit,
      int keep,
      int running,
      int want,
      boolean announceUnmet,
      long keyLifeMillis,
      long sequence) {}

  /**
   * What the store recorded for the member, and what it may admit into.
   *
   * @param held the slots the store now counts for this member (at least {@code running})
   * @param cap how many calls the member may run: at most {@code held}, its fair target, and what
   *     the others leave of the limit
   * @param epoch the epoch of the state the slots are held under
   * @param fleetLimit the stored limit the store admitted against
   * @param fencingToken the token of this grant, or 0 when the slots were not granted anew (kept)
   * @param learningMillis how long the store still grants nothing new, after it lost its state
   * @param wasKnown whether the store still had this member's record under the expected epoch
   */
  record SyncReply(
      int held,
      int cap,
      String epoch,
      int fleetLimit,
      long fencingToken,
      long learningMillis,
      boolean wasKnown) {}

  /** Records the member's demand and holdings, grows or keeps its slots; see {@link SyncReply}. */
  SyncReply sync(SyncRequest request);

  /**
   * Makes {@code limit} the compartment's fleet-wide limit; returns the one it replaced, if any.
   */
  @Nullable Integer publishLimit(String compartment, int limit, long keyLifeMillis);

  /**
   * Gives back what a leaving member holds beyond its {@code running} calls; its record goes at
   * once if none runs, else when it expires.
   */
  void leave(String compartment, String member, int running);

  /** How many times a script had to be loaded again because the server had forgotten it. */
  long scriptReloads();

  /** How many times the connections were closed and opened again after time-outs in a row. */
  long reconnects();

  @Override
  void close();
}
