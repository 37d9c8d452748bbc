package io.bulkhead.demo.deploy;

import io.bulkhead.config.ConfigException;
import io.bulkhead.config.Quantities;
import io.bulkhead.config.internal.Printable;
import io.bulkhead.config.internal.YamlTree;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * What the Compose and the Kubernetes readers share: a file's YAML tree, the containers read so
 * far, and the readings both sources need (a command line, the JVM's options, the two names that
 * tie a container to the bulkhead file, a PostgreSQL setting, a quantity). Every reading fails at
 * the first problem with a {@link ConfigException} naming the file, the line and the key.
 */
abstract class ManifestReader {

  static final String COMPARTMENTS = "bulkhead.io/compartments";
  static final String CONTAINER = "bulkhead.io/container";
  static final String BUDGET = "bulkhead.io/budget";

  /** The environment variables the JVM itself reads options from, in the order it applies them. */
  static final List<String> JVM_OPTION_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

  final YamlTree yaml;
  final List<Container> containers;

  ManifestReader(YamlTree yaml, List<Container> containers) {
    this.yaml = yaml;
    this.containers = containers;
  }

  List<Read<String>> command(YamlTree.Entry e, String path) {
    List<Read<String>> tokens = new ArrayList<>();
    if (e == null) {
      return tokens;
    }
    if (e.value() instanceof ScalarNode) {
      String line = yaml.scalar(e);
      for (String t : line.trim().split("\\s+")) {
        if (!t.isEmpty()) {
          tokens.add(new Read<>(t, t, yaml.file, YamlTree.line(e.value()), path));
        }
      }
      return tokens;
    }
    List<Node> items = yaml.list(e.value(), path);
    for (int i = 0; i < items.size(); i++) {
      String t = scalarItem(items.get(i), path);
      tokens.add(new Read<>(t, t, yaml.file, YamlTree.line(items.get(i)), path + "[" + i + "]"));
    }
    return tokens;
  }

  String scalarItem(Node item, String path) {
    if (!(item instanceof ScalarNode) || YamlTree.describe(item).equals("nothing")) {
      throw yaml.error(
          item, path, "expected a single value in the list but found " + YamlTree.describe(item));
    }
    return ((ScalarNode) item).getValue();
  }

  static String child(String parent, String key) {
    return parent == null ? key : parent + "." + key;
  }

  static String replicas(int n) {
    return n + " replica" + (n == 1 ? "" : "s");
  }

  static List<Read<String>> jvm(Map<String, Read<String>> env, List<Read<String>> command) {
    List<Read<String>> jvm = new ArrayList<>();
    for (String variable : JVM_OPTION_VARIABLES) {
      Read<String> v = env.get(variable);
      if (v != null) {
        for (String token : v.value().trim().split("\\s+")) {
          if (!token.isEmpty()) {
            jvm.add(new Read<>(token, token, v.file(), v.line(), v.key()));
          }
        }
      }
    }
    jvm.addAll(command);
    return jvm;
  }

  static Read<List<String>> compartments(Map<String, Read<String>> labels) {
    Read<String> names = labels.get(COMPARTMENTS);
    if (names == null) {
      return null;
    }
    List<String> list = new ArrayList<>();
    for (String n : names.value().split(",")) {
      if (!n.isBlank()) {
        list.add(n.trim());
      }
    }
    return new Read<>(list, names.value(), names.file(), names.line(), names.key());
  }

  static Read<String> budget(Map<String, Read<String>> labels) {
    Read<String> budget = labels.get(BUDGET);
    return budget == null
        ? null
        : new Read<>(
            budget.value().trim(), budget.text(), budget.file(), budget.line(), budget.key());
  }

  /**
   * A PostgreSQL setting given on the server's command line: {@code -c name=value}, {@code
   * -cname=value} or {@code --name=value}.
   */
  Read<Integer> setting(List<Read<String>> command, String setting) {
    Read<Integer> found = null;
    for (int i = 0; i < command.size(); i++) {
      String t = command.get(i).value().trim();
      String assignment = null;
      if (t.equals("-c") && i + 1 < command.size()) {
        assignment = command.get(i + 1).value().trim();
        i++;
      } else if (t.startsWith("-c")) {
        assignment = t.substring(2);
      } else if (t.startsWith("--")) {
        assignment = t.substring(2).replace('-', '_');
      }
      if (assignment != null && assignment.startsWith(setting + "=")) {
        Read<String> at = command.get(i);
        String value = assignment.substring(setting.length() + 1).trim();
        long n;
        try {
          n = Quantities.parseWhole(value);
        } catch (IllegalArgumentException bad) {
          n = -1;
        }
        if (n < 0 || n > Integer.MAX_VALUE) {
          throw new ConfigException(
              at.file(),
              at.line(),
              at.key(),
              setting + " must be a whole number of connections but was " + Printable.quote(value));
        }
        found = new Read<>((int) n, value, at.file(), at.line(), at.key());
      }
    }
    return found;
  }

  <T> Read<T> quantity(YamlTree.Entry e, Function<String, T> parser) {
    String text = yaml.scalar(e);
    try {
      return new Read<>(
          parser.apply(text), text.trim(), yaml.file, YamlTree.line(e.value()), e.path());
    } catch (IllegalArgumentException bad) {
      throw yaml.error(e.value(), e.path(), bad.getMessage());
    }
  }

  Map<String, YamlTree.Entry> optionalMapping(Map<String, YamlTree.Entry> parent, String key) {
    YamlTree.Entry e = parent.get(key);
    if (e == null || YamlTree.describe(e.value()).equals("nothing")) {
      return Map.of();
    }
    return yaml.mapping(e.value(), e.path(), null);
  }

  YamlTree.Entry required(Map<String, YamlTree.Entry> parent, String key, Node at, String path) {
    YamlTree.Entry e = parent.get(key);
    if (e == null) {
      throw yaml.error(at, child(path, key), "missing");
    }
    return e;
  }
}
