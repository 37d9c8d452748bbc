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
 * @Bulkhead(value = "llm", fallbackMethod = "cached")
 * public String complete(String prompt) { ... }            // holds a slot while it runs
 * String cached(String prompt, BulkheadFullException e) { ... } // what a refused call returns
 *
 * @Bulkhead("llm")
 * public CompletableFuture<String> completeAsync(String p) { ... } // until the stage completes
 * }</pre>
 *
 * <p>A method returning a value (or nothing) runs through {@link io.bulkhead.Bulkhead#call}, on the
 * caller's thread, waiting as {@code max-queue} and {@code max-wait} allow. A {@code
 * CompletionStage} or {@code CompletableFuture} runs through {@link io.bulkhead.Bulkhead#submit}:
 * waiting holds no thread, a call that waited starts on one of the compartment's own threads (never
 * on the thread that freed the slot), and the slot is held until the returned stage completes. Each
 * subscription to a returned {@code Mono} or {@code Flux}, and a Kotlin {@code suspend fun} (with
 * {@code kotlinx-coroutines-reactor}), holds the slot until it terminates, is cancelled, or the
 * coroutine completes. A refused call gets {@link io.bulkhead.BulkheadFullException} (thrown, or
 * failing the stage or publisher) and the method does not run, unless a fallback is named.
 *
 * <p>Start-up fails, naming the method, for a compartment that is not configured, a return type
 * that would free the slot too early (a {@code Future}, a Kotlin {@code Flow}, another {@code
 * Publisher} without a {@link BulkheadMethodAdapter}), and a fallback that does not match. Spring
 * AOP applies the annotation, so a call from within the same bean is not intercepted.
 */
@Target(ElementType.METHOD)
@Retention(RetentionPolicy.RUNTIME)
@Documented
public @interface Bulkhead {

  /** The name of the compartment, as configured under {@code bulkhead.compartments}. */
  String value();

  /**
   * The method that answers a call this compartment refuses, instead of the {@link
   * io.bulkhead.BulkheadFullException}: a method of the same class (any visibility) taking this
   * method's parameters and then the exception (or a supertype), returning what this method returns
   * (a stage, a {@code Mono}, a {@code suspend fun}'s result alike). It runs on the thread that
   * sees the refusal. Only refusals reach it: what the method itself throws passes through. Empty:
   * no fallback.
   */
  String fallbackMethod() default "";
}
