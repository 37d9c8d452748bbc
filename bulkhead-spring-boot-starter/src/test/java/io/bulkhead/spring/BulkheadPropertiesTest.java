package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.context.properties.source.ConfigurationPropertySources;
import org.springframework.boot.context.properties.source.MapConfigurationPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import tools.jackson.databind.JsonNode;
import tools.jackson.databind.json.JsonMapper;

/** Binding of bulkhead.* as Spring Boot binds it, and the metadata IDEs complete the keys from. */
class BulkheadPropertiesTest {

  private static BulkheadProperties bind(Binder binder) {
    return binder.bind(BulkheadProperties.PREFIX, BulkheadProperties.class).get();
  }

  @Test
  void bindsEverySettingUnderItsKebabCaseAndCamelCaseNames() {
    MapConfigurationPropertySource source =
        new MapConfigurationPropertySource(
            Map.of(
                "bulkhead.budgets.llm-api.capacity", "20",
                "bulkhead.compartments.llm.limit", "10",
                "bulkhead.compartments.llm.max-queue", "20",
                "bulkhead.compartments.llm.maxWait", "1500ms",
                "bulkhead.compartments.llm.budget", "llm-api",
                "bulkhead.compartments.llm.paths[0]", "/chat/**",
                "bulkhead.compartments.llm.paths[1]", "/complete",
                "bulkhead.compartments.llm.upstream", "https://llm.internal:8443/v1"));

    BulkheadProperties properties = bind(new Binder(source));

    BulkheadProperties.Compartment llm = properties.getCompartments().get("llm");
    assertThat(llm.getLimit()).isEqualTo(10);
    assertThat(llm.getMaxQueue()).isEqualTo("20");
    assertThat(llm.getMaxWait()).isEqualTo("1500ms");
    assertThat(llm.getBudget()).isEqualTo("llm-api");
    assertThat(llm.getPaths()).containsExactly("/chat/**", "/complete");
    assertThat(llm.getUpstream()).isEqualTo("https://llm.internal:8443/v1");
    assertThat(properties.getBudgets().get("llm-api").getCapacity()).isEqualTo(20);
  }

  @Test
  void adaptive_bindsTheSameKeysAsTheYamlFile_andBuildsAnAdaptiveCompartment() {
    Map<String, String> keys = new java.util.HashMap<>();
    keys.put("bulkhead.compartments.llm.limit", "10");
    keys.put("bulkhead.compartments.llm.adaptive.controller", "aimd");
    keys.put("bulkhead.compartments.llm.adaptive.min", "2");
    keys.put("bulkhead.compartments.llm.adaptive.max", "20");
    keys.put("bulkhead.compartments.llm.adaptive.interval", "500ms");
    BulkheadProperties properties = bind(new Binder(new MapConfigurationPropertySource(keys)));
    assertThat(properties.getCompartments().get("llm").getAdaptive().getController())
        .isEqualTo("aimd");
    io.bulkhead.AdaptiveLimit.Status s =
        CompartmentFactory.build(
                CompartmentFactory.settings(new Binder(new MapConfigurationPropertySource(keys))))
            .registry()
            .find("llm")
            .orElseThrow()
            .adaptive()
            .orElseThrow();
    assertThat(s.controller()).isEqualTo("aimd");
    assertThat(s.min()).isEqualTo(2);
    assertThat(s.max()).isEqualTo(20);
    assertThat(s.limit()).isEqualTo(10);

    keys.put("bulkhead.compartments.llm.adaptive.controller", "pid");
    org.assertj.core.api.Assertions.assertThatThrownBy(
            () ->
                CompartmentFactory.build(
                    CompartmentFactory.settings(
                        new Binder(new MapConfigurationPropertySource(keys)))))
        .hasMessageContaining("bulkhead.compartments.llm.adaptive.controller");
  }

  @Test
  void environmentVariablesOverrideTheFileAsEverywhereInSpringBoot() {
    StandardEnvironment environment = new StandardEnvironment();
    MutablePropertySources sources = environment.getPropertySources();
    sources.remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
    sources.addLast(
        new SystemEnvironmentPropertySource(
            StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            Map.of(
                "BULKHEAD_COMPARTMENTS_LLM_LIMIT",
                "7",
                "BULKHEAD_COMPARTMENTS_LLM_MAXWAIT",
                "2s")));
    sources.addLast(
        new org.springframework.core.env.MapPropertySource(
            "application.yml",
            Map.of(
                "bulkhead.compartments.llm.limit",
                "3",
                "bulkhead.compartments.llm.max-queue",
                "4")));

    BulkheadProperties properties = bind(new Binder(ConfigurationPropertySources.get(environment)));

    BulkheadProperties.Compartment llm = properties.getCompartments().get("llm");
    assertThat(llm.getLimit()).isEqualTo(7);
    assertThat(llm.getMaxWait()).isEqualTo("2s");
    assertThat(llm.getMaxQueue()).isEqualTo("4");
  }

  @Test
  void configurationMetadataDescribesEveryKey() throws IOException {
    JsonNode metadata;
    try (InputStream in =
        getClass()
            .getClassLoader()
            .getResourceAsStream("META-INF/spring-configuration-metadata.json")) {
      assertThat(in).as("generated by spring-boot-configuration-processor").isNotNull();
      metadata =
          JsonMapper.builder()
              .build()
              .readTree(new String(in.readAllBytes(), StandardCharsets.UTF_8));
    }
    Map<String, JsonNode> byName = new java.util.HashMap<>();
    metadata.get("properties").forEach(p -> byName.put(p.get("name").asString(), p));

    assertThat(byName.get("bulkhead.compartments").get("type").asString())
        .isEqualTo(
            "java.util.Map<java.lang.String,io.bulkhead.spring.BulkheadProperties$Compartment>");
    assertThat(byName.get("bulkhead.budgets").get("type").asString())
        .isEqualTo("java.util.Map<java.lang.String,io.bulkhead.spring.BulkheadProperties$Budget>");
    // The value types, whose fields IDEs complete below a map key, carry the descriptions.
    List<String> groups =
        metadata.get("groups").valueStream().map(g -> g.get("name").asString()).toList();
    assertThat(groups).contains("bulkhead", "management.endpoint.compartments");
    assertThat(byName.get("bulkhead.compartments").get("description").asString())
        .contains("Compartments by name");

    // Every key has a description; the IDE shows it beside the completion.
    assertThat(byName.values())
        .allSatisfy(
            p ->
                assertThat(p.path("description").asString(""))
                    .as(p.get("name").asString())
                    .isNotBlank()
                    .doesNotContain("{@"));
    // The keys every compartment takes, under bulkhead.defaults, with their defaults.
    assertThat(byName)
        .containsKeys(
            "bulkhead.defaults.limit",
            "bulkhead.defaults.max-queue",
            "bulkhead.defaults.max-wait",
            "bulkhead.defaults.budget",
            "bulkhead.edge.include-management",
            "management.health.bulkheads.enabled",
            "management.health.bulkheads.down-on",
            "management.endpoint.compartments.access");
    assertThat(byName.get("bulkhead.defaults.limit").get("type").asString())
        .isEqualTo("java.lang.Integer");
    // A number or unbounded, a duration or unbounded: the settings model reads them.
    assertThat(byName.get("bulkhead.defaults.max-queue").get("type").asString())
        .isEqualTo("java.lang.String");
    assertThat(byName.get("bulkhead.defaults.max-queue").get("description").asString())
        .contains("unbounded");
    assertThat(byName.get("bulkhead.defaults.max-wait").get("type").asString())
        .isEqualTo("java.lang.String");
    assertThat(byName.get("bulkhead.defaults.max-wait").get("description").asString())
        .contains("max-wait");
    assertThat(byName.get("bulkhead.defaults.budget").get("description").asString())
        .contains("bulkhead.budgets");
    assertThat(byName.get("bulkhead.edge.include-management").get("defaultValue").asBoolean())
        .isFalse();
    assertThat(byName.get("management.health.bulkheads.enabled").get("defaultValue").asBoolean())
        .isTrue();
    assertThat(byName.get("management.endpoint.compartments.access").get("defaultValue").asString())
        .as("the POST that changes a limit is off unless enabled")
        .isEqualTo("read_only");
  }

  /**
   * Below a compartment's name (a map key of the application's choosing) Spring's metadata format
   * names the value type, which IDEs complete from; its keys are those of bulkhead.defaults plus
   * the four about one dependency alone, so each of the others has its default there.
   */
  @Test
  void aCompartmentsKeysAreTheDefaultsKeysPlusRateLatencyPathsUpstreamAndAdaptive() {
    Binder binder =
        new Binder(
            new MapConfigurationPropertySource(
                Map.of(
                    "bulkhead.defaults.max-queue", "3",
                    "bulkhead.compartments.llm.limit", "2")));
    BulkheadProperties properties = bind(binder);
    assertThat(properties.getDefaults().getMaxQueue()).isEqualTo("3");
    assertThat(properties.getCompartments().get("llm").getMaxQueue())
        .as("not given: the default applies when the compartment is built")
        .isNull();
    assertThat(BulkheadProperties.Compartment.class.getSuperclass())
        .isEqualTo(BulkheadProperties.Sized.class);
    assertThat(BulkheadProperties.WorkerPool.class.getSuperclass())
        .isEqualTo(BulkheadProperties.Sized.class);
    assertThat(BulkheadProperties.Sized.class.getSuperclass())
        .isEqualTo(BulkheadProperties.Defaults.class);
    assertThat(bindable(BulkheadProperties.Sized.class))
        .containsExactlyInAnyOrder("rate", "latency");
    assertThat(bindable(BulkheadProperties.Compartment.class))
        .containsExactlyInAnyOrder("paths", "upstream", "adaptive");
    assertThat(bindable(BulkheadProperties.Defaults.class))
        .containsExactlyInAnyOrder(
            "limit", "maxQueue", "maxWait", "budget", "criticality", "headroom", "cpuBound");
  }

  private static List<String> bindable(Class<?> type) {
    return java.util.Arrays.stream(type.getDeclaredFields())
        .filter(f -> !java.lang.reflect.Modifier.isStatic(f.getModifiers()))
        .map(java.lang.reflect.Field::getName)
        .toList();
  }
}
