package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.reactor.BulkheadOperator;
import java.util.concurrent.atomic.AtomicBoolean;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.reactivestreams.Publisher;
import org.springframework.boot.autoconfigure.AutoConfiguration;
import org.springframework.boot.autoconfigure.condition.ConditionalOnClass;
import org.springframework.context.annotation.Bean;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;

/**
 * {@link Bulkhead @Bulkhead} on methods returning a {@link Mono} or a {@link Flux}, when Reactor is
 * on the class path: every subscription to the returned publisher enters the compartment through
 * {@link BulkheadOperator} (it waits without a thread, holds the slot until the publisher
 * terminates or is cancelled, and a full compartment signals {@link
 * io.bulkhead.BulkheadFullException}).
 */
@AutoConfiguration(after = BulkheadAutoConfiguration.class)
@ConditionalOnClass(Mono.class)
public class BulkheadReactorAutoConfiguration {

  /** Created by Spring Boot. */
  public BulkheadReactorAutoConfiguration() {}

  /** Runs {@code Mono} and {@code Flux} methods through the operator. */
  @Bean
  BulkheadMethodAdapter compartmentReactorMethodAdapter() {
    return new ReactorMethodAdapter();
  }

  /**
   * Calls the bean method at once, as without the annotation (it only assembles the publisher), and
   * puts each subscription to what it returns into the compartment; the slot is taken at
   * subscription, not at the call, so a publisher that is never subscribed takes none. A Kotlin
   * {@code suspend fun} comes here as the {@code Mono} (or {@code Flux}) Spring AOP makes of it,
   * whose subscription runs the coroutine: the slot is held until the coroutine completes. With a
   * fallback, a subscription the compartment refuses switches to the fallback's publisher.
   */
  static final class ReactorMethodAdapter implements BulkheadMethodAdapter {

    @Override
    public boolean supports(Class<?> returnType) {
      return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
    }

    @Override
    public @Nullable Object invoke(
        io.bulkhead.Bulkhead compartment, MethodInvocation method, @Nullable Fallback fallback)
        throws Throwable {
      Object publisher = method.proceed();
      if (publisher instanceof Mono<?> mono) {
        return fallback == null
            ? mono.transformDeferred(BulkheadOperator.of(compartment))
            : Mono.defer(() -> enter(mono, compartment, fallback));
      }
      if (publisher instanceof Flux<?> flux) {
        return fallback == null
            ? flux.transformDeferred(BulkheadOperator.of(compartment))
            : Flux.defer(() -> enter(flux, compartment, fallback));
      }
      return publisher; // null: nothing to subscribe to, so nothing to hold a slot for
    }

    /**
     * One subscription: its own flag, set when the operator subscribes to the method's publisher
     * (only once admitted, before any of its signals), tells this compartment's refusal (flag
     * unset) from a {@code BulkheadFullException} the publisher itself signals.
     */
    private static <T> Mono<T> enter(Mono<T> mono, io.bulkhead.Bulkhead compartment, Fallback f) {
      AtomicBoolean admitted = new AtomicBoolean();
      return Mono.defer(
              () -> {
                admitted.set(true);
                return mono;
              })
          .transform(BulkheadOperator.of(compartment))
          .onErrorResume(
              e -> e instanceof BulkheadFullException && !admitted.get(),
              e -> Mono.from(instead(f, (BulkheadFullException) e)));
    }

    private static <T> Flux<T> enter(Flux<T> flux, io.bulkhead.Bulkhead compartment, Fallback f) {
      AtomicBoolean admitted = new AtomicBoolean();
      return Flux.defer(
              () -> {
                admitted.set(true);
                return flux;
              })
          .transform(BulkheadOperator.of(compartment))
          .onErrorResume(
              e -> e instanceof BulkheadFullException && !admitted.get(),
              e -> instead(f, (BulkheadFullException) e));
    }

    /** The fallback's publisher; one that throws or returns null becomes an error signal. */
    @SuppressWarnings("unchecked")
    private static <T> Publisher<T> instead(Fallback fallback, BulkheadFullException rejection) {
      Object publisher;
      try {
        publisher = fallback.apply(rejection);
      } catch (Throwable thrown) {
        return Mono.error(thrown);
      }
      if (publisher == null) {
        return Mono.error(new NullPointerException("the fallbackMethod returned null"));
      }
      return (Publisher<T>) publisher;
    }

    @Override
    public String toString() {
      return "Mono and Flux through BulkheadOperator";
    }
  }
}
