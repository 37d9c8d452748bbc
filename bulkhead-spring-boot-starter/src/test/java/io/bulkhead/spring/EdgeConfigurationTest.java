package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.boot.web.servlet.FilterRegistrationBean;

/** Which web-edge filter the starter registers for {@code paths}. */
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
}
