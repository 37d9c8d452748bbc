package io.bulkhead.spring;

import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;

/**
 * Runs a {@link Bulkhead @Bulkhead} method whose return type needs its own handling: the extension
 * point for reactive types. Declare one as a bean and it is asked before the built-in handling of
 * plain values and {@link java.util.concurrent.CompletionStage}; the first bean, in {@link
 * org.springframework.core.annotation.Order} order, that {@linkplain #supports supports} a method's
 * return type handles its calls.
 *
 * <pre>{@code
 * @Bean
 * BulkheadMethodAdapter monoAdapter() {
 *   return new BulkheadMethodAdapter() {
 *     public boolean supports(Class<?> returnType) { return Mono.class.isAssignableFrom(returnType); }
 *     public Object invoke(io.bulkhead.Bulkhead compartment, MethodInvocation method) throws Throwable {
 *       return ((Mono<?>) method.proceed()).transformDeferred(BulkheadOperator.of(compartment));
 *     }
 *   };
 * }
 * }</pre>
 *
 * <p>An adapter must take a slot before the work starts and free it exactly once, however the work
 * ends (value, error, cancel), and signal {@link io.bulkhead.BulkheadFullException} the way its
 * type signals errors when the compartment is full.
 */
public interface BulkheadMethodAdapter {

  /**
   * Whether this adapter runs methods returning {@code returnType}; asked once per method at
   * start-up.
   */
  boolean supports(Class<?> returnType);

  /**
   * Runs one call of the method in {@code compartment}: {@code method.proceed()} calls the bean.
   *
   * @return what the caller of the bean method gets
   * @throws Throwable whatever the method throws, or the rejection
   */
  @Nullable Object invoke(io.bulkhead.Bulkhead compartment, MethodInvocation method)
      throws Throwable;
}
