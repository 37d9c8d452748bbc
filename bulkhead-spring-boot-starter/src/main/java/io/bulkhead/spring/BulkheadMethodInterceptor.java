package io.bulkhead.spring;

import io.bulkhead.BulkheadRegistry;
import java.lang.reflect.Method;
import java.lang.reflect.UndeclaredThrowableException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Future;
import java.util.function.Supplier;
import org.aopalliance.intercept.MethodInterceptor;
import org.aopalliance.intercept.MethodInvocation;
import org.jspecify.annotations.Nullable;
import org.springframework.aop.support.AopUtils;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.util.ClassUtils;

/*
 * Concurrency: `handlers` is a cache of immutable Handlers by method. Two threads calling a method for
 * the first time may both resolve it (resolution has no side effect) and the first put wins; no lock
 * is held while an adapter's supports() runs. The registry and the adapters are looked up once, on
 * first use, through suppliers that return the same beans every time.
 */

/**
 * Runs {@link Bulkhead @Bulkhead} methods in their compartment: plain values through {@link
 * io.bulkhead.Bulkhead#call}, {@link CompletionStage}s through {@link io.bulkhead.Bulkhead#submit},
 * other types through a {@link BulkheadMethodAdapter}. {@link #resolve} checks a method at start-up
 * and refuses what it cannot run correctly.
 */
final class BulkheadMethodInterceptor implements MethodInterceptor {

  private static final String PUBLISHER = "org.reactivestreams.Publisher";

  private final Supplier<BulkheadRegistry> registry;
  private final Supplier<List<BulkheadMethodAdapter>> adapters;
  private final Map<Method, Handler> handlers = new ConcurrentHashMap<>();

  /** How one method runs: in which compartment, and through which adapter (null: built in). */
  private record Handler(
      String compartment, boolean stage, @Nullable BulkheadMethodAdapter adapter) {}

  BulkheadMethodInterceptor(
      Supplier<BulkheadRegistry> registry, Supplier<List<BulkheadMethodAdapter>> adapters) {
    this.registry = registry;
    this.adapters = adapters;
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
                            + describe(method)
                            + " was removed from the registry"));
    if (handler.adapter() != null) {
      return handler.adapter().invoke(compartment, invocation);
    }
    if (handler.stage()) {
      return compartment.submit(() -> proceedToStage(invocation));
    }
    return compartment.call(() -> proceed(invocation));
  }

  /**
   * Checks that {@code method} names a compartment that admits calls and returns a type this
   * interceptor runs correctly; remembers how to run it.
   *
   * @return whether {@code method} carries {@link Bulkhead @Bulkhead}
   * @throws BulkheadConfigurationException naming the method and the name or type it cannot handle
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
      throw new IllegalStateException(describe(method) + " has no @Bulkhead");
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
              + describe(method)
              + " names compartment '"
              + name
              + "', "
              + why,
          "Correct the name in the annotation or configure the compartment.");
    }
    Class<?> returnType = method.getReturnType();
    for (BulkheadMethodAdapter adapter : adapters.get()) {
      if (adapter.supports(returnType)) {
        return new Handler(name, false, adapter);
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
      return new Handler(name, true, null);
    }
    if (isPublisher(returnType, method.getDeclaringClass().getClassLoader())) {
      throw refused(
          method,
          name,
          "returns "
              + returnType.getName()
              + ", a Publisher that no"
              + " BulkheadMethodAdapter runs: Mono and Flux run once bulkhead-reactor is on the class"
              + " path (its adapter is auto-configured); other Publishers need an adapter bean of their"
              + " own");
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
    return new Handler(name, false, null);
  }

  private static boolean isPublisher(Class<?> type, @Nullable ClassLoader loader) {
    if (!ClassUtils.isPresent(PUBLISHER, loader)) {
      return false;
    }
    return ClassUtils.resolveClassName(PUBLISHER, loader).isAssignableFrom(type);
  }

  private static BulkheadConfigurationException refused(Method method, String name, String why) {
    return new BulkheadConfigurationException(
        "@Bulkhead(\"" + name + "\") on " + describe(method) + " cannot be applied: it " + why,
        "Change the method's return type or add the module that handles it.");
  }

  private static String describe(Method method) {
    return method.getDeclaringClass().getName()
        + "."
        + method.getName()
        + "("
        + String.join(
            ", ", Arrays.stream(method.getParameterTypes()).map(Class::getSimpleName).toList())
        + ")";
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
