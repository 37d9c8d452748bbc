package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.BulkheadStats;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
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
 * {@code @Bulkhead} on methods returning {@code Mono} and {@code Flux}, through the adapter that
 * {@link BulkheadReactorAutoConfiguration} registers: the slot is taken by a subscription and held
 * until the publisher terminates or is cancelled.
 */
class ReactiveMethodTest {

  private static final Duration PATIENCE = Duration.ofSeconds(30);

  /**
   * Each call returns a publisher the test holds; counts the subscriptions that got through. The
   * test reaches the state through methods, as it holds the proxy (whose own fields are not the
   * bean's).
   */
  static class AnswerService {
    private final Sinks.One<String> answer = Sinks.one();
    private final Sinks.Many<String> tokens = Sinks.many().multicast().directBestEffort();
    private final AtomicInteger subscribed = new AtomicInteger();

    public int subscriptions() {
      return subscribed.get();
    }

    public void complete(String value) {
      answer.tryEmitValue(value).orThrow();
    }

    public void emitToken(String token) {
      tokens.tryEmitNext(token).orThrow();
    }

    @Bulkhead("llm")
    public Mono<String> answer() {
      return answer.asMono().doOnSubscribe(subscription -> subscribed.incrementAndGet());
    }

    @Bulkhead("llm")
    public Flux<String> tokens() {
      return tokens.asFlux().doOnSubscribe(subscription -> subscribed.incrementAndGet());
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration({
    BulkheadAutoConfiguration.class,
    BulkheadReactorAutoConfiguration.class
  })
  static class Application {
    @Bean
    AnswerService answerService() {
      return new AnswerService();
    }
  }

  private static ConfigurableApplicationContext start() {
    return new SpringApplicationBuilder(Application.class)
        .web(WebApplicationType.NONE)
        .properties("bulkhead.compartments.llm.limit=1", "bulkhead.compartments.llm.max-queue=0")
        .run();
  }

  @Test
  void aHeldMonoFillsTheCompartmentAndTheNextSubscriptionSignalsFull() throws Exception {
    try (ConfigurableApplicationContext context = start()) {
      AnswerService service = context.getBean(AnswerService.class);
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);

      Mono<String> held = service.answer();
      assertThat(stats(registry).inFlight()).as("assembling takes no slot").isZero();
      CompletableFuture<String> first = held.toFuture(); // subscribes: admitted, waits on the sink
      assertThat(stats(registry).inFlight()).isEqualTo(1);
      assertThat(service.subscriptions()).isEqualTo(1);

      CompletableFuture<String> second = service.answer().toFuture();
      assertThatThrownBy(() -> second.get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isInstanceOf(ExecutionException.class)
          .cause()
          .isInstanceOfSatisfying(
              BulkheadFullException.class,
              full -> assertThat(full.reason()).isEqualTo(BulkheadFullException.Reason.QUEUE_FULL));
      assertThat(service.subscriptions()).as("the refused one never subscribed").isEqualTo(1);
      assertThat(first).isNotDone();

      service.complete("42");
      assertThat(first.get(PATIENCE.toSeconds(), TimeUnit.SECONDS)).isEqualTo("42");
      BulkheadStats after = stats(registry);
      assertThat(after.inFlight()).isZero();
      assertThat(after.admitted()).isEqualTo(1);
      assertThat(after.completed()).isEqualTo(1);
      assertThat(after.rejected(BulkheadFullException.Reason.QUEUE_FULL)).isEqualTo(1);

      // The slot is free again: the next subscription gets the (now completed) answer.
      assertThat(service.answer().toFuture().get(PATIENCE.toSeconds(), TimeUnit.SECONDS))
          .isEqualTo("42");
      assertThat(stats(registry).inFlight()).isZero();
    }
  }

  @Test
  void aFluxHoldsItsSlotUntilItsSubscriberCancels() {
    try (ConfigurableApplicationContext context = start()) {
      AnswerService service = context.getBean(AnswerService.class);
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);
      List<String> received = new CopyOnWriteArrayList<>();

      var subscription = service.tokens().subscribe(received::add);
      service.emitToken("a");
      assertThat(received).containsExactly("a");
      assertThat(stats(registry).inFlight()).isEqualTo(1);

      subscription.dispose();
      assertThat(stats(registry).inFlight()).isZero();
      assertThat(stats(registry).admitted()).isEqualTo(1);
    }
  }

  private static BulkheadStats stats(BulkheadRegistry registry) {
    return registry.find("llm").orElseThrow().stats();
  }
}
