package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.BulkheadRegistry;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import org.junit.jupiter.api.Test;
import org.springframework.beans.factory.annotation.Autowired;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.autoconfigure.EnableAutoConfiguration;
import org.springframework.boot.availability.ApplicationAvailability;
import org.springframework.boot.availability.ReadinessState;
import org.springframework.boot.test.context.SpringBootTest;
import org.springframework.boot.test.context.runner.WebApplicationContextRunner;
import org.springframework.context.annotation.Configuration;
import org.springframework.context.annotation.Import;
import org.springframework.web.bind.annotation.GetMapping;
import org.springframework.web.bind.annotation.RestController;

/**
 * The readiness warm-up in a real application on an embedded Tomcat: its requests reach the
 * controllers through the server and the compartment of their path while readiness still refuses
 * traffic, and readiness accepts traffic once they are done.
 */
@SpringBootTest(
    classes = WarmUpTest.WarmApplication.class,
    webEnvironment = SpringBootTest.WebEnvironment.RANDOM_PORT,
    properties = {
      "bulkhead.compartments.login.limit=4",
      "bulkhead.compartments.login.paths=/login",
      "bulkhead.warm-up.enabled=true",
      "bulkhead.warm-up.paths=/login,/profile",
      "bulkhead.warm-up.requests=7"
    })
class WarmUpTest {

  /** An application with two routes that note the readiness state each request found. */
  @Configuration(proxyBeanMethods = false)
  @EnableAutoConfiguration
  @Import(Routes.class)
  static class WarmApplication {}

  @RestController
  static class Routes {
    final List<ReadinessState> logins = new CopyOnWriteArrayList<>();
    final List<ReadinessState> profiles = new CopyOnWriteArrayList<>();
    private final ApplicationAvailability availability;

    Routes(ApplicationAvailability availability) {
      this.availability = availability;
    }

    @GetMapping("/login")
    String login() {
      logins.add(availability.getReadinessState());
      return "ok";
    }

    @GetMapping("/profile")
    String profile() {
      profiles.add(availability.getReadinessState());
      return "ok";
    }
  }

  @Autowired private Routes routes;
  @Autowired private BulkheadRegistry registry;
  @Autowired private ApplicationAvailability availability;

  @Test
  void everyWarmUpRequest_wentThroughTheServerAndTheCompartment_beforeReadiness() {
    // The context is started and ready here; no request but the warm-up's has been sent.
    assertThat(routes.logins).hasSize(7).containsOnly(ReadinessState.REFUSING_TRAFFIC);
    assertThat(routes.profiles).hasSize(7).containsOnly(ReadinessState.REFUSING_TRAFFIC);
    assertThat(registry.find("login").orElseThrow().stats().admitted()).isEqualTo(7);
    assertThat(availability.getReadinessState()).isEqualTo(ReadinessState.ACCEPTING_TRAFFIC);
  }

  private static final AutoConfigurations STARTER =
      AutoConfigurations.of(BulkheadAutoConfiguration.class, BulkheadWarmUpAutoConfiguration.class);

  @Test
  void offByDefault() {
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withPropertyValues("bulkhead.warm-up.paths=/login")
        .run(context -> assertThat(context).doesNotHaveBean("bulkheadWarmUp"));
  }

  @Test
  void enabledWithoutPaths_failsStartUp_namingTheKey() {
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withPropertyValues("bulkhead.warm-up.enabled=true")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith("bulkhead.warm-up.paths is not set"));
  }

  @Test
  void aBadSetting_failsStartUp_namingTheKeyAndValue() {
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withPropertyValues(
            "bulkhead.warm-up.enabled=true",
            "bulkhead.warm-up.paths=/login,profile",
            "bulkhead.warm-up.requests=3")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith("bulkhead.warm-up.paths[1]=profile: "));
    new WebApplicationContextRunner()
        .withConfiguration(STARTER)
        .withPropertyValues(
            "bulkhead.warm-up.enabled=true",
            "bulkhead.warm-up.paths=/login",
            "bulkhead.warm-up.requests=0")
        .run(
            context ->
                assertThat(context)
                    .getFailure()
                    .rootCause()
                    .hasMessageStartingWith("bulkhead.warm-up.requests=0: "));
  }
}
