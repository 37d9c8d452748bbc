package io.bulkhead.micrometer;

import static io.bulkhead.micrometer.BulkheadMetrics.ADMITTED;
import static io.bulkhead.micrometer.BulkheadMetrics.CALL_DURATION;
import static io.bulkhead.micrometer.BulkheadMetrics.CANCELLED;
import static io.bulkhead.micrometer.BulkheadMetrics.IN_FLIGHT;
import static io.bulkhead.micrometer.BulkheadMetrics.LIMIT;
import static io.bulkhead.micrometer.BulkheadMetrics.MAX_QUEUE;
import static io.bulkhead.micrometer.BulkheadMetrics.QUEUE_WAIT;
import static io.bulkhead.micrometer.BulkheadMetrics.REJECTED;
import static io.bulkhead.micrometer.BulkheadMetrics.WAITING;
import static java.util.concurrent.TimeUnit.MILLISECONDS;
import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadFullException.Reason;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Compartment;
import io.bulkhead.Permit;
import io.bulkhead.testing.FakeTicker;
import io.micrometer.core.instrument.Meter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.ThreadLocalRandom;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

class BulkheadMetricsTest {

  private final FakeTicker ticker = new FakeTicker();
  private final MeterRegistry meters = new SimpleMeterRegistry();
  private final ExecutorService threads = Executors.newCachedThreadPool();

  @AfterEach
  void stopThreads() throws InterruptedException {
    threads.shutdownNow();
    assertThat(threads.awaitTermination(10, SECONDS)).isTrue();
  }

  private double gauge(String meter, String name) {
    return meters.get(meter).tag("name", name).gauge().value();
  }

  private double counter(String meter, String name) {
    return meters.get(meter).tag("name", name).functionCounter().count();
  }

  private double rejected(String name, Reason reason) {
    return meters
        .get(REJECTED)
        .tag("name", name)
        .tag("reason", reason.name().toLowerCase(Locale.ROOT))
        .functionCounter()
        .count();
  }

  private Timer timer(String meter, String name) {
    return meters.get(meter).tag("name", name).timer();
  }

  /** Every gauge and counter equals the compartment's own stats at this moment. */
  private void assertMatchesStats(Bulkhead b) {
    BulkheadStats s = b.stats();
    String n = b.name();
    assertThat(gauge(LIMIT, n)).as("limit").isEqualTo(s.limit());
    assertThat(gauge(IN_FLIGHT, n)).as("in flight").isEqualTo(s.inFlight());
    assertThat(gauge(WAITING, n)).as("waiting").isEqualTo(s.waiting());
    assertThat(gauge(MAX_QUEUE, n))
        .as("max queue")
        .isEqualTo(s.maxQueue().isPresent() ? s.maxQueue().getAsInt() : Double.POSITIVE_INFINITY);
    assertThat(counter(ADMITTED, n)).as("admitted").isEqualTo(s.admitted());
    assertThat(counter(CANCELLED, n)).as("cancelled").isEqualTo(s.cancelled());
    for (Reason r : Reason.values()) {
      assertThat(rejected(n, r)).as("rejected %s", r).isEqualTo(s.rejected(r));
    }
    assertThat(timer(CALL_DURATION, n).count())
        .as("call duration count = completed")
        .isEqualTo(s.completed());
  }

  // --- values against the core's stats
  // -------------------------------------------------------------

  @Test
  void aScriptedLoad_everyMeterMatchesTheCoreStats_atEveryStep() {
    Bulkhead llm =
        Bulkhead.builder("llm")
            .limit(3)
            .maxQueue(2)
            .maxWait(Duration.ofMinutes(1))
            .ticker(ticker)
            .build();
    BulkheadMetrics.of(llm).bindTo(meters);
    assertMatchesStats(llm);
    assertThat(gauge(LIMIT, "llm")).isEqualTo(3);
    assertThat(gauge(MAX_QUEUE, "llm")).isEqualTo(2);

    // Three calls take the three slots; two wait; the sixth, and a tryAcquire, are turned away.
    List<CompletableFuture<String>> stages = new ArrayList<>();
    List<CompletableFuture<String>> results = new ArrayList<>();
    for (int i = 0; i < 6; i++) {
      CompletableFuture<String> stage = new CompletableFuture<>();
      stages.add(stage);
      results.add(llm.submit(() -> stage));
    }
    assertThat(llm.tryAcquire()).isEmpty();
    assertMatchesStats(llm);
    assertThat(gauge(IN_FLIGHT, "llm")).isEqualTo(3);
    assertThat(gauge(WAITING, "llm")).isEqualTo(2);
    assertThat(counter(ADMITTED, "llm")).isEqualTo(3);
    assertThat(rejected("llm", Reason.QUEUE_FULL)).isEqualTo(2);
    assertThat(timer(QUEUE_WAIT, "llm").count()).as("nobody has waited to the end yet").isZero();

    // 200 ms later the first call finishes; the oldest waiter gets its slot after waiting 200 ms.
    ticker.advance(Duration.ofMillis(200));
    stages.get(0).complete("a");
    // The waiter starts on the compartment's own thread; the fake clock stands still until it has.
    await().atMost(Duration.ofSeconds(30)).until(() -> timer(QUEUE_WAIT, "llm").count() == 1);
    assertMatchesStats(llm);
    assertThat(timer(CALL_DURATION, "llm").count()).isEqualTo(1);
    assertThat(timer(CALL_DURATION, "llm").totalTime(MILLISECONDS)).isEqualTo(200);
    assertThat(timer(QUEUE_WAIT, "llm").count()).isEqualTo(1);
    assertThat(timer(QUEUE_WAIT, "llm").totalTime(MILLISECONDS)).isEqualTo(200);
    assertThat(gauge(WAITING, "llm")).isEqualTo(1);

    // The remaining waiter is withdrawn by its caller.
    results.get(4).cancel(true);
    assertMatchesStats(llm);
    assertThat(counter(CANCELLED, "llm")).isEqualTo(1);

    // 300 ms more, and everything finishes.
    ticker.advance(Duration.ofMillis(300));
    for (CompletableFuture<String> s : stages) {
      s.complete("done");
    }
    assertMatchesStats(llm);
    assertThat(gauge(IN_FLIGHT, "llm")).isZero();
    assertThat(timer(CALL_DURATION, "llm").count()).isEqualTo(4);
    // 200 (first) + 500 + 500 (the other two first admitted) + 300 (the waiter admitted at 200 ms)
    assertThat(timer(CALL_DURATION, "llm").totalTime(MILLISECONDS)).isEqualTo(1500);
    assertThat(timer(CALL_DURATION, "llm").max(MILLISECONDS)).isEqualTo(500);
    assertThat(timer(QUEUE_WAIT, "llm").count())
        .as("calls admitted at once record no wait")
        .isEqualTo(1);

    // The limit changes at run time; the gauge follows.
    llm.setLimit(7);
    assertMatchesStats(llm);
    assertThat(gauge(LIMIT, "llm")).isEqualTo(7);
  }

  @Test
  void waitTimeout_andInterrupted_areCountedUnderTheirOwnReason() throws Exception {
    Bulkhead db =
        Bulkhead.builder("db")
            .limit(1)
            .maxQueue(1)
            .maxWait(Duration.ofMillis(50))
            .ticker(ticker)
            .build();
    BulkheadMetrics.of(db).bindTo(meters);
    Permit held = db.acquire();

    // An async waiter: the compartment's timer checks its deadline on the fake ticker, which the
    // test
    // has already moved past it, so the waiter times out at the first check (about 50 ms real
    // time).
    CompletableFuture<String> timedOut =
        db.submit(() -> CompletableFuture.completedFuture("never"));
    ticker.advance(Duration.ofSeconds(1));
    await().atMost(Duration.ofSeconds(30)).until(timedOut::isDone);
    assertThat(timedOut).isCompletedExceptionally();
    assertThat(rejected("db", Reason.WAIT_TIMEOUT)).isEqualTo(1);

    // A sync waiter interrupted while it waits.
    Bulkhead patient = Bulkhead.builder("patient").limit(1).maxQueue(1).unboundedWait().build();
    BulkheadMetrics.of(patient).bindTo(meters);
    Permit busy = patient.acquire();
    CountDownLatch started = new CountDownLatch(1);
    Future<?> waiter =
        threads.submit(
            () -> {
              started.countDown();
              return patient.call(() -> "never");
            });
    started.await();
    await().atMost(Duration.ofSeconds(30)).until(() -> patient.stats().waiting() == 1);
    assertThat(gauge(WAITING, "patient")).isEqualTo(1);
    waiter.cancel(true); // interrupts the waiting thread
    await()
        .atMost(Duration.ofSeconds(30))
        .until(() -> rejected("patient", Reason.INTERRUPTED) == 1);
    assertMatchesStats(patient);
    assertMatchesStats(db);
    busy.close();
    held.close();
  }

  @Test
  void anUnboundedQueue_isExportedAsPositiveInfinity() {
    Bulkhead server = Bulkhead.builder("server").limit(4).unboundedQueue().unboundedWait().build();
    BulkheadMetrics.of(server).bindTo(meters);
    assertThat(gauge(MAX_QUEUE, "server")).isEqualTo(Double.POSITIVE_INFINITY);
    Bulkhead noQueue = Bulkhead.builder("reject-at-once").limit(4).build();
    BulkheadMetrics.of(noQueue).bindTo(meters);
    assertThat(gauge(MAX_QUEUE, "reject-at-once")).isZero();
  }

  @Test
  void everyReason_isPresentFromTheStart_atZero() {
    Bulkhead quiet = Bulkhead.builder("quiet").limit(1).build();
    BulkheadMetrics.of(quiet).bindTo(meters);
    Set<String> reasons =
        meters.find(REJECTED).tag("name", "quiet").functionCounters().stream()
            .map(c -> c.getId().getTag("reason"))
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(reasons).containsExactly("interrupted", "queue_full", "wait_timeout");
    for (Reason r : Reason.values()) {
      assertThat(rejected("quiet", r)).isZero();
    }
  }

  @Test
  void callsAdmittedBeforeBinding_areCountedByTheCounters_andTimedWhenTheyFinish() {
    Bulkhead early = Bulkhead.builder("early").limit(2).ticker(ticker).build();
    Permit before = early.tryAcquire().orElseThrow();
    BulkheadMetrics.of(early).bindTo(meters);
    assertThat(counter(ADMITTED, "early")).isEqualTo(1);
    assertThat(gauge(IN_FLIGHT, "early")).isEqualTo(1);
    ticker.advance(Duration.ofMillis(40));
    before.close();
    assertThat(timer(CALL_DURATION, "early").count()).isEqualTo(1);
    assertThat(timer(CALL_DURATION, "early").totalTime(MILLISECONDS)).isEqualTo(40);
  }

  // --- compartments that come and go
  // ---------------------------------------------------------------

  private Set<String> boundNames(MeterRegistry r) {
    return r.getMeters().stream()
        .map(m -> m.getId().getTag("name"))
        .collect(Collectors.toCollection(TreeSet::new));
  }

  @Test
  void aRegistry_compartmentsAddedAndRemovedAtRunTime_appearAndDisappear() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(Bulkhead.builder("login").limit(20).build());
    BulkheadMetrics metrics = BulkheadMetrics.of(registry);
    metrics.bindTo(meters);
    assertThat(boundNames(meters)).containsExactly("login");
    int perCompartment = meters.getMeters().size();
    assertThat(perCompartment)
        .as("4 gauges, admitted, 3 rejected, cancelled, 2 timers")
        .isEqualTo(11);

    Bulkhead chat = registry.register(Bulkhead.builder("chat").limit(5).ticker(ticker).build());
    assertThat(boundNames(meters)).containsExactly("chat", "login");
    assertThat(gauge(LIMIT, "chat")).isEqualTo(5);
    chat.call(() -> "hi");
    assertThat(timer(CALL_DURATION, "chat").count()).isEqualTo(1);

    registry.remove("chat");
    assertThat(boundNames(meters)).containsExactly("login");
    assertThat(meters.getMeters()).hasSize(perCompartment);
    // Its listener is gone too: a late call on the removed compartment records nowhere.
    chat.call(() -> "late");
    assertThat(boundNames(meters)).containsExactly("login");

    // A new compartment under the old name gets fresh meters reading the new compartment.
    Bulkhead chat2 = registry.register(Bulkhead.builder("chat").limit(9).build());
    assertThat(gauge(LIMIT, "chat")).isEqualTo(9);
    assertThat(timer(CALL_DURATION, "chat").count()).isZero();
    chat2.call(() -> "again");
    assertThat(timer(CALL_DURATION, "chat").count()).isEqualTo(1);

    metrics.close();
    assertThat(meters.getMeters()).isEmpty();
    registry.register(Bulkhead.builder("after-close").limit(1).build());
    assertThat(meters.getMeters()).as("no longer following the registry").isEmpty();
    assertThatThrownBy(() -> metrics.bindTo(new SimpleMeterRegistry()))
        .isInstanceOf(IllegalStateException.class)
        .hasMessageContaining("closed");
    metrics.close(); // idempotent
  }

  @Test
  void oneBinder_boundToTwoRegistries_feedsBoth_andCloseEmptiesBoth() throws Exception {
    Bulkhead b = Bulkhead.builder("both").limit(2).build();
    MeterRegistry other = new SimpleMeterRegistry();
    BulkheadMetrics metrics = BulkheadMetrics.of(b);
    metrics.bindTo(meters);
    metrics.bindTo(other);
    b.call(() -> "x");
    assertThat(timer(CALL_DURATION, "both").count()).isEqualTo(1);
    assertThat(other.get(CALL_DURATION).tag("name", "both").timer().count()).isEqualTo(1);
    metrics.close();
    assertThat(meters.getMeters()).isEmpty();
    assertThat(other.getMeters()).isEmpty();
  }

  /**
   * Threads register and remove compartments under a few shared names while the binder follows. At
   * the end the meters name exactly the registered compartments, read their limits, and each
   * carries exactly one of our listeners (one call adds exactly one to its timer).
   */
  @Test
  void concurrentAddsAndRemoves_leaveExactlyTheRegisteredCompartmentsWithOneListenerEach()
      throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    BulkheadMetrics.of(registry).bindTo(meters);
    String[] names = {"a", "b", "c", "d", "e"};
    List<Future<?>> workers = new ArrayList<>();
    CountDownLatch go = new CountDownLatch(1);
    for (int t = 0; t < 4; t++) {
      workers.add(
          threads.submit(
              () -> {
                go.await();
                ThreadLocalRandom rnd = ThreadLocalRandom.current();
                for (int i = 0; i < 2_000; i++) {
                  String name = names[rnd.nextInt(names.length)];
                  if (rnd.nextBoolean()) {
                    try {
                      registry.register(Bulkhead.builder(name).limit(1 + rnd.nextInt(50)).build());
                    } catch (IllegalArgumentException alreadyThere) {
                      // another thread registered it first
                    }
                  } else {
                    registry.remove(name);
                  }
                }
                return null;
              }));
    }
    go.countDown();
    for (Future<?> w : workers) {
      w.get(60, SECONDS);
    }
    Set<String> registered =
        registry.all().stream()
            .map(Compartment::name)
            .collect(Collectors.toCollection(TreeSet::new));
    assertThat(boundNames(meters)).isEqualTo(registered);
    assertThat(meters.getMeters()).hasSize(11 * registered.size());
    for (Compartment c : registry.all()) {
      Bulkhead b = (Bulkhead) c;
      assertThat(gauge(LIMIT, b.name())).isEqualTo(b.config().limit());
      long before = timer(CALL_DURATION, b.name()).count();
      b.call(() -> "once");
      assertThat(timer(CALL_DURATION, b.name()).count()).isEqualTo(before + 1);
    }
  }

  /**
   * The registry calls listeners outside its lock, so "added" can reach the binder after "removed".
   * A listener registered first holds the registering thread inside onAdded until the compartment
   * has been removed again; the binder must then not register meters for it.
   */
  @Test
  void addedHeardAfterRemoved_leavesNoMeters() throws Exception {
    BulkheadRegistry registry = BulkheadRegistry.create();
    CountDownLatch inGate = new CountDownLatch(1);
    CountDownLatch removed = new CountDownLatch(1);
    registry.addListener(
        new BulkheadRegistry.Listener() {
          @Override
          public void onAdded(Compartment b) {
            inGate.countDown();
            try {
              removed.await();
            } catch (InterruptedException e) {
              Thread.currentThread().interrupt();
            }
          }
        });
    BulkheadMetrics.of(registry).bindTo(meters);
    Future<?> registering =
        threads.submit(() -> registry.register(Bulkhead.builder("ghost").limit(1).build()));
    inGate.await();
    registry.remove("ghost"); // the binder hears of the removal first, and has nothing to remove
    removed.countDown();
    registering.get(30, SECONDS); // now the binder hears of the addition
    assertThat(meters.getMeters()).isEmpty();
  }

  @Test
  void aRejectedCall_throwsTheCoreException_andTheMetricsDoNotInterfere() {
    Bulkhead one = Bulkhead.builder("one").limit(1).build();
    BulkheadMetrics.of(one).bindTo(meters);
    Permit p = one.acquire();
    assertThatThrownBy(() -> one.call(() -> "no")).isInstanceOf(BulkheadFullException.class);
    assertThat(one.stats().listenerFailures()).isZero();
    p.close();
    List<Meter> all = meters.getMeters();
    assertThat(all).isNotEmpty();
  }

  @Test
  void anAdaptiveLimit_countsItsMoves_aStaticOneHasNoSuchCounter() {
    java.util.concurrent.atomic.AtomicLong nanos = new java.util.concurrent.atomic.AtomicLong();
    io.bulkhead.Bulkhead llm =
        io.bulkhead.Bulkhead.builder("llm")
            .limit(2)
            .ticker(nanos::get)
            .adaptive(io.bulkhead.AdaptiveLimit.of(io.bulkhead.LimitController.aimd(), 1, 4))
            .build();
    io.bulkhead.Bulkhead fixed = io.bulkhead.Bulkhead.builder("fixed").limit(2).build();
    BulkheadMetrics.of(llm).bindTo(meters);
    BulkheadMetrics.of(fixed).bindTo(meters);
    io.bulkhead.Permit a = llm.tryAcquire().orElseThrow();
    io.bulkhead.Permit b = llm.tryAcquire().orElseThrow();
    nanos.addAndGet(java.time.Duration.ofSeconds(2).toNanos());
    a.close();
    b.close(); // past the interval, both slots were taken: +1
    assertThat(
            meters.get(BulkheadMetrics.LIMIT_CHANGES).tag("name", "llm").functionCounter().count())
        .isEqualTo(1.0);
    assertThat(meters.get(BulkheadMetrics.LIMIT).tag("name", "llm").gauge().value()).isEqualTo(3.0);
    assertThat(meters.find(BulkheadMetrics.LIMIT_CHANGES).tag("name", "fixed").functionCounter())
        .isNull();
  }
}
