package io.bulkhead.spring;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import org.springframework.http.ResponseEntity;
import org.springframework.web.bind.annotation.ExceptionHandler;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;
import org.springframework.web.bind.annotation.RestControllerAdvice;

/**
 * A small MVC application whose service methods are held by latches to fill the "llm" compartment,
 * with a catch-all exception handler as many applications have.
 */
@Configuration(proxyBeanMethods = false)
@EnableAutoConfiguration
class TestApplication {

  /**
   * The service: each call counts down a latch and then waits for the test. The test reaches the
   * state through methods, as it holds the proxy (whose own fields are not the bean's).
   */
  static class LlmService {
    private volatile CountDownLatch entered = new CountDownLatch(0);
    private volatile CountDownLatch release = new CountDownLatch(0);
    private volatile CompletableFuture<String> pending = CompletableFuture.completedFuture("async");

    /** Prepares for {@code calls} held calls. */
    public void hold(int calls) {
      entered = new CountDownLatch(calls);
      release = new CountDownLatch(1);
      pending = new CompletableFuture<>();
    }

    /** Whether the held calls all entered their methods within {@code timeout}. */
    public boolean awaitEntered(Duration timeout) throws InterruptedException {
      return entered.await(timeout.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Lets the held calls return: the plain ones return, the pending stage completes. */
    public void releaseAll() {
      release.countDown();
      pending.complete("async");
    }

    @Bulkhead("llm")
    public String plain() throws InterruptedException {
      entered.countDown();
      release.await();
      return "plain";
    }

    @Bulkhead("llm")
    public CompletableFuture<String> async() {
      entered.countDown();
      return pending; // the slot stays taken until the test completes it
    }
  }

  /** Registered as a member class of this configuration. */
  @RestController
  static class LlmController {
    private final LlmService service;

    LlmController(LlmService service) {
      this.service = service;
    }

    @GetMapping("/plain")
    String plain() throws InterruptedException {
      return service.plain();
    }

    @GetMapping("/async")
    CompletableFuture<String> async() {
      return service.async();
    }
  }

  /**
   * The global error handler many applications have: every exception becomes a 500. The starter's
   * 503 must still answer a refused call.
   */
  @RestControllerAdvice
  static class CatchAll {
    @ExceptionHandler(Exception.class)
    ResponseEntity<Map<String, String>> any(Exception e) {
      return ResponseEntity.internalServerError()
          .body(Map.of("error", e.getClass().getSimpleName()));
    }
  }

  @Bean
  LlmService llmService() {
    return new LlmService();
  }
}
