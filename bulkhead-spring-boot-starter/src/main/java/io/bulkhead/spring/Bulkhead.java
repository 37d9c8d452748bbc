package io.bulkhead.spring;

import java.lang.annotation.Documented;
import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;

/**
 * Runs a bean method inside a compartment of the {@link io.bulkhead.BulkheadRegistry} bean.
 *
 * <pre>{@code
 * @Bulkhead("llm")
 * public String complete(String prompt) { ... }                       // holds a slot while it runs
 *
 * @Bulkhead("llm")
 * public CompletableFuture<String> completeAsync(String prompt) { ... } // until the stage completes
 * }</pre>
 *
 * <p>A method returning a plain value (or nothing) runs through {@link io.bulkhead.Bulkhead#call}:
 * on the caller's thread, waiting for a slot as the compartment's {@code max-queue} and {@code
 * max-wait} allow, and freeing it when the method returns or throws. A full compartment throws
 * {@link io.bulkhead.BulkheadFullException} and the method does not run.
 *
 * <p>A method returning {@link java.util.concurrent.CompletionStage} or {@link
 * java.util.concurrent.CompletableFuture} runs through {@link io.bulkhead.Bulkhead#submit}: waiting
 * holds no thread, the slot is held until the stage the method returned completes, and a full
 * compartment fails the returned stage with {@code BulkheadFullException}. A queued method runs on
 * the thread that frees the slot for it.
 *
 * <p>A method returning a {@code Mono} or a {@code Flux} is called as usual, and each subscription
 * to what it returns enters the compartment through {@code bulkhead-reactor}'s operator: waiting
 * holds no thread, the slot is held until the publisher terminates or is cancelled, and a full
 * compartment signals {@code BulkheadFullException}. This needs {@code bulkhead-reactor} on the
 * class path (its {@link BulkheadMethodAdapter} is auto-configured). Other return types are handled
 * by {@code BulkheadMethodAdapter} beans of your own; a {@code Publisher} that no adapter runs
 * fails start-up, as does a name that is not a compartment of the registry. The annotation is read
 * on the method, of the bean's class or of an interface it implements; Spring AOP applies it, so a
 * call from within the same bean is not intercepted.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Bulkhead {

  /** The name of the compartment, as configured under {@code bulkhead.compartments}. */
  String value();
}
