package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bulkhead.BulkheadRegistry;
import java.util.concurrent.CompletableFuture;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.reactivestreams.Publisher;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.ImportAutoConfiguration;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.context.ConfigurableApplicationContext;
import org.springframework.context.annotation.Bean;
import org.springframework.context.annotation.Configuration;
import reactor.core.publisher.Mono;

/**
 * A wrong setting or annotation stops start-up with one line naming the key (or the bean method)
 * and the value, printed by Spring Boot's failure report through {@link BulkheadFailureAnalyzer}.
 */
@ExtendWith(OutputCaptureExtension.class)
class StartupFailureTest {

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(BulkheadAutoConfiguration.class)
  static class Compartments {}

  /** A bean naming a compartment that is not configured. */
  static class UnknownCompartmentService {
    @Bulkhead("nope")
    public String call() {
      return "never";
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(BulkheadAutoConfiguration.class)
  static class UnknownCompartment {
    @Bean
    UnknownCompartmentService unknownCompartmentService() {
      return new UnknownCompartmentService();
    }
  }

  /** A method returning a Publisher that is neither a Mono nor a Flux: no adapter runs it. */
  static class ReactiveService {
    @Bulkhead("llm")
    public Publisher<String> call() {
      return Mono.just("never");
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration({
    BulkheadAutoConfiguration.class,
    BulkheadReactorAutoConfiguration.class
  })
  static class Reactive {
    @Bean
    ReactiveService reactiveService() {
      return new ReactiveService();
    }
  }

  /** A CompletionStage type that the interceptor cannot return for it. */
  static class OtherStage extends CompletableFuture<String> {}

  /** Returns a CompletionStage subtype the core's CompletableFuture cannot stand for. */
  static class OtherStageService {
    @Bulkhead("llm")
    public OtherStage call() {
      return new OtherStage();
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(BulkheadAutoConfiguration.class)
  static class OtherStageConfig {
    @Bean
    OtherStageService otherStageService() {
      return new OtherStageService();
    }
  }

  /** A fallback that forgets the exception parameter. */
  static class WrongFallbackService {
    @Bulkhead(value = "llm", fallbackMethod = "cached")
    public String complete(String prompt) {
      return "answer";
    }

    String cached(String prompt) {
      return "cached";
    }
  }

  @Configuration(proxyBeanMethods = false)
  @ImportAutoConfiguration(BulkheadAutoConfiguration.class)
  static class WrongFallback {
    @Bean
    WrongFallbackService wrongFallbackService() {
      return new WrongFallbackService();
    }
  }

  private static Throwable startFailure(Class<?> config, String... properties) {
    Throwable failure =
        catchThrowable(
            () -> {
              try (ConfigurableApplicationContext ignored =
                  new SpringApplicationBuilder(config)
                      .web(WebApplicationType.NONE)
                      .properties(properties)
                      .run()) {
                // started: the assertion below says so
              }
            });
    assertThat(failure).as("start-up must fail").isNotNull();
    return failure;
  }

  /** The line the failure report prints as its description, and that it was printed. */
  private static String description(Throwable failure, CapturedOutput output) {
    FailureAnalysis analysis = new BulkheadFailureAnalyzer().analyze(failure);
    assertThat(analysis).as("analysed by BulkheadFailureAnalyzer").isNotNull();
    assertThat(analysis.getDescription()).doesNotContain("\n");
    assertThat(output.getOut() + output.getErr())
        .contains("APPLICATION FAILED TO START")
        .contains(analysis.getDescription());
    return analysis.getDescription();
  }

  @Test
  void aLimitBelowOneNamesTheKeyAndTheValue(CapturedOutput output) {
    Throwable failure = startFailure(Compartments.class, "bulkhead.compartments.llm.limit=0");

    assertThat(description(failure, output))
        .isEqualTo("bulkhead.compartments.llm.limit: must be at least 1 but was 0");
  }

  @Test
  void aValueOfTheWrongTypeNamesTheKeyTheValueAndTheType(CapturedOutput output) {
    Throwable failure = startFailure(Compartments.class, "bulkhead.compartments.llm.limit=ten");

    assertThat(description(failure, output))
        .startsWith("bulkhead.compartments.llm.limit=ten: cannot be read as an Integer");
  }

  @Test
  void aDurationThatIsNotOneNamesTheKey(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.max-wait=soon");

    assertThat(description(failure, output))
        .startsWith("bulkhead.compartments.llm.max-wait: expected a duration with a unit")
        .endsWith("but was 'soon'");
  }

  @Test
  void aMisspeltKeyIsRefusedRatherThanIgnored(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.limt=3");

    assertThat(description(failure, output))
        .startsWith("bulkhead.compartments.llm.limt=3")
        .contains("not a setting of bulkhead");
  }

  @Test
  void aMissingLimitIsNamed(CapturedOutput output) {
    Throwable failure = startFailure(Compartments.class, "bulkhead.compartments.llm.max-queue=0");

    assertThat(description(failure, output))
        .startsWith("bulkhead.compartments.llm: needs a limit, or a rate and a latency");
  }

  @Test
  void aQueueWithoutAMaximumWaitIsNamed(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.max-queue=5");

    assertThat(description(failure, output))
        .startsWith(
            "bulkhead.compartments.llm.max-queue: lets 5 callers wait but there is no max-wait");
  }

  @Test
  void anOverSubscribedBudgetFailsListingEveryShare(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.budgets.postgres.capacity=10",
            "bulkhead.compartments.checkout.limit=6",
            "bulkhead.compartments.checkout.budget=postgres",
            "bulkhead.compartments.reports.limit=5",
            "bulkhead.compartments.reports.budget=postgres");

    // Every share, in the order the properties came (they come in no set order).
    assertThat(description(failure, output))
        .matches(
            "bulkhead\\.budgets\\.postgres: budget 'postgres' is over-subscribed:"
                + " (checkout 6 \\+ reports 5|reports 5 \\+ checkout 6) = 11, more than its capacity"
                + " of 10");
  }

  @Test
  void aBudgetThatIsNotDefinedIsNamed(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.budget=gpu");

    assertThat(description(failure, output))
        .startsWith(
            "bulkhead.compartments.llm.budget: no budget named 'gpu' (no budgets are declared)");
  }

  @Test
  void aPathPatternMustStartWithASlash(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.paths=chat/**");

    assertThat(description(failure, output))
        .startsWith(
            "bulkhead.compartments.llm.paths: a path pattern starts with / (/login, /chat/**) but"
                + " was 'chat/**'");
  }

  @Test
  void anUpstreamMustBeAUrlOrAHost(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.upstream=ftp://llm.internal");

    assertThat(description(failure, output))
        .isEqualTo(
            "bulkhead.compartments.llm.upstream=ftp://llm.internal: scheme must be http or https but was ftp");
  }

  @Test
  void anUpstreamsUserAndPassword_areNeverPrinted(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.upstream=ftp://svc:s3cret@llm.internal/v1");

    assertThat(description(failure, output))
        .isEqualTo(
            "bulkhead.compartments.llm.upstream=ftp://***@llm.internal/v1: scheme must be http or"
                + " https but was ftp");
    assertThat(output.getOut() + output.getErr()).doesNotContain("s3cret").doesNotContain("svc:");
    for (Throwable t = failure; t != null; t = t.getCause()) {
      assertThat(String.valueOf(t.getMessage())).doesNotContain("s3cret");
    }
  }

  @Test
  void aHostWithAPathButNoScheme_isRefusedWithoutItsPassword(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.upstream=svc:s3cret@llm.internal/v1");

    assertThat(description(failure, output))
        .isEqualTo(
            "bulkhead.compartments.llm.upstream=***@llm.internal/v1: has a path but no scheme: give"
                + " a base URL with its scheme (https://***@llm.internal/v1) or the host alone");
    assertThat(output.getOut() + output.getErr()).doesNotContain("s3cret");
  }

  @Test
  void anAnnotationNamingNoCompartmentNamesTheBeanMethodAndTheName(CapturedOutput output) {
    Throwable failure = startFailure(UnknownCompartment.class, "bulkhead.compartments.llm.limit=2");

    assertThat(description(failure, output))
        .isEqualTo(
            "@Bulkhead(\"nope\") on "
                + UnknownCompartmentService.class.getName()
                + ".call() names compartment 'nope', which is"
                + " not configured; the compartments are [llm] (define it under bulkhead.compartments.nope)");
  }

  @Test
  void aPublisherOtherThanMonoOrFluxIsRefused(CapturedOutput output) {
    Throwable failure = startFailure(Reactive.class, "bulkhead.compartments.llm.limit=2");

    assertThat(description(failure, output))
        .startsWith(
            "@Bulkhead(\"llm\") on "
                + ReactiveService.class.getName()
                + ".call() cannot be applied: it returns "
                + Publisher.class.getName()
                + ", a Publisher that no BulkheadMethodAdapter runs");
  }

  @Test
  void aFallbackThatDoesNotMatchNamesTheMethodAndTheSignatureWanted(CapturedOutput output) {
    Throwable failure = startFailure(WrongFallback.class, "bulkhead.compartments.llm.limit=2");

    assertThat(description(failure, output))
        .isEqualTo(
            "@Bulkhead(value = \"llm\", fallbackMethod = \"cached\") on "
                + WrongFallbackService.class.getName()
                + ".complete(String): "
                + WrongFallbackService.class.getName()
                + " has no method cached(String, BulkheadFullException) returning String; found"
                + " cached(String) returning String");
  }

  @Test
  void aCompletionStageTheCoreCannotReturnIsRefused(CapturedOutput output) {
    Throwable failure = startFailure(OtherStageConfig.class, "bulkhead.compartments.llm.limit=2");

    assertThat(description(failure, output))
        .contains("a CompletionStage that is not a" + " CompletableFuture");
  }

  @Test
  void pathsAreBoundWithoutAWebServer() {
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Compartments.class)
            .web(WebApplicationType.NONE)
            .properties(
                "bulkhead.compartments.llm.limit=2", "bulkhead.compartments.llm.paths=/chat/**")
            .run()) {
      assertThat(context.getBean(BulkheadProperties.class).getCompartments().get("llm").getPaths())
          .containsExactly("/chat/**");
    }
  }

  @Test
  void aPathPatternIsSpringsPathPattern(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.paths=/chat/**/more");

    assertThat(description(failure, output))
        .startsWith("bulkhead.compartments.llm.paths[0]=/chat/**/more: not a Spring path pattern:");
  }

  @Test
  void aPathRoutedToTwoCompartmentsIsRefused(CapturedOutput output) {
    Throwable failure =
        startFailure(
            Compartments.class,
            "bulkhead.compartments.llm.limit=2",
            "bulkhead.compartments.llm.paths=/chat/**",
            "bulkhead.compartments.other.limit=2",
            "bulkhead.compartments.other.paths=/login,/chat/**");

    assertThat(description(failure, output))
        .startsWith(
            "bulkhead.compartments.other.paths[1]=/chat/**:"
                + " the path is already routed to compartment 'llm'");
  }

  @Test
  void startsWhenTheUpstreamIsDown() {
    // Port 1 on the loopback: nothing listens. Start-up never calls an upstream.
    try (ConfigurableApplicationContext context =
        new SpringApplicationBuilder(Compartments.class)
            .web(WebApplicationType.NONE)
            .properties(
                "bulkhead.compartments.llm.limit=2",
                "bulkhead.compartments.llm.upstream=http://127.0.0.1:1")
            .run()) {
      assertThat(context.getBean(BulkheadRegistry.class).bulkhead("llm")).isPresent();
    }
  }
}
