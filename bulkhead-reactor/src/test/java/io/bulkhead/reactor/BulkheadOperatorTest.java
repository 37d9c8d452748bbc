package io.bulkhead.reactor;

import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadStats;
import io.bulkhead.Permit;
import java.io.IOException;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;
import org.reactivestreams.Subscription;
import reactor.core.publisher.BaseSubscriber;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;
import reactor.test.StepVerifier;
import reactor.test.StepVerifierOptions;
import reactor.util.context.Context;

/** What one subscription through the operator sees, and what the compartment counts for it. */
class BulkheadOperatorTest {

  private static final Duration VERIFY_TIMEOUT = Duration.ofSeconds(30);

  private static Bulkhead compartment(int limit, int maxQueue) {
    return Bulkhead.builder("llm").limit(limit).maxQueue(maxQueue).unboundedWait().build();
  }

  @Test
  void anAdmittedMonoPassesItsValueAndFreesTheSlotOnCompletion() {
    Bulkhead llm = compartment(2, 0);

    StepVerifier.create(Mono.just("answer").transformDeferred(BulkheadOperator.of(llm)))
        .expectNext("answer")
        .expectComplete()
        .verify(VERIFY_TIMEOUT);

    BulkheadStats stats = llm.stats();
    assertThat(stats.inFlight()).isZero();
    assertThat(stats.admitted()).isEqualTo(1);
    assertThat(stats.completed()).isEqualTo(1);
    assertThat(stats.rejected()).isZero();
  }

  @Test
  void anAdmittedFluxPassesItsValuesAndTheSubscribersDemand() {
    Bulkhead llm = compartment(2, 0);
    Flux<Integer> tokens = Flux.range(1, 5).transformDeferred(BulkheadOperator.of(llm));

    StepVerifier.create(tokens, 0)
        .expectSubscription()
        .thenRequest(2)
        .expectNext(1, 2)
        .then(() -> assertThat(llm.stats().inFlight()).isEqualTo(1))
        .thenRequest(3)
        .expectNext(3, 4, 5)
        .expectComplete()
        .verify(VERIFY_TIMEOUT);

    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(1);
  }

  @Test
  void demandRequestedWhileWaitingReachesTheUpstreamOnAdmission() {
    Bulkhead llm = compartment(1, 1);
    Permit held = llm.tryAcquire().orElseThrow();
    Flux<Integer> tokens = Flux.range(1, 10).transformDeferred(BulkheadOperator.of(llm));

    StepVerifier.create(tokens, 3)
        .expectSubscription()
        .then(() -> assertThat(llm.stats().waiting()).isEqualTo(1))
        .then(held::close)
        .expectNext(1, 2, 3)
        .thenCancel()
        .verify(VERIFY_TIMEOUT);

    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(2);
  }

  @Test
  void anErrorIsPassedOnAndFreesTheSlot() {
    Bulkhead llm = compartment(2, 0);
    IOException failure = new IOException("upstream reset");

    StepVerifier.create(Mono.<String>error(failure).transformDeferred(BulkheadOperator.of(llm)))
        .expectErrorSatisfies(e -> assertThat(e).isSameAs(failure))
        .verify(VERIFY_TIMEOUT);

    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(1);
    assertThat(llm.stats().completed()).isEqualTo(1);
  }

  @Test
  void cancellingAfterAdmissionCancelsTheUpstreamAndFreesTheSlot() {
    Bulkhead llm = compartment(2, 0);
    Sinks.One<String> never = Sinks.one();
    AtomicBoolean upstreamCancelled = new AtomicBoolean();
    Mono<String> call = never.asMono().doOnCancel(() -> upstreamCancelled.set(true));

    StepVerifier.create(call.transformDeferred(BulkheadOperator.of(llm)))
        .expectSubscription()
        .then(() -> assertThat(llm.stats().inFlight()).isEqualTo(1))
        .thenCancel()
        .verify(VERIFY_TIMEOUT);

    assertThat(upstreamCancelled).isTrue();
    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(1);
    assertThat(llm.stats().cancelled()).isZero(); // cancelled counts waiters only
  }

  @Test
  void theUpstreamIsCancelledBeforeTheFreedSlotAdmitsTheNextWaiter() throws Exception {
    Bulkhead llm = compartment(1, 1);
    List<String> events = new CopyOnWriteArrayList<>();
    Mono<String> first =
        Sinks.<String>one()
            .asMono()
            .doOnSubscribe(s -> events.add("first subscribed"))
            .doOnCancel(() -> events.add("first cancelled"));
    Mono<String> second =
        Mono.fromSupplier(
            () -> {
              events.add("second subscribed");
              return "second";
            });

    var firstSubscription = first.transformDeferred(BulkheadOperator.of(llm)).subscribe();
    AtomicReference<String> secondValue = new AtomicReference<>();
    CountDownLatch secondDone = new CountDownLatch(1);
    second
        .transformDeferred(BulkheadOperator.of(llm))
        .subscribe(secondValue::set, error -> secondDone.countDown(), secondDone::countDown);
    assertThat(llm.stats().waiting()).isEqualTo(1);

    firstSubscription.dispose();
    // The second starts on the compartment's own threads once the first's slot is handed to it.
    assertThat(secondDone.await(VERIFY_TIMEOUT.toSeconds(), TimeUnit.SECONDS)).isTrue();

    assertThat(events).containsExactly("first subscribed", "first cancelled", "second subscribed");
    assertThat(secondValue).hasValue("second");
    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(2);
  }

  @Test
  void aCancelThatArrivesBeforeTheUpstreamsSubscriptionFreesTheSlotOnlyOnceThatIsCancelled() {
    Bulkhead llm = compartment(1, 0);
    AtomicReference<Subscription> downstream = new AtomicReference<>();
    AtomicInteger inFlightWhenUpstreamCancelled = new AtomicInteger(-1);
    AtomicBoolean upstreamCancelled = new AtomicBoolean();
    // An upstream whose subscribe() sees the downstream cancel before it calls onSubscribe (C4).
    Flux<String> upstream =
        Flux.from(
            subscriber -> {
              downstream.get().cancel();
              subscriber.onSubscribe(
                  new Subscription() {
                    @Override
                    public void request(long n) {}

                    @Override
                    public void cancel() {
                      inFlightWhenUpstreamCancelled.set(llm.stats().inFlight());
                      upstreamCancelled.set(true);
                    }
                  });
            });

    upstream
        .transformDeferred(BulkheadOperator.of(llm))
        .subscribe(
            new BaseSubscriber<String>() {
              @Override
              protected void hookOnSubscribe(Subscription subscription) {
                downstream.set(subscription);
                subscription.request(1);
              }
            });

    assertThat(upstreamCancelled).isTrue();
    assertThat(inFlightWhenUpstreamCancelled).hasValue(1);
    awaitSlotsBack(llm);
  }

  @Test
  void aFullCompartmentSignalsQueueFullAtOnceAndNeverSubscribesTheUpstream() {
    Bulkhead llm = compartment(1, 0);
    Permit held = llm.tryAcquire().orElseThrow();
    AtomicBoolean upstreamSubscribed = new AtomicBoolean();
    Mono<String> call =
        Mono.fromSupplier(
            () -> {
              upstreamSubscribed.set(true);
              return "answer";
            });
    AtomicReference<Throwable> error = new AtomicReference<>();

    call.transformDeferred(BulkheadOperator.of(llm)).subscribe(value -> {}, error::set);

    // Signalled during subscribe, on this thread: no timer, no wait.
    assertThat(error.get())
        .isInstanceOfSatisfying(
            BulkheadFullException.class,
            e -> {
              assertThat(e.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL);
              assertThat(e.bulkheadName()).isEqualTo("llm");
            });
    assertThat(upstreamSubscribed).isFalse();
    assertThat(llm.stats().rejected(BulkheadFullException.Reason.QUEUE_FULL)).isEqualTo(1);
    assertThat(llm.stats().admitted()).isEqualTo(1);
    held.close();
  }

  @Test
  void aFullFluxIsRejectedThroughStepVerifierToo() {
    Bulkhead llm = compartment(1, 0);
    Permit held = llm.tryAcquire().orElseThrow();

    StepVerifier.create(Flux.range(1, 3).transformDeferred(BulkheadOperator.of(llm)))
        .expectErrorSatisfies(
            e ->
                assertThat(e)
                    .isInstanceOfSatisfying(
                        BulkheadFullException.class,
                        full ->
                            assertThat(full.reason())
                                .isEqualTo(BulkheadFullException.Reason.QUEUE_FULL)))
        .verify(VERIFY_TIMEOUT);
    held.close();
  }

  @Test
  void aWaiterThatGetsNoSlotWithinMaxWaitSignalsWaitTimeoutFromItsCompartmentsThread() {
    Bulkhead llm =
        Bulkhead.builder("llm").limit(1).maxQueue(1).maxWait(Duration.ofMillis(20)).build();
    Permit held = llm.tryAcquire().orElseThrow();
    AtomicBoolean upstreamSubscribed = new AtomicBoolean();
    AtomicReference<String> signalledOn = new AtomicReference<>();
    Mono<String> call =
        Mono.fromSupplier(
            () -> {
              upstreamSubscribed.set(true);
              return "answer";
            });

    // The permit is never released, so the only way out is the timeout; the clock decides only
    // when.
    StepVerifier.create(
            call.transformDeferred(BulkheadOperator.of(llm))
                .doOnError(e -> signalledOn.set(Thread.currentThread().getName())))
        .expectErrorSatisfies(
            e ->
                assertThat(e)
                    .isInstanceOfSatisfying(
                        BulkheadFullException.class,
                        full ->
                            assertThat(full.reason())
                                .isEqualTo(BulkheadFullException.Reason.WAIT_TIMEOUT)))
        .verify(VERIFY_TIMEOUT);

    assertThat(signalledOn.get())
        .as("the compartment's own thread, never the timer shared by all")
        .startsWith("bulkhead-llm-");
    assertThat(upstreamSubscribed).isFalse();
    assertThat(llm.stats().rejected(BulkheadFullException.Reason.WAIT_TIMEOUT)).isEqualTo(1);
    assertThat(llm.stats().waiting()).isZero();
    held.close();
  }

  @Test
  void cancellingWhileWaitingLeavesTheQueueAndNeverSubscribesTheUpstream() {
    Bulkhead llm = compartment(1, 10);
    Permit held = llm.tryAcquire().orElseThrow();
    AtomicBoolean upstreamSubscribed = new AtomicBoolean();
    Mono<String> call =
        Mono.fromSupplier(
            () -> {
              upstreamSubscribed.set(true);
              return "answer";
            });

    var subscription = call.transformDeferred(BulkheadOperator.of(llm)).subscribe();
    assertThat(llm.stats().waiting()).isEqualTo(1);
    subscription.dispose();

    assertThat(llm.stats().waiting()).isZero();
    assertThat(llm.stats().cancelled()).isEqualTo(1);
    held.close();
    assertThat(upstreamSubscribed).isFalse();
    awaitSlotsBack(llm);
    assertThat(llm.stats().admitted()).isEqualTo(1); // the permit only
  }

  @Test
  void aTimeoutDownstreamWithdrawsTheWaiter() {
    Bulkhead llm = compartment(1, 10);
    Permit held = llm.tryAcquire().orElseThrow();
    Sinks.Empty<Void> deadline = Sinks.empty();

    StepVerifier.create(
            Mono.just("answer")
                .transformDeferred(BulkheadOperator.of(llm))
                .timeout(deadline.asMono()))
        .expectSubscription()
        .then(() -> assertThat(llm.stats().waiting()).isEqualTo(1))
        .then(deadline::tryEmitEmpty)
        .expectError(TimeoutException.class)
        .verify(VERIFY_TIMEOUT);

    assertThat(llm.stats().waiting()).isZero();
    assertThat(llm.stats().cancelled()).isEqualTo(1);
    held.close();
    awaitSlotsBack(llm);
  }

  @Test
  void theSubscribersContextReachesTheUpstreamWhetherAdmittedAtOnceOrAfterWaiting() {
    Bulkhead llm = compartment(1, 1);
    Mono<String> call = Mono.deferContextual(context -> Mono.just(context.<String>get("tenant")));

    StepVerifier.create(
            call.transformDeferred(BulkheadOperator.of(llm)),
            withContext(Context.of("tenant", "acme")))
        .expectNext("acme")
        .verifyComplete();

    Permit held = llm.tryAcquire().orElseThrow();
    StepVerifier.create(
            call.transformDeferred(BulkheadOperator.of(llm)),
            withContext(Context.of("tenant", "globex")))
        .expectSubscription()
        .then(held::close)
        .expectNext("globex")
        .expectComplete()
        .verify(VERIFY_TIMEOUT);
  }

  @Test
  void theOperatorKeepsMonoAndFluxTypes() {
    Bulkhead llm = compartment(1, 0);
    BulkheadOperator<String> operator = BulkheadOperator.of(llm);
    Mono<String> mono = Mono.just("a").transformDeferred(operator);
    Flux<String> flux = Flux.just("a", "b").transformDeferred(BulkheadOperator.of(llm));
    Mono<String> transformed = Mono.just("a").transform(BulkheadOperator.of(llm));

    assertThat(mono.block()).isEqualTo("a");
    assertThat(flux.collectList().block()).containsExactly("a", "b");
    assertThat(transformed.block()).isEqualTo("a");
    assertThat(llm.stats().admitted()).isEqualTo(3);
  }

  private static StepVerifierOptions withContext(Context context) {
    return StepVerifierOptions.create().withInitialContext(context);
  }

  /**
   * Waits until no slot is held. A waiter is started on its compartment's own threads, and an
   * upstream that answers inside its own subscription completes before the compartment has attached
   * its release: in both cases the slot comes back just after the signals a test sees.
   */
  private static void awaitSlotsBack(Bulkhead llm) {
    await().atMost(VERIFY_TIMEOUT).until(() -> llm.stats().inFlight() == 0);
  }
}
