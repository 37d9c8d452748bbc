package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.core.MethodParameter;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/*
 * Concurrency: `handlers` is a cache of immutable Handlers by method. Two threads calling a method for
 * the first time may both resolve it (resolution has no side effect) and the first put wins; no lock
 * is held while an adapter's supports() runs. The registry and the adapters are looked up once, on
 * first use, through suppliers that return the same beans every time.
 *
 * A fallback runs only for this compartment's own refusal, told from a BulkheadFullException of the
 * method itself (an inner compartment's) by a flag the admitted task sets before the method runs:
 * call() runs the task on the caller's thread, and submit() completes its future only after the task
 * has run, so the flag is read after it was written whenever it was written.
 */

/**
 * Runs {@link Bulkhead @Bulkhead} methods in their compartment: plain values through {@link
 * io.bulkhead.Bulkhead#call}, {@link CompletionStage}s through {@link io.bulkhead.Bulkhead#submit},
 * other types (Reactor's, and Kotlin suspend functions, which Spring AOP presents as a {@code
 * Mono}) through a {@link BulkheadMethodAdapter}; a refused call returns its fallback when there is
 * one. {@link #check} checks a method at start-up and refuses what it cannot run correctly.
 */
final class BulkheadMethodInterceptor implements MethodInterceptor {

  private static final String PUBLISHER = "org.reactivestreams.Publisher";
  private static final String MONO = "reactor.core.publisher.Mono";
  private static final String FLUX = "reactor.core.publisher.Flux";
  private static final String FLOW = "kotlinx.coroutines.flow.Flow";

  /** What Spring AOP needs to hold a suspend fun's call until its coroutine completes. */
  private static final String COROUTINES_REACTOR = "kotlinx.coroutines.reactor.MonoKt";

  private final Supplier<BulkheadRegistry> registry;
  private final Supplier<List<BulkheadMethodAdapter>> adapters;
  private final @Nullable ClassLoader classLoader;
  private final Map<Method, Handler> handlers = new ConcurrentHashMap<>();

  /** How one method runs: in which compartment, how, and what a refused call returns instead. */
  private record Handler(
      String compartment,
      boolean stage,
      @Nullable BulkheadMethodAdapter adapter,
      @Nullable FallbackMethod fallback) {}

  /**
   * @param classLoader the application's (its bean class loader): which optional types it has
   */
  BulkheadMethodInterceptor(
      Supplier<BulkheadRegistry> registry,
      Supplier<List<BulkheadMethodAdapter>> adapters,
      @Nullable ClassLoader classLoader) {
    this.registry = registry;
    this.adapters = adapters;
    this.classLoader = classLoader;
  }

  @Override
  public @Nullable Object invoke(MethodInvocation invocation) throws Throwable {
    Class<?> targetClass =
        invocation.getThis() == null
            ? invocation.getMethod().getDeclaringClass()
            : AopUtils.getTargetClass(invocation.getThis());
    Method method = AopUtils.getMostSpecificMethod(invocation.getMethod(), targetClass);
    Handler handler = handlers.get(method);
    if (handler == null) {
      handler = resolve(method);
      Handler raced = handlers.putIfAbsent(method, handler);
      handler = raced == null ? handler : raced;
    }
    String name = handler.compartment();
    io.bulkhead.Bulkhead compartment =
        registry
            .get()
            .bulkhead(name)
            .orElseThrow(
                () ->
                    new IllegalStateException(
                        "compartment '"
                            + name
                            + "' of @Bulkhead on "
                            + BulkheadConfigurationException.describe(method)
                            + " was removed from the registry"));
    FallbackMethod fallback = handler.fallback();
    if (handler.adapter() != null) {
      BulkheadMethodAdapter.Fallback refused =
          fallback == null
              ? null
              : rejection ->
                  fallback.invoke(invocation.getThis(), invocation.getArguments(), rejection);
      return handler.adapter().invoke(compartment, invocation, refused);
    }
    if (handler.stage()) {
      return fallback == null
          ? compartment.submit(() -> proceedToStage(invocation))
          : submitWithFallback(compartment, invocation, fallback);
    }
    if (fallback == null) {
      return compartment.call(() -> proceed(invocation));
    }
    boolean[] admitted = {false};
    try {
      return compartment.call(
          () -> {
            admitted[0] = true;
            return proceed(invocation);
          });
    } catch (BulkheadFullException rejection) {
      if (admitted[0]) {
        throw rejection; // the method's own, not this compartment's refusal
      }
      return fallback.invoke(invocation.getThis(), invocation.getArguments(), rejection);
    }
  }

  /**
   * Checks that {@code method} names a compartment that admits calls, returns a type this
   * interceptor runs correctly, and has the fallback it names; remembers how to run it.
   *
   * @return whether {@code method} carries {@link Bulkhead @Bulkhead}
   * @throws BulkheadConfigurationException naming the method and what it cannot handle
   */
  boolean check(Method method) {
    if (AnnotatedElementUtils.findMergedAnnotation(method, Bulkhead.class) == null) {
      return false;
    }
    handlers.putIfAbsent(method, resolve(method));
    return true;
  }

  private Handler resolve(Method method) {
    Bulkhead annotation = AnnotatedElementUtils.findMergedAnnotation(method, Bulkhead.class);
    if (annotation == null) {
      throw new IllegalStateException(
          BulkheadConfigurationException.describe(method) + " has no @Bulkhead");
    }
    String name = annotation.value();
    BulkheadRegistry compartments = registry.get();
    if (compartments.bulkhead(name).isEmpty()) {
      String why =
          compartments.find(name).isPresent()
              ? "which is a view that admits no calls of its own (a worker or connection pool)"
              : "which is not configured; the compartments are "
                  + compartments.all().stream().map(io.bulkhead.Compartment::name).toList()
                  + " (define it under bulkhead.compartments."
                  + name
                  + ")";
      throw new BulkheadConfigurationException(
          "@Bulkhead(\""
              + name
              + "\") on "
              + BulkheadConfigurationException.describe(method)
              + " names compartment '"
              + name
              + "', "
              + why,
          "Correct the name in the annotation or configure the compartment.");
    }
    FallbackMethod fallback =
        annotation.fallbackMethod().isEmpty()
            ? null
            : FallbackMethod.resolve(method, name, annotation.fallbackMethod());
    ClassLoader loader =
        classLoader != null ? classLoader : method.getDeclaringClass().getClassLoader();
    if (KotlinDetector.isSuspendingFunction(method)) {
      return suspending(method, name, fallback, loader);
    }
    Class<?> returnType = method.getReturnType();
    for (BulkheadMethodAdapter adapter : adapters.get()) {
      if (adapter.supports(returnType)) {
        return new Handler(name, false, adapter, fallback);
      }
    }
    if (CompletionStage.class.isAssignableFrom(returnType)) {
      if (!returnType.isAssignableFrom(CompletableFuture.class)) {
        throw refused(
            method,
            name,
            "returns "
                + returnType.getName()
                + ", a CompletionStage that is"
                + " not a CompletableFuture; declare CompletionStage or CompletableFuture");
      }
      return new Handler(name, true, null, fallback);
    }
    if (isA(returnType, PUBLISHER, loader)) {
      throw refused(
          method,
          name,
          "returns "
              + returnType.getName()
              + ", a Publisher that no BulkheadMethodAdapter runs: Mono and Flux run once Reactor is"
              + " on the class path (their adapter is auto-configured); other Publishers need an"
              + " adapter bean of their own");
    }
    if (isA(returnType, FLOW, loader)) {
      throw refused(
          method,
          name,
          "returns a Kotlin Flow, which would leave the compartment before anyone collects it;"
              + " make it a suspend fun, or return a Flux");
    }
    if (Future.class.isAssignableFrom(returnType)) {
      throw refused(
          method,
          name,
          "returns "
              + returnType.getName()
              + ", a Future that does not say"
              + " when its work ends; return a CompletionStage (CompletableFuture)");
    }
    return new Handler(name, false, null, fallback);
  }

  /**
   * A Kotlin {@code suspend fun}: Spring AOP calls it as a {@code Mono} (a {@code Flux} for one
   * returning a {@code Flow}) when kotlinx-coroutines-reactor is there, and turns that back into
   * the coroutine's result; the adapter for that type holds the slot until the coroutine completes.
   * Without it the method would return at its first suspension, so it is refused.
   */
  private Handler suspending(
      Method method, String name, @Nullable FallbackMethod fallback, @Nullable ClassLoader loader) {
    if (!ClassUtils.isPresent(COROUTINES_REACTOR, loader)) {
      throw refused(
          method,
          name,
          "is a suspend fun, which Spring AOP would let return at its first suspension, freeing the"
              + " slot while the coroutine still runs; add org.jetbrains.kotlinx:"
              + "kotlinx-coroutines-reactor, through which Spring holds the call until the coroutine"
              + " completes");
    }
    boolean flow = FLOW.equals(new MethodParameter(method, -1).getParameterType().getName());
    Class<?> publisher = ClassUtils.resolveClassName(flow ? FLUX : MONO, loader);
    for (BulkheadMethodAdapter adapter : adapters.get()) {
      if (adapter.supports(publisher)) {
        return new Handler(name, false, adapter, fallback);
      }
    }
    throw refused(
        method,
        name,
        "is a suspend fun, which Spring AOP runs as a "
            + publisher.getSimpleName()
            + ", and no BulkheadMethodAdapter runs that type");
  }

  private static CompletableFuture<@Nullable Object> submitWithFallback(
      io.bulkhead.Bulkhead compartment, MethodInvocation invocation, FallbackMethod fallback) {
    AtomicBoolean admitted = new AtomicBoolean();
    CompletableFuture<@Nullable Object> submitted =
        compartment.submit(
            () -> {
              admitted.set(true);
              return proceedToStage(invocation);
            });
    CompletableFuture<@Nullable Object> result = new CompletableFuture<>();
    submitted.whenComplete(
        (value, failure) -> {
          Throwable cause = failure instanceof CompletionException ? failure.getCause() : failure;
          if (failure == null) {
            result.complete(value);
          } else if (cause instanceof BulkheadFullException rejection && !admitted.get()) {
            try {
              @SuppressWarnings("unchecked")
              CompletionStage<@Nullable Object> instead =
                  (CompletionStage<@Nullable Object>)
                      fallback.invoke(invocation.getThis(), invocation.getArguments(), rejection);
              if (instead == null) {
                throw new NullPointerException(fallback + " returned null");
              }
              instead.whenComplete(
                  (v, f) -> {
                    if (f == null) {
                      result.complete(v);
                    } else {
                      result.completeExceptionally(f);
                    }
                  });
            } catch (Throwable thrown) {
              result.completeExceptionally(thrown);
            }
          } else {
            result.completeExceptionally(failure);
          }
        });
    // Cancelled or completed by the caller: withdraw the call (or cancel its stage), as submit's
    // own
    // future would have.
    result.whenComplete(
        (value, failure) -> {
          if (!submitted.isDone()) {
            submitted.cancel(true);
          }
        });
    return result;
  }

  private static boolean isA(Class<?> type, String name, @Nullable ClassLoader loader) {
    if (!ClassUtils.isPresent(name, loader)) {
      return false;
    }
    return ClassUtils.resolveClassName(name, loader).isAssignableFrom(type);
  }

  private static BulkheadConfigurationException refused(Method method, String name, String why) {
    return new BulkheadConfigurationException(
        "@Bulkhead(\""
            + name
            + "\") on "
            + BulkheadConfigurationException.describe(method)
            + " cannot be applied: it "
            + why,
        "Change the method's return type or add the module that handles it.");
  }

  private static @Nullable Object proceed(MethodInvocation invocation) throws Exception {
    try {
      return invocation.proceed();
    } catch (Exception | Error e) {
      throw e;
    } catch (Throwable t) {
      throw new UndeclaredThrowableException(t);
    }
  }

  private static CompletionStage<@Nullable Object> proceedToStage(MethodInvocation invocation) {
    try {
      @SuppressWarnings("unchecked")
      CompletionStage<@Nullable Object> stage =
          (CompletionStage<@Nullable Object>) invocation.proceed();
      return stage;
    } catch (RuntimeException | Error e) {
      throw e; // the core frees the slot and fails the returned future with it
    } catch (Throwable t) {
      return CompletableFuture.failedFuture(t);
    }
  }
}
