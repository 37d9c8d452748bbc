package io.bulkhead.spring;

import io.bulkhead.reactor.BulkheadOperator;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
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
   * subscription, not at the call, so a publisher that is never subscribed takes none.
   */
  static final class ReactorMethodAdapter implements BulkheadMethodAdapter {

    @Override
    public boolean supports(Class<?> returnType) {
      return Mono.class.isAssignableFrom(returnType) || Flux.class.isAssignableFrom(returnType);
    }

    @Override
    public @Nullable Object invoke(io.bulkhead.Bulkhead compartment, MethodInvocation method)
        throws Throwable {
      Object publisher = method.proceed();
      if (publisher instanceof Mono<?> mono) {
        return enter(mono, compartment);
      }
      if (publisher instanceof Flux<?> flux) {
        return enter(flux, compartment);
      }
      return publisher; // null: nothing to subscribe to, so nothing to hold a slot for
    }

    private static <T> Mono<T> enter(Mono<T> mono, io.bulkhead.Bulkhead compartment) {
      return mono.transformDeferred(BulkheadOperator.of(compartment));
    }

    private static <T> Flux<T> enter(Flux<T> flux, io.bulkhead.Bulkhead compartment) {
      return flux.transformDeferred(BulkheadOperator.of(compartment));
    }

    @Override
    public String toString() {
      return "Mono and Flux through BulkheadOperator";
    }
  }
}
