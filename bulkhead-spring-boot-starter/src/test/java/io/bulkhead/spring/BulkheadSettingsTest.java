package io.bulkhead.spring;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.Budget;
import io.bulkhead.BulkheadRegistry;
import io.bulkhead.Compartment;
import io.bulkhead.QueueSettings;
import io.bulkhead.config.BudgetSpec;
import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.CompartmentSpec;
import io.bulkhead.config.Compartments;
import io.bulkhead.config.DatabaseSpec;
import io.bulkhead.config.PoolSpec;
import java.beans.Introspector;
import java.beans.PropertyDescriptor;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.ParameterizedType;
import java.lang.reflect.Type;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.io.ByteArrayResource;

/**
 * One settings text through both front ends: {@link BulkheadFile} reads it as a settings file, and
 * Spring Boot binds it as an {@code application.yml} (the same lines indented under {@code
 * bulkhead:}) and builds the registry bean. The compartments, budgets, edge routes, upstreams and
 * databases must come out the same.
 */
class BulkheadSettingsTest {

  private static final String RESOURCE = "settings.yml";

  private static String settingsText() throws IOException {
    try (InputStream in = BulkheadSettingsTest.class.getResourceAsStream(RESOURCE)) {
      return new String(in.readAllBytes(), StandardCharsets.UTF_8);
    }
  }

  /** The settings file's text as an application.yml: every line under {@code bulkhead:}. */
  private static String asApplicationYml(String settings) {
    return "bulkhead:\n"
        + settings
            .lines()
            .map(line -> line.isBlank() || line.startsWith("#") ? line : "  " + line)
            .collect(Collectors.joining("\n", "", "\n"));
  }

  private static ApplicationContextRunner springReading(String applicationYml) {
    return new ApplicationContextRunner()
        .withConfiguration(AutoConfigurations.of(BulkheadAutoConfiguration.class))
        .withInitializer(
            context -> {
              try {
                new YamlPropertySourceLoader()
                    .load(
                        "application.yml",
                        new ByteArrayResource(
                            applicationYml.getBytes(StandardCharsets.UTF_8), "application.yml"))
                    .forEach(
                        source -> context.getEnvironment().getPropertySources().addLast(source));
              } catch (IOException e) {
                throw new IllegalStateException(e);
              }
            });
  }

  /**
   * What a built compartment is, beyond its identity: its settings and the budget it draws from.
   */
  private record Built(
      String name, int limit, QueueSettings queue, Optional<String> budget, OptionalInt capacity) {

    static List<Built> of(BulkheadRegistry registry) {
      List<Built> built = new ArrayList<>();
      for (Compartment c : registry.all()) {
        Optional<Budget> budget = c.budget();
        built.add(
            new Built(
                c.name(),
                c.config().limit(),
                c.config().queue(),
                budget.map(Budget::name),
                budget.map(b -> OptionalInt.of(b.capacity())).orElse(OptionalInt.empty())));
      }
      return built;
    }
  }

  /** A database as both front ends declare it, without where it was declared. */
  private record Database(
      String name,
      String url,
      Optional<String> username,
      Optional<String> password,
      int reserve,
      OptionalInt capacity,
      Map<String, Pool> pools) {}

  private record Pool(int limit, QueueSettings queue, Optional<Duration> connectionTimeout) {}

  private static Database of(DatabaseSpec d) {
    Map<String, Pool> pools = new LinkedHashMap<>();
    for (PoolSpec p : d.pools()) {
      pools.put(p.name(), new Pool(p.limit(), p.queue(), p.connectionTimeout()));
    }
    return new Database(
        d.name(), d.url(), d.username(), d.password(), d.reserve(), d.capacity(), pools);
  }

  private static Database of(String name, BulkheadProperties.Database d) {
    Map<String, Pool> pools = new LinkedHashMap<>();
    d.getPools()
        .forEach(
            (workload, p) -> {
              QueueSettings queue = QueueSettings.DEFAULT.withMaxQueue(p.getMaxQueue());
              if (p.getMaxWait() != null) {
                queue = queue.withMaxWait(p.getMaxWait());
              }
              pools.put(
                  workload,
                  new Pool(p.getLimit(), queue, Optional.ofNullable(p.getConnectionTimeout())));
            });
    return new Database(
        name,
        d.getUrl(),
        Optional.ofNullable(d.getUsername()),
        Optional.ofNullable(d.getPassword()),
        d.getReserve(),
        d.getCapacity() == null ? OptionalInt.empty() : OptionalInt.of(d.getCapacity()),
        pools);
  }

  @Test
  void oneText_buildsTheSameCompartmentsThroughTheFileAndThroughSpring() throws IOException {
    String settings = settingsText();
    BulkheadFile file = BulkheadFile.parse(settings, RESOURCE);
    List<Built> fromFile;
    try (Compartments built = file.build()) {
      fromFile = Built.of(built.registry());
    }
    assertThat(fromFile).as("the resource declares compartments").hasSize(4);

    springReading(asApplicationYml(settings))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              List<Built> fromSpring = Built.of(context.getBean(BulkheadRegistry.class));
              // The order of a registry is the order of its map; what is built is the question.
              assertThat(fromSpring).containsExactlyInAnyOrderElementsOf(fromFile);

              BulkheadProperties properties = context.getBean(BulkheadProperties.class);
              Map<String, Integer> fileBudgets = new LinkedHashMap<>();
              for (BudgetSpec b : file.budgets()) {
                fileBudgets.put(b.name(), b.capacity());
              }
              Map<String, Integer> springBudgets = new LinkedHashMap<>();
              properties
                  .getBudgets()
                  .forEach((name, b) -> springBudgets.put(name, b.getCapacity()));
              assertThat(springBudgets).isEqualTo(fileBudgets);

              for (CompartmentSpec spec : file.compartments()) {
                BulkheadProperties.Compartment bound =
                    properties.getCompartments().get(spec.name());
                assertThat(bound.getPaths()).as(spec.name()).isEqualTo(spec.paths());
                assertThat(Optional.ofNullable(bound.getUpstream()))
                    .as(spec.name())
                    .isEqualTo(spec.upstream());
              }
              assertThat(
                      CompartmentFactory.upstreams(properties).stream()
                          .map(CompartmentFactory.UpstreamRoute::compartment))
                  .containsExactly("llm", "embeddings");

              List<Database> springDatabases = new ArrayList<>();
              properties.getDatasources().forEach((n, d) -> springDatabases.add(of(n, d)));
              assertThat(springDatabases)
                  .isEqualTo(file.datasources().stream().map(BulkheadSettingsTest::of).toList())
                  .hasSize(1);
            });
  }

  @Test
  void everyKeySpringBinds_isAKeyOfTheSettingsFile() {
    SortedSet<String> spring = new TreeSet<>();
    keys(BulkheadProperties.class, "", spring);
    assertThat(spring)
        .as("Spring's keys, read from BulkheadProperties")
        .contains("compartments.*.max-queue", "datasources.*.pools.*.connection-timeout");
    // edge.include-management concerns Spring's own management server, and warm-up Spring's
    // readiness: the file has neither.
    spring.remove("edge.include-management");
    spring.removeIf(key -> key.startsWith("warm-up."));
    assertThat(BulkheadFile.keys()).containsAll(spring);
  }

  /** The kebab-case keys a bean class binds, {@code *} for a map's key. */
  private static void keys(Class<?> type, String prefix, SortedSet<String> into) {
    try {
      for (PropertyDescriptor p :
          Introspector.getBeanInfo(type, Object.class).getPropertyDescriptors()) {
        String key = prefix + kebab(p.getName());
        Type generic = p.getReadMethod().getGenericReturnType();
        if (generic instanceof ParameterizedType map
            && map.getRawType() == Map.class
            && map.getActualTypeArguments()[1] instanceof Class<?> value
            && value.getDeclaringClass() == BulkheadProperties.class) {
          keys(value, key + ".*.", into);
        } else if (p.getPropertyType().getDeclaringClass() == BulkheadProperties.class) {
          keys(p.getPropertyType(), key + ".", into);
        } else {
          into.add(key);
        }
      }
    } catch (java.beans.IntrospectionException e) {
      throw new IllegalStateException(e);
    }
  }

  private static String kebab(String camel) {
    return camel.replaceAll("([a-z])([A-Z])", "$1-$2").toLowerCase(java.util.Locale.ROOT);
  }
}
