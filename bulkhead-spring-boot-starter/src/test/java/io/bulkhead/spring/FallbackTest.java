package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Flux;
import reactor.core.publisher.Mono;
import reactor.core.publisher.Sinks;

/**
 * {@code @Bulkhead(fallbackMethod = ...)}: a call the compartment refuses returns the fallback's
 * answer, given the call's arguments and the rejection, for plain values, stages, {@code Mono} and
 * {@code Flux}; a refusal raised inside the method (an inner compartment's) is not the
 * compartment's and passes through.
 */
class FallbackTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  /** Holds its calls until the test releases them; reached through methods, as it is proxied. */
  static class Chat {
    private volatile CountDownLatch entered = new CountDownLatch(0);
    private volatile CountDownLatch release = new CountDownLatch(0);
    private final CompletableFuture<String> pending = new CompletableFuture<>();
    private final Sinks.One<String> answer = Sinks.one();

    public void hold() {
      entered = new CountDownLatch(1);
      release = new CountDownLatch(1);
    }

    public boolean awaitEntered() throws InterruptedException {
      return entered.await(PATIENCE.toMillis(), TimeUnit.MILLISECONDS);
    }

    public void releaseAll() {
      release.countDown();
      pending.complete("async");
      answer.tryEmitValue("mono");
    }

    @Bulkhead(value = "llm", fallbackMethod = "cached")
    public String complete(String prompt) throws InterruptedException {
      entered.countDown();
      release.await();
      return "answer to " + prompt;
    }

    String cached(String prompt, BulkheadFullException refused) {
      return "cached answer to " + prompt + " (" + refused.reason() + ")";
    }

    /** A less specific fallback of the same name: the exact one above wins. */
    String cached(String prompt, Exception refused) {
      return "the wrong fallback";
    }

    @Bulkhead(value = "llm", fallbackMethod = "later")
    public CompletionStage<String> completeAsync(String prompt) {
      entered.countDown();
      return pending;
    }

    private CompletionStage<String> later(String prompt, RuntimeException refused) {
      return CompletableFuture.completedFuture("later: " + prompt);
    }

    @Bulkhead(value = "llm", fallbackMethod = "monoFallback")
    public Mono<String> answer(int n) {
      return answer.asMono();
    }

    Mono<String> monoFallback(int n, BulkheadFullException refused) {
      return Mono.just("fallback " + n);
    }

    @Bulkhead(value = "llm", fallbackMethod = "fluxFallback")
    public Flux<String> tokens() {
      return Flux.never();
    }

    Flux<String> fluxFallback(Throwable refused) {
      return Flux.just("t1", "t2");
    }

    @Bulkhead(value = "llm", fallbackMethod = "cached")
    public String inner(String prompt) {
      throw new BulkheadFullException(
          "inner", BulkheadFullException.Reason.QUEUE_FULL, Duration.ofSeconds(1));
    }

    @Bulkhead(value = "llm", fallbackMethod = "later")
    public CompletionStage<String> innerAsync(String prompt) {
      return CompletableFuture.failedFuture(
          new BulkheadFullException(
              "inner", BulkheadFullException.Reason.QUEUE_FULL, Duration.ofSeconds(1)));
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration({
    BulkheadAutoConfiguration.class,
    BulkheadReactorAutoConfiguration.class
  })
  static class Application {
    @Bean
    Chat chat() {
      return new Chat();
    }
  }

  @Test
  void aRefusedCallReturnsItsFallbackWhateverTheMethodReturns() throws Exception {
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Application.class)
            .web(WebApplicationType.NONE)
            .properties("bulkhead.compartments.llm.limit=1")
            .run()) {
      Chat chat = context.getBean(Chat.class);
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);

      chat.hold();
      CompletableFuture<String> held =
          CompletableFuture.supplyAsync(
              () -> {
                try {
                  return chat.complete("first");
                } catch (InterruptedException e) {
                  throw new IllegalStateException(e);
                }
              });
      assertThat(chat.awaitEntered()).isTrue();

      String fallback = chat.complete("second");
      System.out.println("a fallback answer: " + fallback);
      assertThat(fallback).isEqualTo("cached answer to second (QUEUE_FULL)");
      assertThat(chat.completeAsync("third").toCompletableFuture().get(1, TimeUnit.SECONDS))
          .isEqualTo("later: third");
      assertThat(chat.answer(4).block(PATIENCE)).isEqualTo("fallback 4");
      assertThat(chat.tokens().collectList().block(PATIENCE)).containsExactly("t1", "t2");
      assertThat(stats(registry).rejected(BulkheadFullException.Reason.QUEUE_FULL)).isEqualTo(4);

      chat.releaseAll();
      assertThat(held.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("answer to first");
      assertThat(stats(registry).inFlight()).isZero();

      // Admitted, the method itself throws a BulkheadFullException: not this compartment's refusal.
      assertThatThrownBy(() -> chat.inner("x"))
          .isInstanceOf(BulkheadFullException.class)
          .hasMessageStartingWith("bulkhead 'inner' is full");
      assertThatThrownBy(() -> chat.innerAsync("x").toCompletableFuture().get(1, TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .hasMessageStartingWith("bulkhead 'inner' is full");
      assertThat(chat.answer(5).block(PATIENCE))
          .as("admitted: the method's own answer")
          .isEqualTo("mono");
    }
  }

  @Test
  void anAdmittedStageCancelledByItsCallerFreesTheSlotAsWithoutAFallback() throws Exception {
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Application.class)
            .web(WebApplicationType.NONE)
            .properties("bulkhead.compartments.llm.limit=1")
            .run()) {
      Chat chat = context.getBean(Chat.class);
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);

      CompletableFuture<String> call = chat.completeAsync("held").toCompletableFuture();
      assertThat(stats(registry).inFlight()).isEqualTo(1);
      call.cancel(true); // forwarded to the stage the method returned, which frees the slot
      assertThat(stats(registry).inFlight()).isZero();
      assertThatThrownBy(() -> call.get(1, TimeUnit.SECONDS))
          .isInstanceOf(java.util.concurrent.CancellationException.class);
    }
  }

  private static BulkheadStats stats(BulkheadRegistry registry) {
    return registry.find("llm").orElseThrow().stats();
  }
}
