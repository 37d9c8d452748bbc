package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadConfig;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import java.time.Duration;
import java.util.Optional;
import java.util.OptionalInt;
import org.junit.jupiter.api.Test;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Configuration;

/**
 * {@code bulkhead.defaults}: every compartment takes each key it does not give from there, and a
 * key it gives wins; a wrong default is named under its own key, even when no compartment uses it.
 */
class DefaultsTest {

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(BulkheadAutoConfiguration.class)
  static class Compartments {}

  private static ConfigurableApplicationContext start(String... properties) {
    return new SpringApplicationBuilder(Compartments.class)
        .web(WebApplicationType.NONE)
        .properties(properties)
        .run();
  }

  private static String startFailure(String... properties) {
    Throwable failure =
        catchThrowable(
            () -> {
              try (ConfigurableApplicationContext ignored = start(properties)) {
                // started: the assertion below says so
              }
            });
    assertThat(failure).as("start-up must fail").isNotNull();
    Throwable cause = failure;
    while (!(cause instanceof BulkheadConfigurationException) && cause.getCause() != null) {
      cause = cause.getCause();
    }
    assertThat(cause).isInstanceOf(BulkheadConfigurationException.class);
    return cause.getMessage();
  }

  @Test
  void everyCompartmentInheritsKeyByKeyAndItsOwnKeysWin() {
    try (ConfigurableApplicationContext context =
        start(
            "bulkhead.budgets.llm-api.capacity=30",
            "bulkhead.defaults.limit=4",
            "bulkhead.defaults.max-queue=8",
            "bulkhead.defaults.max-wait=750ms",
            "bulkhead.defaults.budget=llm-api",
            // takes everything
            "bulkhead.compartments.chat.paths=/chat/**",
            // its own limit and max-wait, the rest inherited
            "bulkhead.compartments.search.limit=10",
            "bulkhead.compartments.search.max-wait=2s",
            // its own max-queue of 0 (rejects at once) wins over the default's 8
            "bulkhead.compartments.login.max-queue=0")) {
      BulkheadRegistry registry = context.getBean(BulkheadRegistry.class);

      Compartment chat = registry.find("chat").orElseThrow();
      assertThat(chat.config().limit()).isEqualTo(4);
      assertThat(chat.config().maxQueue()).isEqualTo(OptionalInt.of(8));
      assertThat(chat.config().maxWait()).isEqualTo(Optional.of(Duration.ofMillis(750)));
      assertThat(chat.budget().map(Budget::name)).hasValue("llm-api");

      BulkheadConfig search = registry.find("search").orElseThrow().config();
      assertThat(search.limit()).isEqualTo(10);
      assertThat(search.maxQueue()).isEqualTo(OptionalInt.of(8));
      assertThat(search.maxWait()).isEqualTo(Optional.of(Duration.ofSeconds(2)));
      assertThat(registry.find("search").orElseThrow().budget().map(Budget::name))
          .hasValue("llm-api");

      BulkheadConfig login = registry.find("login").orElseThrow().config();
      assertThat(login.limit()).isEqualTo(4);
      assertThat(login.maxQueue()).isEqualTo(OptionalInt.of(0));
    }
  }

  /** Keys that were the file's alone, given as properties (strings), as an application does. */
  @Test
  void theFilesKeysWorkAsPropertiesToo() {
    try (ConfigurableApplicationContext context =
        start(
            "bulkhead.budgets.llm-api=20",
            "bulkhead.defaults.criticality=critical",
            "bulkhead.compartments.llm.rate=40/s",
            "bulkhead.compartments.llm.latency=50ms",
            "bulkhead.compartments.llm.max-queue=unbounded",
            "bulkhead.compartments.llm.max-wait=1s",
            "bulkhead.compartments.llm.budget=llm-api")) {
      Compartment llm = context.getBean(BulkheadRegistry.class).find("llm").orElseThrow();
      assertThat(llm.config().limit()).as("40/s x 50ms = 2, x3 for critical").isEqualTo(6);
      assertThat(llm.config().maxQueue()).isEmpty();
      assertThat(llm.budget().map(Budget::capacity)).hasValue(20);
    }
  }

  @Test
  void withoutDefaultsACompartmentRejectsAtOnceAsBefore() {
    try (ConfigurableApplicationContext context = start("bulkhead.compartments.llm.limit=3")) {
      BulkheadConfig llm =
          context.getBean(BulkheadRegistry.class).find("llm").orElseThrow().config();
      assertThat(llm.limit()).isEqualTo(3);
      assertThat(llm.maxQueue()).isEqualTo(OptionalInt.of(0));
      assertThat(context.getBean(BulkheadRegistry.class).find("llm").orElseThrow().budget())
          .isEmpty();
    }
  }

  @Test
  void aWrongDefaultIsNamedUnderItsOwnKeyEvenWhenEveryCompartmentOverridesIt() {
    assertThat(startFailure("bulkhead.defaults.limit=0", "bulkhead.compartments.llm.limit=2"))
        .isEqualTo("bulkhead.defaults.limit: must be at least 1 but was 0");
    assertThat(
            startFailure("bulkhead.defaults.budget=nowhere", "bulkhead.compartments.llm.limit=2"))
        .startsWith("bulkhead.defaults.budget: no budget named 'nowhere'");
  }

  @Test
  void aDefaultQueueWithoutAWaitIsNamedUnderItsOwnKey() {
    assertThat(startFailure("bulkhead.defaults.max-queue=5", "bulkhead.compartments.llm.limit=2"))
        .startsWith(
            "bulkhead.defaults.max-queue: lets 5 callers wait but there is no max-wait: add"
                + " max-wait");
  }

  @Test
  void aCompartmentWithoutALimitWhereNoDefaultGivesOneIsNamed() {
    assertThat(startFailure("bulkhead.compartments.llm.max-queue=0"))
        .startsWith("bulkhead.compartments.llm: needs a limit, or a rate and a latency");
  }
}
