package io.bulkhead.scenarios;

import io.bulkhead.Compartment;
import io.bulkhead.insight.ResourceView;
import io.bulkhead.jdbc.DatabasePools;
import io.bulkhead.jdbc.PoolStats;
import io.bulkhead.jdbc.WorkloadPool;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.ConcurrentHashMap;

/*
 * Concurrency: track() and untrack() run on the experiment's thread, of() on Jetty's, for every
 * compartment of every snapshot. `byName` maps a pool's qualified name (its compartment's name) to the
 * pool; of() also checks that the pool found is behind this very compartment, so a compartment that
 * merely shares a name is never shown another's connections.
 *
 *   T1 of(b) while T2 untracks b's pools (its run is over): T1 either finds the pool and reads its
 *      stats (a pool being closed reads zero connections, never fails), or finds none and the snapshot
 *      shows the compartment without a resource; T2's pools leave the registry right after anyway.
 *   T1 untrack(old) while T2 tracks pools reusing a name: remove(key, old) removes only the old pool,
 *      never the new one.
 */

/**
 * The connection pools behind compartments, for {@code /bulkheads} and the dashboard: for a
 * compartment in front of a tracked {@link WorkloadPool}, its connections handed out ("active"),
 * idle, open ("total") and the threads waiting inside HikariCP for one ("awaiting").
 */
public final class PoolResources implements ResourceView {

  private final ConcurrentHashMap<String, WorkloadPool> byName = new ConcurrentHashMap<>();

  /** Shows the connections of every pool of {@code pools} from now on. */
  public void track(DatabasePools pools) {
    for (WorkloadPool p : pools.pools()) {
      byName.put(p.qualifiedName(), p);
    }
  }

  /** Stops showing them (the pools are about to close). */
  void untrack(DatabasePools pools) {
    for (WorkloadPool p : pools.pools()) {
      byName.remove(p.qualifiedName(), p);
    }
  }

  @Override
  public Optional<ResourceView.Resource> of(Compartment compartment) {
    WorkloadPool pool = byName.get(compartment.name());
    if (pool == null || pool.compartment() != compartment) {
      return Optional.empty();
    }
    return Optional.of(resource(pool.stats()));
  }

  static ResourceView.Resource resource(PoolStats st) {
    Map<String, Long> figures = new LinkedHashMap<>();
    figures.put("active", (long) st.active());
    figures.put("idle", (long) st.idle());
    figures.put("total", (long) st.total());
    figures.put("awaiting", (long) st.waiting());
    return new ResourceView.Resource(
        "pool",
        figures,
        "HikariCP pool of "
            + st.limit()
            + ": "
            + st.active()
            + " connections handed out, "
            + st.idle()
            + " idle, "
            + st.total()
            + " open; "
            + st.waiting()
            + " threads waiting inside it for one");
  }
}
