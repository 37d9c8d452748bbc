package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.edge.Route;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;

/** {@code paths} as Spring path patterns, and the management endpoints kept out of them. */
class EdgeRoutesTest {

  private static BulkheadFile settings(Map<String, String> settings) {
    return CompartmentFactory.settings(new Binder(new MapConfigurationPropertySource(settings)));
  }

  private static EdgeRoutes routes(
      Map<String, String> settings, List<String> management, boolean includeManagement) {
    BulkheadFile read = settings(settings);
    BulkheadRegistry registry = CompartmentFactory.build(read).registry();
    return EdgeRoutes.of(read, registry, management, includeManagement);
  }

  private static String target(EdgeRoutes routes, String path) {
    return routes.route(path) instanceof Route.Through through ? through.bulkhead().name() : "-";
  }

  @Test
  void pathsAreSpringPathPatterns_theMostSpecificWins() {
    EdgeRoutes routes =
        routes(
            Map.of(
                "bulkhead.compartments.server.limit", "4",
                "bulkhead.compartments.server.paths[0]", "/**",
                "bulkhead.compartments.slow.limit", "1",
                "bulkhead.compartments.slow.paths[0]", "/slow/**",
                "bulkhead.compartments.users.limit", "1",
                "bulkhead.compartments.users.paths[0]", "/users/{id}",
                "bulkhead.compartments.users.paths[1]", "/files/*.csv",
                "bulkhead.compartments.login.limit", "1",
                "bulkhead.compartments.login.paths[0]", "/slow/login"),
            List.of(),
            false);

    assertThat(target(routes, "/slow")).isEqualTo("slow"); // /slow/** is /slow and below it
    assertThat(target(routes, "/slow/a/b")).isEqualTo("slow");
    assertThat(target(routes, "/slow/login")).isEqualTo("login"); // exact beats the wildcard
    assertThat(target(routes, "/slower")).isEqualTo("server");
    assertThat(target(routes, "/users/42")).isEqualTo("users"); // a variable is one segment
    assertThat(target(routes, "/users/42/orders")).isEqualTo("server");
    assertThat(target(routes, "/users")).isEqualTo("server");
    assertThat(target(routes, "/files/q1.csv")).isEqualTo("users");
    assertThat(target(routes, "/")).isEqualTo("server");
    assertThat(routes.toString()).contains("/users/{id} -> bulkhead 'users'");
  }

  @Test
  void withoutPaths_everyRequestIsBypassed() {
    EdgeRoutes routes =
        routes(Map.of("bulkhead.compartments.llm.limit", "1"), List.of("/actuator"), false);
    assertThat(routes.isEmpty()).isTrue();
    assertThat(routes.route("/anything")).isEqualTo(Route.bypass());
  }

  @Test
  void managementPaths_areBypassedBeforeAnyPattern_soSlashStarStarLeavesThemOut() {
    Map<String, String> everything =
        Map.of(
            "bulkhead.compartments.server.limit", "1",
            "bulkhead.compartments.server.paths[0]", "/**",
            "bulkhead.compartments.health.limit", "1",
            "bulkhead.compartments.health.paths[0]", "/{any}/health");
    EdgeRoutes routes = routes(everything, List.of("/app/actuator"), false);

    assertThat(target(routes, "/app/actuator")).isEqualTo("-");
    assertThat(target(routes, "/app/actuator/health")).isEqualTo("-");
    assertThat(target(routes, "/app/actuator/compartments/llm")).isEqualTo("-");
    assertThat(target(routes, "/app/actuatorium")).isEqualTo("server");
    assertThat(target(routes, "/app/login")).isEqualTo("server");
    assertThat(target(routes, "/app/health")).isEqualTo("health");

    EdgeRoutes included = routes(everything, List.of("/app/actuator"), true);
    assertThat(target(included, "/app/actuator/health")).isEqualTo("server");
  }

  @Test
  void aPatternNamingAManagementPath_isRefused_unlessIncludeManagement() {
    Map<String, String> namedAndAPathItMatches =
        Map.of(
            "/actuator/**", "/actuator",
            "/actuator", "/actuator",
            "/actuator/health", "/actuator/health",
            "/actuator/{id}", "/actuator/compartments");
    namedAndAPathItMatches.forEach(
        (named, path) -> {
          Map<String, String> settings =
              Map.of(
                  "bulkhead.compartments.ops.limit", "1",
                  "bulkhead.compartments.ops.paths[0]", "/login",
                  "bulkhead.compartments.ops.paths[1]", named);
          assertThatThrownBy(() -> routes(settings, List.of("/actuator"), false))
              .isInstanceOf(BulkheadConfigurationException.class)
              .hasMessage(
                  "bulkhead.compartments.ops.paths[1]="
                      + named
                      + ": the pattern covers the management endpoints under /actuator, which"
                      + " must answer while compartments are full; set"
                      + " bulkhead.edge.include-management=true to route them all the same");
          // Asked for: the pattern routes them. Management elsewhere: nothing to refuse.
          assertThat(target(routes(settings, List.of("/actuator"), true), path)).isEqualTo("ops");
          assertThat(target(routes(settings, List.of(), false), path)).isEqualTo("ops");
        });
    assertThat(EdgeRoutes.names("/**", "/actuator")).isFalse();
    assertThat(EdgeRoutes.names("/act*/**", "/actuator")).isFalse();
    assertThat(EdgeRoutes.names("/actuatorium/**", "/actuator")).isFalse();
    assertThat(EdgeRoutes.names("/health/**", "/health")).isTrue();
  }

  @Test
  void aMalformedOrDoubleRoutedPattern_failsWithOneLineNamingTheKey() {
    assertThatThrownBy(
            () ->
                routes(
                    Map.of(
                        "bulkhead.compartments.llm.limit", "1",
                        "bulkhead.compartments.llm.paths[0]", "/chat/**/more"),
                    List.of(),
                    false))
        .isInstanceOf(BulkheadConfigurationException.class)
        .hasMessageStartingWith(
            "bulkhead.compartments.llm.paths[0]=/chat/**/more: not a Spring path pattern: ")
        .hasMessageNotContaining("\n");
    assertThatThrownBy(
            () ->
                routes(
                    Map.of(
                        "bulkhead.compartments.llm.limit", "1",
                        "bulkhead.compartments.llm.paths[0]", "/users/{id"),
                    List.of(),
                    false))
        .hasMessageStartingWith("bulkhead.compartments.llm.paths[0]=/users/{id: not a Spring path");
    Bulkhead only = Bulkhead.builder("other").limit(1).build();
    BulkheadRegistry registry = BulkheadRegistry.create();
    registry.register(only);
    assertThatThrownBy(
            () ->
                EdgeRoutes.of(
                    settings(
                        Map.of(
                            "bulkhead.compartments.llm.limit", "1",
                            "bulkhead.compartments.llm.paths[0]", "/chat/**")),
                    registry,
                    List.of(),
                    false))
        .hasMessage(
            "bulkhead.compartments.llm.paths=/chat/**: the BulkheadRegistry bean has no"
                + " compartment 'llm' that admits calls");
  }
}
