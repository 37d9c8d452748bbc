package io.bulkhead.spring;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.CompartmentSpec;
import io.bulkhead.config.Compartments;
import io.bulkhead.config.ConfigException;
import io.bulkhead.httpclient.BaseUrl;
import io.bulkhead.internal.Urls;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.SortedSet;
import java.util.TreeMap;
import java.util.function.Supplier;
import org.springframework.boot.context.properties.bind.Bindable;
import org.springframework.boot.context.properties.bind.Binder;

/**
 * Reads {@code bulkhead.*} into the settings model of {@code bulkhead-config}, the one the YAML
 * file is read into ({@link BulkheadFile#fromMap}), and builds the compartments from it: every key
 * of the file works here, with the file's defaults and checks. Spring binds the subtree as a plain
 * map; this class gives its keys the file's spelling (Spring's relaxed names: {@code maxQueue},
 * {@code MAXQUEUE} from an environment variable), turns the indexed entries Spring makes of a list
 * ({@code paths[0]}) back into a list, and leaves out the keys that only Spring has ({@link
 * #SPRING_ONLY}). The first wrong value stops start-up with a {@link
 * BulkheadConfigurationException} naming its key ({@code bulkhead.compartments.llm.limit: must be
 * at least 1 but was 0}).
 */
final class CompartmentFactory {

  /** How errors name where the settings came from. */
  static final String SOURCE = "application properties (bulkhead.*)";

  /**
   * The {@code bulkhead.*} sections that are Spring's alone ({@link BulkheadProperties}): the web
   * edge's management switch and the readiness warm-up.
   */
  static final Set<String> SPRING_ONLY = Set.of("edge", "warm-up");

  private static final SortedSet<String> KEYS = BulkheadFile.keys();

  /** An upstream and the compartment its outgoing calls enter. */
  record UpstreamRoute(BaseUrl upstream, String compartment) {}

  private CompartmentFactory() {}

  /**
   * The settings under {@code bulkhead}, checked.
   *
   * @throws BulkheadConfigurationException for the first value that is wrong
   */
  static BulkheadFile settings(Binder binder) {
    Map<String, Object> model = tree(binder);
    try {
      return BulkheadFile.fromMap(model, SOURCE);
    } catch (ConfigException e) {
      throw refused(e);
    }
  }

  /**
   * The {@code bulkhead} subtree as the file's nested maps, without checking it: what the settings
   * model reads, and what bean definitions are named from before any bean exists.
   */
  static Map<String, Object> tree(Binder binder) {
    Map<String, Object> bound =
        binder
            .bind(BulkheadProperties.PREFIX, Bindable.mapOf(String.class, Object.class))
            .orElse(Map.of());
    Map<String, Object> model = new LinkedHashMap<>();
    bound.forEach(
        (key, value) -> {
          boolean springOnly = SPRING_ONLY.stream().anyMatch(s -> uniform(s).equals(uniform(key)));
          if (!springOnly) {
            model.put(key, value);
          }
        });
    @SuppressWarnings("unchecked")
    Map<String, Object> normal = (Map<String, Object>) normalise(model, "");
    return normal;
  }

  /**
   * Builds the budgets, compartments and worker pools, after checking every {@code paths} entry
   * (whichever web stack enforces them) and every {@code upstream}.
   *
   * @throws BulkheadConfigurationException for the first value that is wrong, and for a budget that
   *     is over-subscribed (listing every share)
   */
  static Compartments build(BulkheadFile settings) {
    EdgePath.check(settings);
    upstreams(settings);
    try {
      return settings.build();
    } catch (ConfigException e) {
      throw refused(e);
    }
  }

  /** The configured upstreams, in the order of their compartments. */
  static List<UpstreamRoute> upstreams(BulkheadFile settings) {
    List<UpstreamRoute> routes = new ArrayList<>();
    for (CompartmentSpec c : settings.compartments()) {
      c.upstream().ifPresent(u -> routes.add(new UpstreamRoute(upstream(c.name(), u), c.name())));
    }
    return List.copyOf(routes);
  }

  /** The settings model's refusal as start-up's: the key under {@code bulkhead.}, and why. */
  static BulkheadConfigurationException refused(ConfigException e) {
    return e.key()
        .map(key -> BulkheadConfigurationException.key(BulkheadProperties.PREFIX + "." + key, e))
        .orElseGet(() -> BulkheadConfigurationException.key(BulkheadProperties.PREFIX, e));
  }

  private static BaseUrl upstream(String name, String value) {
    // The value may carry a user and password: the refusal names it masked.
    return build(
        BulkheadProperties.PREFIX + ".compartments." + name + ".upstream",
        Urls.masked(value),
        () -> BaseUrl.parse(value));
  }

  /** Runs a factory or check, naming {@code key} and {@code value} in what it refuses. */
  private static <T> T build(String key, Object value, Supplier<T> factory) {
    try {
      return factory.get();
    } catch (IllegalArgumentException e) {
      throw BulkheadConfigurationException.property(key, value, e.getMessage());
    }
  }

  /**
   * {@code value}, found at {@code pattern} (a key of {@link BulkheadFile#keys()}, {@code *} for a
   * name), with the file's spelling of every key and lists for Spring's indexed maps.
   */
  private static Object normalise(Object value, String pattern) {
    if (!(value instanceof Map<?, ?> map)) {
      return value;
    }
    if (KEYS.contains(pattern) && isIndexed(map)) {
      TreeMap<Integer, Object> items = new TreeMap<>();
      map.forEach((k, v) -> items.put(index(String.valueOf(k)), normalise(v, pattern)));
      return new ArrayList<>(items.values());
    }
    boolean names =
        !pattern.isEmpty() && KEYS.stream().anyMatch(k -> k.startsWith(pattern + ".*."));
    Map<String, Object> out = new LinkedHashMap<>();
    map.forEach(
        (k, v) -> {
          String key = String.valueOf(k);
          String field = names ? key : spelling(pattern, key);
          String child =
              names ? pattern + ".*" : (pattern.isEmpty() ? field : pattern + "." + field);
          // Two spellings of one key (max-wait in a file, MAXWAIT in the environment) were bound
          // to the same value, the one of the source that wins.
          out.putIfAbsent(field, normalise(v, child));
        });
    return out;
  }

  /** The file's spelling of {@code key} among the keys below {@code pattern}; else as given. */
  private static String spelling(String pattern, String key) {
    String prefix = pattern.isEmpty() ? "" : pattern + ".";
    String wanted = uniform(key);
    for (String k : KEYS) {
      if (k.startsWith(prefix)) {
        String next = k.substring(prefix.length()).split("\\.", 2)[0];
        if (uniform(next).equals(wanted)) {
          return next;
        }
      }
    }
    return key;
  }

  private static boolean isIndexed(Map<?, ?> map) {
    if (map.isEmpty()) {
      return false;
    }
    for (Object k : map.keySet()) {
      if (index(String.valueOf(k)) < 0) {
        return false;
      }
    }
    return true;
  }

  /** The index of {@code 0} or {@code [0]}; -1 if the key is not one. */
  private static int index(String key) {
    String digits =
        key.startsWith("[") && key.endsWith("]") ? key.substring(1, key.length() - 1) : key;
    if (digits.isEmpty() || digits.length() > 9 || !digits.chars().allMatch(Character::isDigit)) {
      return -1;
    }
    return Integer.parseInt(digits);
  }

  /** A key as Spring compares them: case and dashes ignored. */
  private static String uniform(String key) {
    return key.replace("-", "").replace("_", "").toLowerCase(Locale.ROOT);
  }
}
