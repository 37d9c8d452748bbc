package io.bulkhead.micrometer;

import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.locks.ReentrantLock;

/*
 * The meters of every compartment in one MeterRegistry, keyed by compartment name.
 *
 * Invariant: for each name, the MeterRegistry holds the meters of at most one compartment, the one
 * in `byName`, and that compartment carries exactly one of our listeners.
 *
 * Concurrency: a BulkheadRegistry calls onAdded and onRemoved on whichever thread changed it, outside
 * its own lock, so two changes to the same name can reach us concurrently and in either order. Every
 * change runs under `lock`, including the Micrometer registrations, because Micrometer identifies a
 * meter by name and tags only: a new compartment "x" registering while the old "x" is being removed
 * would be handed the old meters (Micrometer returns an existing meter with the same id), and the
 * removal would then take them away from the new one. The lock makes "remove old, register new" one
 * step. Micrometer's registration runs no bulkhead code, and meter functions (the gauges' lambdas) run
 * later, on the scraping thread, never under this lock.
 *
 *   T1 registry.remove("x") and T2 registry.register(new "x"): the listener calls may arrive as
 *      onAdded(new) then onRemoved(old). onAdded(new) finds old under "x", removes its meters and
 *      registers new's; onRemoved(old) finds new under "x", not old, and does nothing.
 *   T1 onAdded(b) and T2 close(): under the lock, either b's meters are registered and close() removes
 *      them, or close() ran first, set `closed`, and onAdded(b) registers nothing.
 *   T1 registry.register(x) and T2 registry.remove(x) right after: onRemoved(x) may reach us first
 *      and find nothing. onAdded(x) therefore checks, under the lock, that the registry still holds
 *      x. If T2's removal came before that check, x is skipped; if after, T2's onRemoved(x) is still
 *      to come (the registry calls it after the change) and waits for the lock, then removes x.
 *      (Lock order: ours, then the registry's; the registry never calls us holding its own.)
 */
final class Binding implements BulkheadRegistry.Listener {

  private final MeterRegistry meterRegistry;
  private final BulkheadRegistry source; // null when binding a single compartment
  private final ReentrantLock lock = new ReentrantLock();
  private final Map<String, CompartmentMeters> byName = new LinkedHashMap<>(); // guarded by lock
  private boolean closed; // guarded by lock

  Binding(MeterRegistry meterRegistry, BulkheadRegistry source) {
    this.meterRegistry = meterRegistry;
    this.source = source;
  }

  @Override
  public void onAdded(Compartment bulkhead) {
    lock.lock();
    try {
      if (closed || (source != null && source.find(bulkhead.name()).orElse(null) != bulkhead)) {
        return; // closed, or already removed again: see the third interleaving above
      }
      CompartmentMeters existing = byName.get(bulkhead.name());
      if (existing != null) {
        if (existing.bulkhead() == bulkhead) {
          return;
        }
        existing.remove();
      }
      byName.put(bulkhead.name(), CompartmentMeters.register(meterRegistry, bulkhead));
    } finally {
      lock.unlock();
    }
  }

  @Override
  public void onRemoved(Compartment bulkhead) {
    lock.lock();
    try {
      CompartmentMeters existing = byName.get(bulkhead.name());
      if (existing != null && existing.bulkhead() == bulkhead) {
        byName.remove(bulkhead.name());
        existing.remove();
      }
    } finally {
      lock.unlock();
    }
  }

  void close() {
    lock.lock();
    try {
      closed = true;
      List<CompartmentMeters> all = new ArrayList<>(byName.values());
      byName.clear();
      for (CompartmentMeters m : all) {
        m.remove();
      }
    } finally {
      lock.unlock();
    }
  }
}
