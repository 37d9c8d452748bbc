package io.bulkhead.insight;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.AdaptiveLimit;
import io.bulkhead.Budget;
import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadListener;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.LimitController;
import io.bulkhead.Permit;
import io.bulkhead.Ticker;
import java.time.Duration;
import java.util.Optional;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * One sampler for both consumers: one stats read per compartment per sample feeds the diagnosis and
 * the advice, and removal forgets both, even when it races a sample in progress.
 */
class InsightTest {

  private final AtomicLong nanos = new AtomicLong();
  private final Ticker ticker = nanos::get;

  private void advance(Duration d) {
    nanos.addAndGet(d.toNanos());
  }

  private Bulkhead bulkhead(String name) {
    return Bulkhead.builder(name).limit(4).ticker(ticker).build();
  }

  @Test
  void eachSample_readsEachCompartmentsStatsOnce_andFeedsBothTheDiagnosisAndTheAdvice() {
    Observed checkout = new Observed(bulkhead("checkout"));
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(checkout);
    assertThat(insight.diagnosis("checkout").orElseThrow().explanation())
        .isEqualTo("not sampled yet");
    assertThat(insight.advice("checkout")).as("no sample, no advice").isEmpty();
    assertThat(checkout.statsReads.get()).isZero();

    insight.sample();
    assertThat(checkout.statsReads.get()).isEqualTo(1);
    assertThat(insight.advice("checkout").orElseThrow().summary())
        .isEqualTo("first look at 'checkout': the rate needs a second snapshot");

    for (int second = 1; second <= 10; second++) {
      advance(Duration.ofMillis(900));
      Permit p = checkout.delegate.tryAcquire().orElseThrow(); // one call a second, 100 ms each
      advance(Duration.ofMillis(100));
      p.close();
      insight.sample();
    }
    assertThat(checkout.statsReads.get()).isEqualTo(11);
    SizingAdvice advice = insight.advice("checkout").orElseThrow();
    assertThat(advice.arrivalRate().getAsDouble()).isEqualTo(1.0);
    assertThat(advice.latency()).contains(Duration.ofMillis(100));
    Diagnosis d = insight.diagnosis("checkout").orElseThrow();
    assertThat(d.judged()).isTrue();
    assertThat(d.state()).isEqualTo(Diagnosis.State.HEALTHY);
    assertThat(d.admittedRate()).isEqualTo(1.0);
    assertThat(insight.diagnoses()).extracting(Diagnosis::name).containsExactly("checkout");
    assertThat(insight.advice()).extracting(SizingAdvice::name).containsExactly("checkout");
    assertThat(checkout.statsReads.get()).as("reading results reads no stats").isEqualTo(11);
  }

  @Test
  void removingFromAWatchedRegistry_forgetsTheDiagnosisAndTheAdviceAtOnce() {
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(bulkhead("a"));
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(registry);
    registry.register(bulkhead("b"));
    advance(Duration.ofSeconds(1));
    insight.sample();
    assertThat(insight.advice()).extracting(SizingAdvice::name).containsExactly("a", "b");

    registry.remove("a");
    assertThat(insight.diagnosis("a")).isEmpty();
    assertThat(insight.advice("a")).isEmpty();
    assertThat(insight.snapshot().names()).containsExactly("b");

    registry.register(bulkhead("a"));
    assertThat(insight.diagnosis("a").orElseThrow().explanation()).isEqualTo("not sampled yet");
    assertThat(insight.advice("a"))
        .as("a new compartment under an old name starts afresh")
        .isEmpty();
  }

  /**
   * The race the class comment describes: a sample has read the membership and is inside one
   * compartment's stats() when that compartment is removed and another added. The late sample must
   * not resurrect the removed one, and the added one must be there, unsampled, without waiting for
   * it.
   */
  @Test
  void removeAndAdd_whileASampleIsInProgress_neitherResurrectsNorLosesACompartment()
      throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    Observed slow = new Observed(bulkhead("slow"));
    registry.register(slow);
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(registry);
    insight.sample(); // slow has an advice now
    assertThat(insight.advice("slow")).isPresent();

    CountDownLatch inStats = new CountDownLatch(1);
    CountDownLatch release = new CountDownLatch(1);
    slow.holdNextStats(inStats, release);
    advance(Duration.ofSeconds(1));
    Thread sampler = new Thread(insight::sample, "sampler");
    sampler.start();
    assertThat(inStats.await(30, TimeUnit.SECONDS)).as("the sampler reached stats()").isTrue();

    registry.remove("slow");
    registry.register(bulkhead("fresh"));
    assertThat(insight.diagnosis("slow")).isEmpty();
    assertThat(insight.diagnosis("fresh").orElseThrow().explanation()).isEqualTo("not sampled yet");

    release.countDown();
    sampler.join(TimeUnit.SECONDS.toMillis(30));
    assertThat(sampler.isAlive()).isFalse();
    assertThat(insight.diagnosis("slow"))
        .as("the late sample recorded into a forgotten entry")
        .isEmpty();
    assertThat(insight.advice("slow")).isEmpty();
    assertThat(insight.advice("fresh")).as("not in the array the sample had read").isEmpty();
    assertThat(insight.snapshot().names()).containsExactly("fresh");

    advance(Duration.ofSeconds(1));
    insight.sample();
    assertThat(insight.advice("fresh")).isPresent();
  }

  @Test
  void aCompartmentWhoseStatsThrow_isSkipped_andTheOthersAreStillSampled() {
    Observed broken = new Observed(bulkhead("broken"));
    broken.failing = true;
    Observed fine = new Observed(bulkhead("fine"));
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(broken);
    insight.watch(fine);
    insight.sample();
    assertThat(insight.advice("broken")).isEmpty();
    assertThat(insight.advice("fine")).isPresent();
  }

  @Test
  void snapshot_listsTheWatchedCompartments_withTheirResources() {
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(bulkhead("db"));
    insight.watch(bulkhead("llm"));
    ResourceView pools =
        c ->
            c.name().equals("db")
                ? Optional.of(
                    new ResourceView.Resource("pool", java.util.Map.of("active", 1L), "one"))
                : Optional.empty();
    String json = insight.snapshot(pools).toJson();
    assertThat(json)
        .startsWith("{\"compartments\":[{\"name\":\"db\",")
        .contains(
            "\"resource\":{\"kind\":\"pool\",\"figures\":{\"active\":1},\"summary\":\"one\"},"
                + "\"adaptive\":null}")
        .endsWith("\"advice\":null,\"resource\":null,\"adaptive\":null}]}");
  }

  @Test
  void snapshot_showsAnAdaptiveLimit_itsController_andWhyItLastMoved() {
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(2)
            .ticker(ticker)
            .adaptive(AdaptiveLimit.of(LimitController.aimd(), 1, 4))
            .build();
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(llm);
    // Two calls of 2 s take both slots; the release past the interval adds one.
    Permit a = llm.tryAcquire().orElseThrow();
    Permit b = llm.tryAcquire().orElseThrow();
    advance(Duration.ofSeconds(2));
    a.close();
    b.close();
    assertThat(insight.snapshot().toJson())
        .contains(
            "\"adaptive\":{\"controller\":\"aimd\",\"min\":1,\"max\":4,\"limit\":3,\"changes\":1,"
                + "\"lastMove\":\"demand reached the limit and admitted p50 2s is within 2.0 × the"
                + " baseline of 2s: limit 2 → 3\"}");
  }

  @Test
  void snapshotOnly_keepsTheNamedCompartmentInTheSameDocument_orNone() {
    Insight insight = Insight.builder().ticker(ticker).build();
    insight.watch(bulkhead("db"));
    insight.watch(bulkhead("llm"));
    Snapshot all = insight.snapshot();

    Snapshot llm = all.only("llm");

    assertThat(llm.names()).containsExactly("llm");
    assertThat(llm.toJson()).startsWith("{\"compartments\":[{\"name\":\"llm\",");
    assertThat(all.toJson())
        .contains(
            llm.toJson()
                .substring("{\"compartments\":[".length(), llm.toJson().length() - "]}".length()));
    assertThat(all.only("nope").names()).isEmpty();
    assertThat(all.names()).containsExactly("db", "llm");
  }

  /** A compartment that counts its stats reads, and can hold one or fail them. */
  private static final class Observed implements Compartment {
    final Bulkhead delegate;
    final AtomicInteger statsReads = new AtomicInteger();
    volatile boolean failing;
    private volatile CountDownLatch entered;
    private volatile CountDownLatch release;

    Observed(Bulkhead delegate) {
      this.delegate = delegate;
    }

    void holdNextStats(CountDownLatch entered, CountDownLatch release) {
      this.release = release;
      this.entered = entered;
    }

    @Override
    public BulkheadStats stats() {
      statsReads.incrementAndGet();
      if (failing) {
        throw new IllegalStateException("stats unavailable");
      }
      CountDownLatch in = entered;
      if (in != null) {
        entered = null;
        in.countDown();
        try {
          if (!release.await(30, TimeUnit.SECONDS)) {
            throw new AssertionError("never released");
          }
        } catch (InterruptedException e) {
          Thread.currentThread().interrupt();
        }
      }
      return delegate.stats();
    }

    @Override
    public String name() {
      return delegate.name();
    }

    @Override
    public BulkheadConfig config() {
      return delegate.config();
    }

    @Override
    public void setLimit(int limit) {
      delegate.setLimit(limit);
    }

    @Override
    public void addListener(BulkheadListener listener) {
      delegate.addListener(listener);
    }

    @Override
    public boolean removeListener(BulkheadListener listener) {
      return delegate.removeListener(listener);
    }

    @Override
    public Optional<Budget> budget() {
      return delegate.budget();
    }

    @Override
    public void leaveBudget() {
      delegate.leaveBudget();
    }
  }
}
