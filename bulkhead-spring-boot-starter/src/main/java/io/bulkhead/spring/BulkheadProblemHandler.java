package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.HttpRejection;
import io.bulkhead.edge.RejectionBody;
import java.lang.reflect.Method;
import java.net.URI;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import org.jspecify.annotations.Nullable;
import org.springframework.beans.factory.BeanFactory;
import org.springframework.beans.factory.BeanFactoryAware;
import org.springframework.beans.factory.ListableBeanFactory;
import org.springframework.core.MethodIntrospector;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.AnnotatedElementUtils;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.util.ClassUtils;
import org.springframework.web.ErrorResponse;
import org.springframework.web.bind.annotation.ControllerAdvice;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a {@link BulkheadFullException} thrown while a Spring MVC or WebFlux controller handles a
 * request (directly, from a {@link Bulkhead @Bulkhead} method, from a RestClient call, or by
 * failing a returned {@code CompletionStage}) with {@code 503 Service Unavailable}, a {@code
 * Retry-After} header and an RFC 9457 {@code application/problem+json} body, as Spring's {@link
 * ErrorResponse}:
 *
 * <pre>
 * HTTP/1.1 503
 * Retry-After: 2
 * Content-Type: application/problem+json
 *
 * {"type":"https://bulkhead.github.io/bulkhead/http-edges/#compartment-full","title":"Compartment full",
 *  "status":503,"detail":"bulkhead 'llm' is full (QUEUE_FULL): ...","compartment":"llm",
 *  "reason":"queue_full"}
 * </pre>
 *
 * <p>{@code Retry-After} is the exception's {@link BulkheadFullException#retryAfter() hint} in
 * whole seconds, rounded up and at least 1.
 *
 * <p>Which handler answers: Spring asks the advice beans in their order and takes the first that
 * has a handler for the exception, however general, so an ordinary catch-all ({@code
 * ExceptionHandler(Exception.class)}) ordered before this advice would turn the refusal into a
 * {@code 500}. This advice therefore goes first, unless another {@code @ControllerAdvice} declares
 * a handler for {@code BulkheadFullException} itself (or a subclass): then it goes last and the
 * application's handler answers. A controller's own {@code @ExceptionHandler} methods come before
 * every advice, as always in Spring. Declaring a bean of this type replaces this one.
 */
@RestControllerAdvice
public class BulkheadProblemHandler implements Ordered, BeanFactoryAware {

  /** The problem type: the documentation section that explains the answer. */
  public static final URI TYPE = RejectionBody.PROBLEM_TYPE;

  private @Nullable ListableBeanFactory beans;
  private volatile @Nullable Integer order;

  /** Creates the handler; the auto-configuration does. */
  public BulkheadProblemHandler() {}

  /** The {@code 503} answer for {@code rejection}. */
  @ExceptionHandler(BulkheadFullException.class)
  public ErrorResponse handle(BulkheadFullException rejection) {
    return ErrorResponse.builder(
            rejection, HttpStatus.SERVICE_UNAVAILABLE, String.valueOf(rejection.getMessage()))
        .type(TYPE)
        .title(RejectionBody.PROBLEM_TITLE)
        .property("compartment", rejection.bulkheadName())
        .property("reason", rejection.reason().name().toLowerCase(Locale.ROOT))
        .header(
            HttpHeaders.RETRY_AFTER,
            Long.toString(HttpRejection.retryAfterSeconds(rejection.retryAfter())))
        .build();
  }

  @Override
  public void setBeanFactory(BeanFactory beanFactory) {
    beans = beanFactory instanceof ListableBeanFactory listable ? listable : null;
  }

  /**
   * First, or last when the application has an advice of its own for {@code BulkheadFullException};
   * decided when Spring first orders the advice beans.
   */
  @Override
  public int getOrder() {
    Integer decided = order;
    if (decided == null) {
      decided =
          applicationHandlers().isEmpty() ? Ordered.HIGHEST_PRECEDENCE : Ordered.LOWEST_PRECEDENCE;
      order = decided;
    }
    return decided;
  }

  /** The application's advice methods that handle {@code BulkheadFullException} by name. */
  List<Method> applicationHandlers() {
    List<Method> found = new ArrayList<>();
    ListableBeanFactory factory = beans;
    if (factory == null) {
      return found;
    }
    for (String name : factory.getBeanNamesForAnnotation(ControllerAdvice.class)) {
      Class<?> type = factory.getType(name, false);
      if (type == null || BulkheadProblemHandler.class.isAssignableFrom(type)) {
        continue;
      }
      Map<Method, ExceptionHandler> handlers =
          MethodIntrospector.selectMethods(
              ClassUtils.getUserClass(type),
              (MethodIntrospector.MetadataLookup<ExceptionHandler>)
                  method ->
                      AnnotatedElementUtils.findMergedAnnotation(method, ExceptionHandler.class));
      handlers.forEach(
          (method, annotation) -> {
            if (handledTypes(method, annotation).stream()
                .anyMatch(BulkheadFullException.class::isAssignableFrom)) {
              found.add(method);
            }
          });
    }
    return found;
  }

  /** The exception types a handler method takes: its annotation's, or else its parameters'. */
  private static List<Class<?>> handledTypes(Method method, ExceptionHandler annotation) {
    if (annotation.exception().length > 0) {
      return List.of(annotation.exception());
    }
    return Arrays.stream(method.getParameterTypes())
        .filter(Throwable.class::isAssignableFrom)
        .<Class<?>>map(type -> type)
        .toList();
  }
}
