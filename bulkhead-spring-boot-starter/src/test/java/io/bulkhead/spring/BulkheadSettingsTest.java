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
import io.bulkhead.config.Criticality;
import io.bulkhead.config.Headroom;
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
import java.util.OptionalDouble;
import java.util.OptionalInt;
import java.util.SortedSet;
import java.util.TreeSet;
import java.util.stream.Collectors;
import org.junit.jupiter.api.Test;
import org.springframework.boot.autoconfigure.AutoConfigurations;
import org.springframework.boot.context.properties.bind.Binder;
import org.springframework.boot.env.YamlPropertySourceLoader;
import org.springframework.boot.test.context.runner.ApplicationContextRunner;
import org.springframework.core.env.MapPropertySource;
import org.springframework.core.env.MutablePropertySources;
import org.springframework.core.env.StandardEnvironment;
import org.springframework.core.env.SystemEnvironmentPropertySource;
import org.springframework.core.io.ByteArrayResource;

/**
 * One settings text through both front ends: {@link BulkheadFile} reads it as a settings file, and
 * Spring Boot binds it as an {@code application.yml} (the same lines indented under {@code
 * bulkhead:}) and builds the registry bean. The compartments, worker pools, budgets, headrooms,
 * edge paths, upstreams and databases must come out the same, and the two take the same keys.
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

  /** A compartment or worker pool as the settings model reads it, without where it was written. */
  private record Spec(
      String name,
      int limit,
      boolean limitDerived,
      QueueSettings queue,
      Optional<String> budget,
      Optional<Criticality> criticality,
      OptionalDouble rate,
      Optional<Duration> latency,
      Optional<Double> headroom,
      boolean workerPool,
      boolean virtualThreads,
      boolean cpuBound,
      List<String> paths,
      Optional<String> upstream) {

    static List<Spec> of(BulkheadFile settings) {
      return settings.compartments().stream()
          .map(
              c ->
                  new Spec(
                      c.name(),
                      c.limit(),
                      c.limitDerived(),
                      c.queue(),
                      c.budget(),
                      c.criticality(),
                      c.rate(),
                      c.latency(),
                      c.headroom().map(Headroom::factor),
                      c.workerPool(),
                      c.virtualThreads(),
                      c.cpuBound(),
                      c.paths(),
                      c.upstream()))
          .toList();
    }
  }

  /** A database as the settings model reads it, without where it was written. */
  private record Database(
      String name,
      String url,
      Optional<String> username,
      Optional<String> password,
      int reserve,
      OptionalInt capacity,
      List<Pool> pools) {

    static List<Database> of(BulkheadFile settings) {
      return settings.datasources().stream()
          .map(
              d ->
                  new Database(
                      d.name(),
                      d.url(),
                      d.username(),
                      d.password(),
                      d.reserve(),
                      d.capacity(),
                      d.pools().stream()
                          .map(p -> new Pool(p.name(), p.limit(), p.queue(), p.connectionTimeout()))
                          .toList()))
          .toList();
    }
  }

  private record Pool(
      String name, int limit, QueueSettings queue, Optional<Duration> connectionTimeout) {}

  private static Map<String, Integer> budgets(BulkheadFile settings) {
    Map<String, Integer> budgets = new LinkedHashMap<>();
    for (BudgetSpec b : settings.budgets()) {
      budgets.put(b.name(), b.capacity());
    }
    return budgets;
  }

  private static Map<Criticality, Double> headrooms(BulkheadFile settings) {
    Map<Criticality, Double> headrooms = new LinkedHashMap<>();
    for (Criticality c : Criticality.values()) {
      headrooms.put(c, settings.headroom(c).factor());
    }
    return headrooms;
  }

  @Test
  void oneText_buildsTheSameCompartmentsThroughTheFileAndThroughSpring() throws IOException {
    String settings = settingsText();
    BulkheadFile file = BulkheadFile.parse(settings, RESOURCE);
    List<Built> fromFile;
    List<String> fileWorkerPools;
    try (Compartments built = file.build()) {
      fromFile = Built.of(built.registry());
      fileWorkerPools = List.copyOf(built.workerPools().keySet());
    }
    assertThat(fromFile).as("the resource declares compartments and a worker pool").hasSize(7);
    assertThat(fileWorkerPools).containsExactly("exports");
    assertThat(file.compartments())
        .as("a limit derived from rate, latency and criticality, and an unbounded queue")
        .anySatisfy(c -> assertThat(c.limitDerived()).isTrue())
        .anySatisfy(c -> assertThat(c.maxQueue()).isEmpty());

    springReading(asApplicationYml(settings))
        .run(
            context -> {
              assertThat(context).hasNotFailed();
              List<Built> fromSpring = Built.of(context.getBean(BulkheadRegistry.class));
              // The order of a registry is the order of its map; what is built is the question.
              assertThat(fromSpring).containsExactlyInAnyOrderElementsOf(fromFile);
              assertThat(context.getBean(Compartments.class).workerPools().keySet())
                  .containsExactlyElementsOf(fileWorkerPools);

              BulkheadFile spring = context.getBean(BulkheadFile.class);
              assertThat(Spec.of(spring)).isEqualTo(Spec.of(file));
              assertThat(budgets(spring)).isEqualTo(budgets(file)).hasSize(2);
              assertThat(headrooms(spring)).isEqualTo(headrooms(file));
              assertThat(Database.of(spring)).isEqualTo(Database.of(file)).hasSize(1);

              BulkheadProperties properties = context.getBean(BulkheadProperties.class);
              for (CompartmentSpec spec : file.compartments()) {
                if (spec.workerPool()) {
                  continue;
                }
                BulkheadProperties.Compartment bound =
                    properties.getCompartments().get(spec.name());
                assertThat(bound.getPaths()).as(spec.name()).isEqualTo(spec.paths());
                assertThat(Optional.ofNullable(bound.getUpstream()))
                    .as(spec.name())
                    .isEqualTo(spec.upstream());
              }
              assertThat(
                      CompartmentFactory.upstreams(spring).stream()
                          .map(CompartmentFactory.UpstreamRoute::compartment))
                  .containsExactly("llm", "embeddings");
            });
  }

  @Test
  void theKeysOfSpringAndOfTheSettingsFileAreTheSameBothWays() {
    SortedSet<String> spring = new TreeSet<>();
    keys(BulkheadProperties.class, "", spring);
    assertThat(spring)
        .as("Spring's keys, read from BulkheadProperties")
        .contains(
            "compartments.*.max-queue",
            "compartments.*.rate",
            "worker-pools.*.threads",
            "headroom.critical",
            "datasources.*.pools.*.connection-timeout");
    // Spring's alone: the web edge's management switch and the readiness warm-up.
    SortedSet<String> springOnly = new TreeSet<>();
    spring.removeIf(
        key -> {
          boolean only =
              CompartmentFactory.SPRING_ONLY.stream().anyMatch(s -> key.startsWith(s + "."));
          if (only) {
            springOnly.add(key);
          }
          return only;
        });
    assertThat(springOnly)
        .containsExactlyInAnyOrder(
            "edge.include-management",
            "warm-up.enabled",
            "warm-up.paths",
            "warm-up.requests",
            "warm-up.timeout");
    assertThat(spring).as("every Spring key is a file key").isSubsetOf(BulkheadFile.keys());
    assertThat(BulkheadFile.keys()).as("every file key binds in Spring").isSubsetOf(spring);
  }

  /** Spring's own spellings of a key (camel case, an environment variable) are the file's key. */
  @Test
  void relaxedNamesAndTheShortBudgetFormReadAsTheFileReadsThem() {
    StandardEnvironment environment = new StandardEnvironment();
    MutablePropertySources sources = environment.getPropertySources();
    sources.remove(StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME);
    sources.addLast(
        new SystemEnvironmentPropertySource(
            StandardEnvironment.SYSTEM_ENVIRONMENT_PROPERTY_SOURCE_NAME,
            Map.of("BULKHEAD_COMPARTMENTS_LLM_MAXWAIT", "2s", "BULKHEAD_BUDGETS_GPU", "9")));
    sources.addLast(
        new MapPropertySource(
            "application.yml",
            Map.of(
                "bulkhead.compartments.llm.limit", "3",
                "bulkhead.compartments.llm.maxQueue", "unbounded",
                "bulkhead.compartments.llm.max-wait", "1s",
                "bulkhead.compartments.llm.budget", "gpu",
                "bulkhead.compartments.llm.paths[0]", "/a",
                "bulkhead.compartments.llm.paths[1]", "/b/**")));

    BulkheadFile settings = CompartmentFactory.settings(Binder.get(environment));

    CompartmentSpec llm = settings.compartments().get(0);
    assertThat(llm.maxQueue()).isEmpty();
    assertThat(llm.maxWait()).as("the environment wins").hasValue(Duration.ofSeconds(2));
    assertThat(llm.paths()).containsExactly("/a", "/b/**");
    assertThat(budgets(settings)).containsExactly(Map.entry("gpu", 9));
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
