package io.bulkhead.redis;

import java.lang.System.Logger.Level;
import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.LongAdder;

/*
 * This process's side of a fleet compartment's lease protocol: what it tells Redis at each sync and what
 * it does with the answer. Every method but lapse() runs on the fleet's sync thread, one sync at a time;
 * lapse() runs on the fleet's timer. Callers never wait for either.
 *
 * Algorithm
 * ---------
 * sync(), every rebalance interval; a quarter of it while Redis's last answer was short of the want;
 * at once when a call finds no slot and the last answer covered the demand (demandRose: Redis does not
 * know yet); at once when another process announces freed slots or unmet demand; and a second time at
 * once when an answer records more than the cap and the calls running (owesSlots):
 *   1. want = the demand of the last two intervals (LeaseSlots.sampleWant);
 *   2. one script (LettuceLeaseStore SYNC) records keep = max(calls running, cap), running and want,
 *      lowers the record to keep (what the last answer's cap left above it comes back to the fleet),
 *      and grants up to the fair target within what the others leave;
 *   3. the answer's cap becomes the cap, good until sentAt + leaseTtl - margin (LeaseSlots.grant), and
 *      the timer is set to lapse() at that instant. An answer that records more than its cap and its
 *      running calls (the fair target went down: another process wants more) is followed by another
 *      sync at once, whose keep is the lowered cap: it gives the difference back and announces it.
 * Rebalance, in rounds: a process P that runs short while others sit on idle slots asks at once
 * (round 1: Redis records P's want, P's cap stays within the room, and the answer is announced), each
 * idle process syncs on the announcement (round 2: its cap drops to its fair target) and again at once
 * (round 3: its record drops to keep, announced), and P syncs on that (round 4: the room is P's). No
 * step waits for a tick, so the bound is four round trips and two pub/sub deliveries, not an interval
 * (FleetLeaseTest holds every periodic sync and counts the syncs). P's want grows with the calls that
 * keep finding no slot; each sync that reports a larger unmet want announces it again, so the idle
 * processes shrink to the fair target of P's whole demand in further rounds of the same kind. The
 * rounds are paced by that demand: another needs a larger want, so one shortage makes at most `limit`
 * of them (and one more per interval), and a want that jumps (many calls finding no slot at once)
 * takes one. A process that joins below its fair share starts at round 2 the same way: its first
 * sync announces it (LettuceLeaseStore step 8), so it has its share before its first call asks. Without the subscription (a refused SUBSCRIBE) the idle processes hear of P at their
 * next periodic sync and P at its next quarter-interval retry: at most 1.25 intervals. The two syncs
 * of round 2 and 3 are needed: the record may only go down to what the process has stopped admitting
 * into, and it stops only when it learns the lower cap (S2).
 * lapse(): if no later sync extended the lease, the compartment switches to its fallback policy: the
 * state "no sync succeeded for a whole lease TTL", counted and logged once; the next sync that Redis
 * answers ends it (the rejoin), and if Redis had dropped this process's record by then, or lost its
 * state, the calls still running are registered again (leasesLost, logged).
 *
 * Invariants
 * ----------
 *   S1 (Redis) a process's record is raised only within the room the others leave of the limit; the
 *      records add up to at most the limit after every raise. Adopted records above it count calls that
 *      already run; their cap is within the room, so the fleet admits nothing new while it is over.
 *   S2 (here) the cap never exceeds this process's record (LeaseSlots M1), so the calls admitted by the
 *      fleet's leases add up to at most the limit at every instant.
 *   S3 a call admitted under the lease ends, if it keeps its maxCallDuration, before Redis can drop
 *      the record that counts it (LeaseSlots' admitUntil), so no call runs unlicensed for lack of a
 *      renewal: a process cut off from Redis stops admitting by its lease within one lease TTL, and its
 *      calls end before its slots go to another process.
 *   S4 after Redis lost its state (a new epoch), nothing new is granted for one term from its restart:
 *      every call licensed by the lost state ends within it, while each process keeps the slots its
 *      running calls hold (registered again at its next sync).
 *
 * Races
 * -----
 *   sync vs take: covered by LeaseSlots (grant CASes the word; takes retry).
 *   sync vs lapse: the timer may switch to FALLBACK just before a sync's grant lands; the grant then
 *      leaves FALLBACK again (both logged: the switch happened).
 *   a lost reply: Redis recorded more than the cap here; the next sync reports the lower keep.
 *   a late request: a sync sent on a connection the watchdog replaced reaches Redis after a newer
 *      sync ran (its bytes were held by the network). Its keep is of the past, possibly below the
 *      calls running now; run, it would lower the record and hand those calls' slots to the others.
 *      Each sync carries a number above the last one's, and Redis runs none older than one it ran.
 *   ask vs answer: a call that finds no slot CASes shortAsked and requests a sync while a sync is in
 *      flight whose answer then writes shortAsked from a want sent before that call. The request is
 *      not lost: requestSync queues another sync unless one is pending and not yet started, which
 *      samples the demand when it runs. The write only decides whether the next call asks again.
 *   an epoch change between two syncs: calls admitted after the first sync under the old lease are not
 *      in `running` of the sync that meets the new epoch; they are in the next sync's, within one
 *      interval, long before the learning window (a term) ends, and their slots were counted by the old
 *      state, whose records added up to at most the limit.
 */
final class LeaseSync {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private static final VarHandle SHORT_ASKED;

  static {
    try {
      SHORT_ASKED =
          MethodHandles.lookup().findVarHandle(LeaseSync.class, "shortAsked", boolean.class);
    } catch (ReflectiveOperationException e) {
      throw new ExceptionInInitializerError(e);
    }
  }

  /** The part of a term allowed for the two clocks running at different rates (0.2%). */
  private static final long CLOCK_RATE_MARGIN = 500;

  private final String name;
  private final String member;
  private final LeaseStore store;
  private final LeaseSlots slots;
  private final LeaseLine line;
  private final FleetLimit limit;
  private final FallbackShare fallback;
  private final long leaseTtlNanos;
  private final long intervalNanos;
  private final long termMillis;
  private final long keyLifeMillis;
  private final long marginNanos;
  final LongAdder leasesLost = new LongAdder();
  final LongAdder syncsAnswered = new LongAdder();

  // Confined to the sync thread.
  private String epoch = "";
  private boolean registered; // a sync was answered, under `epoch`
  private long lastAnnounce;
  private int announcedWant; // the want of the last unmet demand announced; 0 once one is met
  private long sequence; // of the last sync sent

  private volatile long nextSyncAt;
  private volatile boolean periodic = true; // false only in tests (holdPeriodicSyncs)
  // The last answer recorded more than its cap and the calls running: give it back at once.
  private volatile boolean owesSlots;

  // The process is short and Redis knows (the last answer's cap was below its want), or an
  // immediate sync to tell it is pending: calls that find no slot do not ask again.
  @SuppressWarnings("unused") // through SHORT_ASKED
  private volatile boolean shortAsked;

  private volatile boolean learning;

  LeaseSync(
      String name,
      String member,
      LeaseStore store,
      LeaseSlots slots,
      LeaseLine line,
      FleetLimit limit,
      FallbackShare fallback,
      long leaseTtlMillis,
      long intervalMillis,
      long maxCallMillis) {
    this.name = name;
    this.member = member;
    this.store = store;
    this.slots = slots;
    this.line = line;
    this.limit = limit;
    this.fallback = fallback;
    this.leaseTtlNanos = TimeUnit.MILLISECONDS.toNanos(leaseTtlMillis);
    this.intervalNanos = TimeUnit.MILLISECONDS.toNanos(intervalMillis);
    this.termMillis = leaseTtlMillis + maxCallMillis;
    this.keyLifeMillis = 2 * termMillis;
    this.marginNanos = TimeUnit.MILLISECONDS.toNanos(termMillis) / CLOCK_RATE_MARGIN;
    this.nextSyncAt = System.nanoTime();
  }

  String name() {
    return name;
  }

  /** Whether this compartment's next periodic sync is due. */
  boolean due(long now) {
    return periodic && now - nextSyncAt >= 0;
  }

  /**
   * A call found no slot (any thread). Returns true when the process should sync at once: the last
   * answer covered its demand, so Redis does not know it is short. Otherwise (Redis knows, or the
   * compartment is in fallback) the schedule stands: a quarter interval while short, and at once
   * when another process announces freed slots. So one process that runs short asks once, not once
   * per call, and asks again only after an answer that covered it.
   */
  boolean demandRose() {
    return !shortAsked
        && !LeaseSlots.inFallback(slots.word())
        && SHORT_ASKED.compareAndSet(this, false, true);
  }

  /**
   * Whether Redis counts more slots for this process than its cap: the next sync gives them back.
   */
  boolean owesSlots() {
    return owesSlots;
  }

  /**
   * For tests: no more periodic syncs, only those a call, an announcement or an owed give-back asks
   * for, so a test can count what a rebalance needs without the schedule's help.
   */
  void holdPeriodicSyncs() {
    periodic = false;
  }

  /** Whether Redis grants nothing new now, after it lost its state. */
  boolean learning() {
    return learning;
  }

  /**
   * One sync (sync thread): tells Redis what this process holds and wants and applies the answer.
   * Returns the instant until which the lease now admits, or 0 when Redis did not answer.
   */
  long sync() {
    int own = limit.own();
    int want = slots.sampleWant(own, line.size());
    long w = slots.word();
    int running = LeaseSlots.inUse(w);
    int keep = LeaseSlots.inFallback(w) ? running : Math.max(running, LeaseSlots.cap(w));
    long now = System.nanoTime();
    // Unmet demand is announced when it grew since the last announcement, or an interval after it.
    boolean announce = want > announcedWant || now - lastAnnounce >= intervalNanos;
    long sentAt = now;
    LeaseStore.SyncReply reply;
    try {
      limit.publishIfPending(keyLifeMillis);
      reply =
          store.sync(
              new LeaseStore.SyncRequest(
                  name,
                  member,
                  epoch,
                  termMillis,
                  own,
                  keep,
                  running,
                  want,
                  announce,
                  keyLifeMillis,
                  ++sequence));
    } catch (StoreUnavailableException e) {
      nextSyncAt = System.nanoTime() + intervalNanos;
      return 0;
    }
    syncsAnswered.increment();
    limit.notice(reply.fleetLimit());
    noticeLostRecord(reply, running);
    epoch = reply.epoch();
    registered = true;
    learning = reply.learningMillis() > 0;
    if (reply.cap() >= want) {
      announcedWant = 0;
    } else if (announce) {
      lastAnnounce = now; // Redis announced this unmet demand: not again unless it grows
      announcedWant = want;
    }
    long until = sentAt + leaseTtlNanos - marginNanos;
    if (slots.grant(reply.cap(), until, reply.fencingToken()) && fallback.switches.sum() > 0) {
      fallback.ended(); // not at start-up, where every compartment begins in FALLBACK
    }
    // What Redis still records above the cap and the calls running comes back by a second sync at
    // once (RedisCompartments.syncOne): the process that waits for it hears of it then, not an
    // interval later.
    owesSlots = reply.held() > Math.max(reply.cap(), running);
    // Wanting more than it got: ask again sooner, as other processes give back what they do not
    // use; a call that finds no slot meanwhile does not ask at once (Redis knows).
    boolean short_ = reply.cap() < want;
    shortAsked = short_;
    nextSyncAt = System.nanoTime() + (short_ ? intervalNanos / 4 : intervalNanos);
    line.serve();
    return until;
  }

  /** A sync that Redis answered without this process's record, after one it had answered. */
  private void noticeLostRecord(LeaseStore.SyncReply reply, int running) {
    if (!registered || reply.wasKnown()) {
      return;
    }
    leasesLost.increment();
    boolean newEpoch = !epoch.equals(reply.epoch());
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': "
            + (newEpoch
                ? "Redis lost the fleet's state (a restart without its data?)"
                : "Redis had dropped this process's lease (no sync succeeded for longer than the"
                    + " lease TTL and maxCallDuration: cut off, or paused)")
            + "; its "
            + running
            + " calls still running were registered again"
            + (reply.learningMillis() > 0
                ? ", and Redis grants no new slots for "
                    + reply.learningMillis()
                    + " ms, until every call licensed before can have ended"
                : ""));
  }

  /**
   * The timer's check at the instant the lease stops admitting: if no sync extended it, switch to
   * the fallback policy (counted and logged once) and serve the line by it.
   */
  void lapse() {
    if (slots.lapseIfDue(fallback.share())) {
      fallback.switched(
          registered
              ? "no sync with Redis succeeded for a whole lease TTL ("
                  + TimeUnit.NANOSECONDS.toMillis(leaseTtlNanos)
                  + " ms), so its lease can no longer cover a call; the calls admitted under it end"
                  + " before Redis can give their slots away"
              : "Redis does not answer");
      line.serve();
    }
  }

  /** The first sync did not reach Redis: the compartment starts in fallback (counted, logged). */
  void startedInFallback(String why) {
    fallback.switched("cannot reach Redis at start-up (" + why + ")");
  }

  /** Admits nothing more and gives back what is not in use (sync thread, closing). */
  void close() {
    int running = slots.close();
    line.serve(); // the waiters are refused: the mode is FALLBACK, the cap 0
    if (registered) {
      try {
        store.leave(name, member, running);
      } catch (StoreUnavailableException e) {
        // the record expires within one term
      }
    }
  }
}
