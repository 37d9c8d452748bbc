package io.bulkhead.demo.deploy;

import io.bulkhead.config.internal.YamlTree;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * Reads a Docker Compose file: {@code services.NAME} with {@code deploy.replicas} (or {@code
 * scale}), {@code deploy.resources.limits.memory} and {@code .cpus} (or the older {@code mem_limit}
 * and {@code cpus}, in Docker's units), {@code deploy.update_config} ({@code order: start-first}
 * starts {@code parallelism} new containers before stopping old ones), {@code environment}, {@code
 * command} and {@code labels} (a mapping or a list of {@code KEY=value}, as Compose allows both).
 */
final class ComposeReader extends ManifestReader {

  ComposeReader(YamlTree yaml, List<Container> containers) {
    super(yaml, containers);
  }

  /** Whether {@code documents} are a Compose file: one mapping with {@code services}. */
  static boolean isCompose(YamlTree yaml, List<Node> documents) {
    return documents.size() == 1
        && documents.get(0) instanceof MappingNode
        && yaml.mapping(documents.get(0), null, null).containsKey("services");
  }

  /** Reads the file's one document. */
  void read(Node document) {
    readCompose(yaml.mapping(document, null, null));
  }

  private void readCompose(Map<String, YamlTree.Entry> top) {
    for (YamlTree.Entry s : yaml.mapping(top.get("services").value(), "services", null).values()) {
      Map<String, YamlTree.Entry> f = yaml.mapping(s.value(), s.path(), null);
      Map<String, YamlTree.Entry> deploy = optionalMapping(f, "deploy");
      int replicas =
          deploy.containsKey("replicas")
              ? yaml.whole(deploy.get("replicas"), 0)
              : f.containsKey("scale") ? yaml.whole(f.get("scale"), 0) : 1;
      Map<String, YamlTree.Entry> limits =
          optionalMapping(optionalMapping(deploy, "resources"), "limits");
      Read<Long> memory =
          limits.containsKey("memory")
              ? quantity(limits.get("memory"), ResourceQuantities::dockerBytes)
              : f.containsKey("mem_limit")
                  ? quantity(f.get("mem_limit"), ResourceQuantities::dockerBytes)
                  : null;
      Read<Double> cpu =
          limits.containsKey("cpus")
              ? quantity(limits.get("cpus"), ResourceQuantities::dockerCpus)
              : f.containsKey("cpus")
                  ? quantity(f.get("cpus"), ResourceQuantities::dockerCpus)
                  : null;
      Map<String, YamlTree.Entry> update = optionalMapping(deploy, "update_config");
      int surge = 0;
      if (update.containsKey("order")
          && yaml.scalar(update.get("order")).trim().equals("start-first")) {
        int parallelism =
            update.containsKey("parallelism") ? yaml.whole(update.get("parallelism"), 0) : 1;
        surge = parallelism == 0 ? replicas : Math.min(parallelism, replicas);
      }
      Map<String, Read<String>> labels = keyValues(f.get("labels"), s.path() + ".labels");
      Map<String, Read<String>> env = keyValues(f.get("environment"), s.path() + ".environment");
      List<Read<String>> command = command(f.get("command"), s.path() + ".command");
      containers.add(
          new Container(
              yaml.file,
              "service",
              s.key(),
              s.key(),
              s.path(),
              YamlTree.line(s.keyNode()),
              true,
              replicas,
              replicas(replicas),
              null,
              surge,
              "started first in an update",
              memory,
              cpu,
              jvm(env, command),
              compartments(labels),
              budget(labels),
              setting(command, "max_connections"),
              setting(command, "superuser_reserved_connections")));
    }
  }

  /** A mapping ({@code KEY: value}) or a list of {@code KEY=value}, as Compose allows both. */
  private Map<String, Read<String>> keyValues(YamlTree.Entry e, String path) {
    Map<String, Read<String>> out = new LinkedHashMap<>();
    if (e == null) {
      return out;
    }
    if (e.value() instanceof MappingNode) {
      for (YamlTree.Entry kv : yaml.mapping(e.value(), path, null).values()) {
        if (kv.value() instanceof ScalarNode && !YamlTree.describe(kv.value()).equals("nothing")) {
          String v = yaml.scalar(kv);
          out.put(kv.key(), new Read<>(v, v, yaml.file, YamlTree.line(kv.value()), kv.path()));
        }
      }
      return out;
    }
    for (Node item : yaml.list(e.value(), path)) {
      String text = scalarItem(item, path);
      int eq = text.indexOf('=');
      String key = eq < 0 ? text : text.substring(0, eq);
      if (eq >= 0) {
        String v = text.substring(eq + 1);
        out.put(key, new Read<>(v, v, yaml.file, YamlTree.line(item), path + "." + key));
      }
    }
    return out;
  }
}
