package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bulkhead.edge.Route;
import io.bulkhead.servlet.BulkheadFilter;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.ExtendWith;
import org.springframework.boot.WebApplicationType;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.builder.SpringApplicationBuilder;
import org.springframework.boot.diagnostics.FailureAnalysis;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.test.system.CapturedOutput;
import org.springframework.boot.test.system.OutputCaptureExtension;
import org.springframework.boot.web.servlet.FilterRegistrationBean;
import org.springframework.context.ConfigurableApplicationContext;

/**
 * Which web-edge filter the starter registers for {@code paths}, and how it keeps the Actuator out
 * of them.
 */
@ExtendWith(OutputCaptureExtension.class)
class EdgeConfigurationTest {

  private static final AutoConfigurations STARTER =
      AutoConfigurations.of(
          BulkheadAutoConfiguration.class,
          BulkheadWebMvcAutoConfiguration.class,
          BulkheadWebFluxAutoConfiguration.class);

  @Test
  void withoutPathsTheServletFilterIsRegisteredButDisabled() {
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withPropertyValues("bulkhead.compartments.llm.limit=2")
        .run(
            context -> {
              FilterRegistrationBean<?> registration =
                  context.getBean(
                      BulkheadWebMvcAutoConfiguration.FILTER_NAME, FilterRegistrationBean.class);
              assertThat(registration.isEnabled()).isFalse();
            });
  }

  @Test
  void aRegistryOfTheApplicationsOwnMustHoldTheRoutedCompartment() {
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withBean(io.bulkhead.BulkheadRegistry.class, io.bulkhead.BulkheadRegistry::create)
        .withPropertyValues(
            "bulkhead.compartments.llm.limit=2", "bulkhead.compartments.llm.paths=/chat/**")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith(
                        "bulkhead.compartments.llm.paths=/chat/**: the BulkheadRegistry bean has no"
                            + " compartment 'llm'"));
  }

  private static ConfigurableApplicationContext startMvc(String... properties) {
    return new SpringApplicationBuilder(ServletEdgeTest.ChatApplication.class)
        .web(WebApplicationType.SERVLET)
        .properties("server.port=0", "bulkhead.compartments.ops.limit=1")
        .properties(properties)
        .run();
  }

  @Test
  void aPatternNamingTheActuator_failsStartUp_withOneLine(CapturedOutput output) {
    Throwable failure =
        catchThrowable(() -> startMvc("bulkhead.compartments.ops.paths=/login,/actuator/**"));

    FailureAnalysis analysis = new BulkheadFailureAnalyzer().analyze(failure);
    assertThat(analysis).as("analysed by BulkheadFailureAnalyzer").isNotNull();
    assertThat(analysis.getDescription())
        .isEqualTo(
            "bulkhead.compartments.ops.paths[1]=/actuator/**: the pattern covers the management"
                + " endpoints under /actuator, which must answer while compartments are full; set"
                + " bulkhead.edge.include-management=true to route them all the same");
    assertThat(output.getAll()).contains("APPLICATION FAILED TO START");
  }

  @Test
  void includeManagement_routesTheActuator_withAWarningAtStartUp(CapturedOutput output) {
    try (ConfigurableApplicationContext context =
        startMvc(
            "bulkhead.compartments.ops.paths=/actuator/**",
            "bulkhead.edge.include-management=true")) {
      BulkheadFilter filter =
          (BulkheadFilter)
              context
                  .getBean(
                      BulkheadWebMvcAutoConfiguration.FILTER_NAME, FilterRegistrationBean.class)
                  .getFilter();
      assertThat(filter.routes().route("/actuator/health")).isInstanceOf(Route.Through.class);
    }
    assertThat(output.getAll())
        .contains(
            "bulkhead.edge.include-management=true: requests to the management endpoints under"
                + " /actuator enter the compartments of the paths that cover them");
  }

  @Test
  void aSeparateManagementPort_leavesThisServersPathsAlone(CapturedOutput output) {
    try (ConfigurableApplicationContext context =
        startMvc("bulkhead.compartments.ops.paths=/actuator/**", "management.server.port=0")) {
      BulkheadFilter filter =
          (BulkheadFilter)
              context
                  .getBean(
                      BulkheadWebMvcAutoConfiguration.FILTER_NAME, FilterRegistrationBean.class)
                  .getFilter();
      assertThat(filter.routes().route("/actuator/health")).isInstanceOf(Route.Through.class);
    }
    assertThat(output.getAll()).doesNotContain("include-management");
  }
}
