package io.bulkhead.reactor;

import io.bulkhead.Bulkhead;
import java.util.Objects;
import java.util.function.UnaryOperator;
import org.reactivestreams.Publisher;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/*
 * The operator only wraps the publisher; each subscription is one BulkheadSubscriber, whose opening
 * comment gives the algorithm, the invariants and the races (cancel vs admission, cancel vs completion,
 * error vs cancel) as interleavings.
 */

/**
 * Puts every subscription to a {@code Mono} or a {@code Flux} into a compartment.
 *
 * <pre>{@code
 * Mono<Answer> answer = client.complete(prompt).transformDeferred(BulkheadOperator.of(llm));
 * Flux<Token> tokens = client.stream(prompt).transformDeferred(BulkheadOperator.of(llm));
 * }</pre>
 *
 * <p>It is a {@code UnaryOperator<Publisher<T>>}, which both {@link Mono#transformDeferred} and
 * {@link Flux#transformDeferred} accept: a {@code Mono} stays a {@code Mono} (at most one value)
 * and anything else becomes a {@code Flux}, so {@code Mono<T>} gives {@code Mono<T>} and {@code
 * Flux<T>} gives {@code Flux<T>} without a cast. The operator keeps no per-subscription state, so
 * {@code transform} works as well as {@code transformDeferred}, and one instance may serve any
 * number of publishers; {@code of} is cheap enough to call at every use.
 *
 * <p>Each subscription waits for a slot without holding a thread, subscribes to the upstream once
 * admitted, and frees the slot exactly once when the upstream completes, fails or is cancelled. A
 * compartment that does not admit it signals {@link io.bulkhead.BulkheadFullException} through
 * {@code onError}. The package documentation gives the semantics in full and says which thread runs
 * what.
 *
 * @param <T> the type of the values that pass through
 */
public final class BulkheadOperator<T> implements UnaryOperator<Publisher<T>> {

  private final Bulkhead bulkhead;

  private BulkheadOperator(Bulkhead bulkhead) {
    this.bulkhead = bulkhead;
  }

  /**
   * Returns the operator for {@code bulkhead}.
   *
   * @throws NullPointerException if {@code bulkhead} is null
   */
  public static <T> BulkheadOperator<T> of(Bulkhead bulkhead) {
    return new BulkheadOperator<>(Objects.requireNonNull(bulkhead, "bulkhead"));
  }

  /**
   * Wraps {@code upstream}: a {@link Mono} in a {@code Mono}, any other publisher in a {@link
   * Flux}. Nothing is subscribed until the result is.
   */
  @Override
  public Publisher<T> apply(Publisher<T> upstream) {
    Objects.requireNonNull(upstream, "upstream");
    if (upstream instanceof Mono<T> mono) {
      return new MonoBulkhead<>(mono, bulkhead);
    }
    return new FluxBulkhead<>(Flux.from(upstream), bulkhead);
  }
}
