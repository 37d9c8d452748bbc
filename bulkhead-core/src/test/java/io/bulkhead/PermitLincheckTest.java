package io.bulkhead;

import java.util.ArrayDeque;
import org.jetbrains.lincheck.datastructures.IntGen;
import org.jetbrains.lincheck.datastructures.ModelCheckingOptions;
import org.jetbrains.lincheck.datastructures.Operation;
import org.jetbrains.lincheck.datastructures.Param;
import org.jetbrains.lincheck.datastructures.ThreadIdGen;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Linearizability of the lock-free fast path, of {@code setLimit} and of the counts (races R2, R6
 * and C1 in {@link DefaultBulkhead}): every concurrent history of tryAcquire, close, setLimit and
 * stats must be explainable by some sequential order of the same operations, with the same results.
 *
 * <p>Each thread keeps its own permits (indexed by thread id), so an operation's result depends on
 * the compartment alone and the operations can serve as their own sequential specification.
 */
@Param(name = "limit", gen = IntGen.class, conf = "1:3")
@Param(name = "tid", gen = ThreadIdGen.class)
public class PermitLincheckTest {

  private static final int THREADS = 3;

  private final Bulkhead bulkhead = Bulkhead.builder("permits").limit(2).build();

  @SuppressWarnings("unchecked")
  private final ArrayDeque<Permit>[] held = new ArrayDeque[THREADS + 1];

  public PermitLincheckTest() {
    for (int i = 0; i < held.length; i++) {
      held[i] = new ArrayDeque<>();
    }
    // 254 admissions first: the word's count of fast admissions is then one short of its carry
    // (C1),
    // so every scenario's second admission carries, racing with the others and with counts().
    for (int i = 0; i < 254; i++) {
      bulkhead.tryAcquire().orElseThrow().close();
    }
  }

  /**
   * Admitted and in flight as stats() reads them (without its latency window, whose loops the model
   * checker would take for a livelock): one consistent snapshot, exact at every instant.
   */
  @Operation
  public String admittedAndInFlight() {
    DefaultBulkhead.Counts c = ((DefaultBulkhead) bulkhead).counts();
    return "admitted=" + c.admitted() + " inFlight=" + c.inFlight();
  }

  /**
   * Completed alone. It is derived (admitted - inFlight) and clamped to the highest value any
   * reader has reported, so it is linearizable by itself, but not as one snapshot with the counts
   * above: the model checker found a reader whose stale in-flight count met a newer reader's
   * completed count.
   */
  @Operation
  public long completed() {
    return ((DefaultBulkhead) bulkhead).counts().completed();
  }

  @Operation
  public boolean tryAcquire(@Param(name = "tid") int tid) {
    return bulkhead.tryAcquire().map(held[tid]::add).orElse(false);
  }

  @Operation
  public boolean close(@Param(name = "tid") int tid) {
    Permit p = held[tid].pollFirst();
    if (p == null) {
      return false;
    }
    p.close();
    return true;
  }

  @Operation
  public void setLimit(@Param(name = "limit") int limit) {
    bulkhead.setLimit(limit);
  }

  // Model checking is slow on a loaded 2-core machine; a deeper run:
  // -Dbulkhead.lincheck.iterations=30 -Dbulkhead.lincheck.invocations=2000
  @Test
  @Timeout(value = 15, unit = java.util.concurrent.TimeUnit.MINUTES)
  void linearizable() {
    new ModelCheckingOptions()
        .iterations(Integer.getInteger("bulkhead.lincheck.iterations", 10))
        .invocationsPerIteration(Integer.getInteger("bulkhead.lincheck.invocations", 300))
        .threads(THREADS)
        .actorsPerThread(3)
        .actorsBefore(2)
        .actorsAfter(2)
        .check(PermitLincheckTest.class);
  }
}
