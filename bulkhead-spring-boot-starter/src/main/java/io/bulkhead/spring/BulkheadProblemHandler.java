package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.edge.HttpRejection;
import io.bulkhead.edge.RejectionBody;
import java.net.URI;
import java.util.Locale;
import org.springframework.core.Ordered;
import org.springframework.core.annotation.Order;
import org.springframework.http.HttpHeaders;
import org.springframework.http.HttpStatus;
import org.springframework.http.MediaType;
import org.springframework.http.ProblemDetail;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * Answers a {@link BulkheadFullException} thrown while a Spring MVC or WebFlux controller handles a
 * request (directly, from a {@link Bulkhead @Bulkhead} method, from a RestClient call, or by
 * failing a returned {@code CompletionStage}) with {@code 503 Service Unavailable}, a {@code
 * Retry-After} header and an RFC 9457 {@code application/problem+json} body:
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
 * whole seconds, rounded up and at least 1. The advice has the lowest precedence, so an
 * {@code @ExceptionHandler(BulkheadFullException.class)} of the application's own wins; declaring a
 * bean of this type replaces this one.
 */
@RestControllerAdvice
@Order(Ordered.LOWEST_PRECEDENCE)
public class BulkheadProblemHandler {

  /** The problem type: the documentation section that explains the answer. */
  public static final URI TYPE = RejectionBody.PROBLEM_TYPE;

  /** Creates the handler; the auto-configuration does. */
  public BulkheadProblemHandler() {}

  /** The {@code 503} answer for {@code rejection}. */
  @ExceptionHandler(BulkheadFullException.class)
  public ResponseEntity<ProblemDetail> handle(BulkheadFullException rejection) {
    ProblemDetail problem =
        ProblemDetail.forStatusAndDetail(HttpStatus.SERVICE_UNAVAILABLE, rejection.getMessage());
    problem.setType(TYPE);
    problem.setTitle(RejectionBody.PROBLEM_TITLE);
    problem.setProperty("compartment", rejection.bulkheadName());
    problem.setProperty("reason", rejection.reason().name().toLowerCase(Locale.ROOT));
    return ResponseEntity.status(HttpStatus.SERVICE_UNAVAILABLE)
        .header(
            HttpHeaders.RETRY_AFTER,
            Long.toString(HttpRejection.retryAfterSeconds(rejection.retryAfter())))
        .contentType(MediaType.APPLICATION_PROBLEM_JSON)
        .body(problem);
  }
}
