package io.bulkhead.redis;

import io.bulkhead.BulkheadFullException;
import java.lang.System.Logger.Level;
import java.util.concurrent.atomic.LongAdder;

/*
 * The fallback policy of one fleet compartment: what admits while this process's lease cannot cover a
 * call (Redis unreachable since start-up, or no sync answered for a whole lease TTL). Either a static
 * local share of `share` calls, admitted without a lease, or none (share 0: fail closed, the default).
 * The mode itself lives in LeaseSlots' word (FALLBACK, cap = share); this class holds the policy, its
 * refusals and its log lines.
 *
 * Invariants
 * ----------
 *   F1 calls admitted without a lease never exceed `share`, the calls still running under the lease
 *      included (LeaseSlots M4).
 *   F2 a fallback refusal is immediate (QUEUE_FULL, counted in refusedByFallback): nothing queues for a
 *      slot of the share, and the calls waiting in the lease line when the switch comes are served by
 *      the share or refused the same way.
 *   F3 every switch into fallback is counted once and logged once, by the thread whose CAS of the word
 *      made it (LeaseSlots.lapseIfDue, or the first sync at start-up that failed).
 */
final class FallbackShare {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.redis");

  private final String name;
  private final int share; // 0: fail closed
  final LongAdder switches = new LongAdder();
  final LongAdder refused = new LongAdder();

  FallbackShare(String name, int share) {
    this.name = name;
    this.share = share;
  }

  /** The calls this policy admits at once, 0 when it fails closed. */
  int share() {
    return share;
  }

  /** The compartment switched to this policy (F3): counted and logged once per switch. */
  void switched(String why) {
    switches.increment();
    LOG.log(
        Level.WARNING,
        "compartment '"
            + name
            + "': "
            + why
            + "; "
            + (share > 0
                ? "admitting at most " + share + " calls of this process without a lease"
                : "refusing every call (failClosed)")
            + " until Redis answers");
  }

  /** The compartment admits by its lease again. */
  void ended() {
    LOG.log(Level.INFO, "compartment '" + name + "' admits by its fleet lease again");
  }

  /** The policy's refusal of a call that found the share full (F2), never queued. */
  Refusal refusal() {
    return new Refusal(BulkheadFullException.Reason.QUEUE_FULL, refused);
  }
}
