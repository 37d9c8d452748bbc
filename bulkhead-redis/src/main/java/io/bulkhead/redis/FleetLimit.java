package io.bulkhead.redis;

import java.lang.System.Logger.Level;

/*
 * The fleet's one limit for a compartment: the value in `{bulkhead:NAME}:limit` that every admission
 * counts against, and this process's own.
 *
 * Invariants
 * ----------
 *   L1 one fleet-wide limit at every moment: Redis grants slots against the limit stored there, never
 *      against the caller's. Building a compartment, and setLimit, write this process's limit there (the
 *      latest write wins, which suits a rolling deploy), from the sync thread before its next sync; a
 *      write that fails is retried before the next one (`toPublish`). A store that lost the key gets the
 *      syncing process's limit back. After a lower limit, no process gets a slot while the fleet holds
 *      more, and each one admits only up to its new share: the fleet drains down to it.
 *   L2 a process whose own limit differs from the stored one warns once per stored value it sees, and
 *      still caps itself at its own (the local gate).
 *
 * Races
 * -----
 *   set vs publish: publish() clears `toPublish` before it reads `own`; set() writes `own` before it
 *      raises `toPublish`. A set() that lands during a publish either wrote `own` before the read (its
 *      value is the one published, and one more publish follows: harmless) or raises the flag after it
 *      was cleared (its value is published by the next publishIfPending). No set is left unpublished.
 */
final class FleetLimit {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final String name;
  private final LeaseStore store;
  private volatile int own;
  private volatile boolean toPublish = true;
  private volatile int warned; // the last stored limit warned about, or this process's own

  FleetLimit(String name, LeaseStore store, int own) {
    this.name = name;
    this.store = store;
    this.own = own;
    this.warned = own;
  }

  /** This process's limit. */
  int own() {
    return own;
  }

  /** Makes {@code limit} this process's limit, and the fleet's at the next sync. */
  void set(int limit) {
    own = limit;
    toPublish = true;
  }

  /** Publishes this process's limit if a build or setLimit has not reached Redis yet. */
  void publishIfPending(long keyLifeMillis) {
    if (toPublish) {
      publish(keyLifeMillis);
    }
  }

  /**
   * Makes this process's limit the fleet's (the latest build or setLimit wins). Throws
   * StoreUnavailable when Redis does not answer; publishIfPending tries again.
   */
  private void publish(long keyLifeMillis) {
    toPublish = false;
    int mine = own;
    Integer replaced;
    try {
      replaced = store.publishLimit(name, mine, keyLifeMillis);
    } catch (StoreUnavailableException e) {
      toPublish = true;
      throw e;
    }
    warned = mine;
    if (replaced != null && replaced != mine) {
      LOG.log(
          Level.INFO,
          "compartment '"
              + name
              + "': the fleet's limit is now "
              + mine
              + " (was "
              + replaced
              + "): the latest build or setLimit of any process sets it");
    }
  }

  /** One warning per value when the fleet admits against a limit other than this process's (L2). */
  void notice(int stored) {
    int mine = own;
    if (stored != mine && stored != warned) {
      warned = stored;
      LOG.log(
          Level.WARNING,
          "compartment '"
              + name
              + "': this process's limit is "
              + mine
              + " but the fleet's limit is "
              + stored
              + ", written by a later build or setLimit in another process; the latest write wins,"
              + " so the fleet admits at most "
              + stored
              + " (and this process at most "
              + mine
              + ")");
    }
  }
}
