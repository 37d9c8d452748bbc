package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Modifier;
import java.util.Arrays;
import java.util.Comparator;
import java.util.List;
import org.jspecify.annotations.Nullable;
import org.springframework.core.CoroutinesUtils;
import org.springframework.core.KotlinDetector;
import org.springframework.util.ClassUtils;
import org.springframework.util.ReflectionUtils;

/**
 * The {@code fallbackMethod} of a {@link Bulkhead @Bulkhead} method: found and checked when the
 * bean is proxied, and called when the compartment refuses a call, with that call's arguments and
 * the {@link BulkheadFullException}.
 *
 * <p>It is a method of the class that declares the annotated method, or of a superclass (any
 * visibility, static or not), taking the annotated method's parameters and then one that accepts a
 * {@code BulkheadFullException} (the exception itself or a supertype, the most specific winning),
 * and returning what the annotated method returns. A Kotlin {@code suspend fun} takes a {@code
 * suspend fun} fallback.
 */
final class FallbackMethod {

  private final Method method;
  private final boolean suspending;

  private FallbackMethod(Method method, boolean suspending) {
    this.method = method;
    this.suspending = suspending;
  }

  /**
   * Finds the fallback named {@code fallbackName} of {@code annotated}.
   *
   * @throws BulkheadConfigurationException naming the method and the signature it looked for
   */
  static FallbackMethod resolve(Method annotated, String compartment, String fallbackName) {
    boolean suspending = KotlinDetector.isSuspendingFunction(annotated);
    Class<?>[] parameters = annotated.getParameterTypes();
    // A suspend fun's last parameter is its Continuation; the fallback's exception goes before it.
    int given = suspending ? parameters.length - 1 : parameters.length;
    List<Method> named =
        Arrays.stream(ReflectionUtils.getUniqueDeclaredMethods(annotated.getDeclaringClass()))
            .filter(candidate -> candidate.getName().equals(fallbackName))
            .toList();
    Method fallback =
        named.stream()
            .filter(candidate -> takes(candidate, parameters, given, suspending))
            .filter(candidate -> returns(candidate, annotated))
            .min(Comparator.comparing(candidate -> depth(exceptionType(candidate, given))))
            .orElseThrow(() -> mismatch(annotated, compartment, fallbackName, given, named));
    ReflectionUtils.makeAccessible(fallback);
    return new FallbackMethod(fallback, suspending);
  }

  /**
   * Calls the fallback for a refused call.
   *
   * @param target the bean (ignored for a static fallback)
   * @param arguments the refused call's arguments (a suspend fun's Continuation last)
   * @return what the fallback returns; for a suspend fun, a {@code Publisher} of it
   * @throws Throwable whatever the fallback throws
   */
  @Nullable Object invoke(
      @Nullable Object target, @Nullable Object[] arguments, BulkheadFullException rejection)
      throws Throwable {
    Object receiver = Modifier.isStatic(method.getModifiers()) ? null : target;
    int given = suspending ? arguments.length - 1 : arguments.length;
    Object[] withRejection = Arrays.copyOf(arguments, given + 1);
    withRejection[given] = rejection;
    if (suspending) {
      return Coroutines.invoke(method, receiver, withRejection);
    }
    try {
      return method.invoke(receiver, withRejection);
    } catch (InvocationTargetException e) {
      throw e.getTargetException();
    }
  }

  @Override
  public String toString() {
    return BulkheadConfigurationException.describe(method);
  }

  private static boolean takes(
      Method candidate, Class<?>[] parameters, int given, boolean suspending) {
    Class<?>[] theirs = candidate.getParameterTypes();
    if (theirs.length != parameters.length + 1
        || KotlinDetector.isSuspendingFunction(candidate) != suspending) {
      return false;
    }
    for (int i = 0; i < given; i++) {
      if (theirs[i] != parameters[i]) {
        return false;
      }
    }
    return theirs[given].isAssignableFrom(BulkheadFullException.class);
  }

  private static boolean returns(Method candidate, Method annotated) {
    Class<?> expected = annotated.getReturnType();
    Class<?> actual = candidate.getReturnType();
    return expected.isPrimitive() ? expected == actual : ClassUtils.isAssignable(expected, actual);
  }

  private static Class<?> exceptionType(Method candidate, int given) {
    return candidate.getParameterTypes()[given];
  }

  /** How far {@code type} is above {@code BulkheadFullException}: 0 for itself. */
  private static int depth(Class<?> type) {
    int depth = 0;
    for (Class<?> c = BulkheadFullException.class; c != null && c != type; c = c.getSuperclass()) {
      depth++;
    }
    return depth;
  }

  private static BulkheadConfigurationException mismatch(
      Method annotated, String compartment, String fallbackName, int given, List<Method> named) {
    Class<?>[] parameters = annotated.getParameterTypes();
    StringBuilder wanted = new StringBuilder(fallbackName).append('(');
    for (int i = 0; i < given; i++) {
      wanted.append(parameters[i].getSimpleName()).append(", ");
    }
    wanted.append(BulkheadFullException.class.getSimpleName()).append(')');
    String returning =
        KotlinDetector.isSuspendingFunction(annotated)
            ? " (a suspend fun)"
            : " returning " + annotated.getReturnType().getSimpleName();
    String found =
        named.isEmpty()
            ? "there is no method of that name"
            : "found "
                + String.join(
                    ", ",
                    named.stream()
                        .map(
                            m ->
                                BulkheadConfigurationException.signature(m)
                                    + " returning "
                                    + returnOf(m))
                        .toList());
    return new BulkheadConfigurationException(
        "@Bulkhead(value = \""
            + compartment
            + "\", fallbackMethod = \""
            + fallbackName
            + "\") on "
            + BulkheadConfigurationException.describe(annotated)
            + ": "
            + annotated.getDeclaringClass().getName()
            + " has no method "
            + wanted
            + returning
            + "; "
            + found,
        "Declare "
            + wanted
            + " (the method's parameters, then BulkheadFullException or a supertype), returning"
            + " what the method returns, or correct fallbackMethod.");
  }

  private static String returnOf(Method method) {
    return method.getReturnType().getSimpleName();
  }

  /** Kept apart so that Kotlin classes load only for a suspend fun. */
  private static final class Coroutines {
    static Object invoke(Method method, @Nullable Object target, Object[] arguments) {
      return CoroutinesUtils.invokeSuspendingFunction(method, target, arguments);
    }
  }
}
