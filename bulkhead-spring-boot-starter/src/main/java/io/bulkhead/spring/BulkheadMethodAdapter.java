package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
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
 *     public Object invoke(io.bulkhead.Bulkhead compartment, MethodInvocation method,
 *         Fallback fallback) throws Throwable {
 *       return ((Mono<?>) method.proceed()).transformDeferred(BulkheadOperator.of(compartment));
 *     }                                              // (a real one also honours the fallback)
 *   };
 * }
 * }</pre>
 *
 * <p>An adapter must take a slot before the work starts and free it exactly once, however the work
 * ends (value, error, cancel). When the compartment refuses, it returns what the {@link Fallback}
 * gives, if there is one, and otherwise signals the {@link BulkheadFullException} the way its type
 * signals errors; a {@code BulkheadFullException} of the work itself (an inner compartment's) is
 * not a refusal and passes on unchanged.
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
   * @param fallback what a refused call returns instead, when the annotation names a {@code
   *     fallbackMethod}; null otherwise
   * @return what the caller of the bean method gets
   * @throws Throwable whatever the method throws, or the rejection
   */
  @Nullable Object invoke(
      io.bulkhead.Bulkhead compartment, MethodInvocation method, @Nullable Fallback fallback)
      throws Throwable;

  /** The annotation's {@code fallbackMethod}, bound to one call's arguments. */
  @FunctionalInterface
  interface Fallback {

    /**
     * Calls the fallback method with the refused call's arguments and {@code rejection}.
     *
     * @return what it returns: a value of the method's return type (for a Kotlin {@code suspend
     *     fun}, a {@code Publisher} of its result)
     * @throws Throwable whatever the fallback method throws
     */
    @Nullable Object apply(BulkheadFullException rejection) throws Throwable;
  }
}
