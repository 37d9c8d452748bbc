package io.bulkhead.demo.deploy;

import io.bulkhead.config.ConfigException;
import io.bulkhead.config.Quantities;
import io.bulkhead.config.internal.Printable;
import io.bulkhead.config.internal.YamlTree;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * Reads Kubernetes manifests: {@code Deployment}, {@code StatefulSet}, {@code ReplicaSet} and
 * {@code Pod} documents (and {@code List}s of them) with their {@code replicas}, the rolling
 * update's {@code maxSurge} (extra pods during a rollout, 25% by default), the containers' {@code
 * resources.limits.memory} and {@code .cpu} (in Kubernetes' units), {@code env}, {@code command}
 * and {@code args}, and the pod template's annotations; a {@code HorizontalPodAutoscaler}'s {@code
 * maxReplicas}, noted in {@code autoscaled} by {@code kind/name}, replaces the replicas of the
 * workload it scales (in whichever file that is). Other kinds are skipped.
 */
final class KubernetesReader extends ManifestReader {

  /** Kubernetes' default {@code maxSurge}: a quarter of the replicas, rounded up. */
  private static final String DEFAULT_MAX_SURGE = "25%";

  private static final int PERCENT = 100;

  private final Map<String, Integer> autoscaled;

  KubernetesReader(YamlTree yaml, List<Container> containers, Map<String, Integer> autoscaled) {
    super(yaml, containers);
    this.autoscaled = autoscaled;
  }

  /** Reads the file's documents. */
  void read(List<Node> documents) {
    for (Node document : documents) {
      readManifest(document, null);
    }
  }

  /**
   * Kubernetes' {@code maxSurge} for {@code replicas}: a number of pods, or a percentage of the
   * replicas rounded up; at most {@link Integer#MAX_VALUE}.
   *
   * @throws IllegalArgumentException if {@code text} is not a whole number or percentage, or is
   *     negative
   */
  static int surge(String text, int replicas) {
    String t = text.trim();
    boolean percent = t.endsWith("%");
    long n = Quantities.parseWhole(percent ? t.substring(0, t.length() - 1) : t);
    if (n < 0) {
      throw new IllegalArgumentException("negative");
    }
    if (!percent) {
      return (int) Math.min(Integer.MAX_VALUE, n);
    }
    long pods;
    try {
      pods = Math.addExact(Math.multiplyExact((long) replicas, n), PERCENT - 1) / PERCENT;
    } catch (ArithmeticException tooMany) {
      pods = Integer.MAX_VALUE;
    }
    return (int) Math.min(Integer.MAX_VALUE, pods);
  }

  private void readManifest(Node document, String itemPath) {
    Map<String, YamlTree.Entry> top = yaml.mapping(document, itemPath, null);
    YamlTree.Entry kindEntry = top.get("kind");
    if (kindEntry == null) {
      throw yaml.error(
          document,
          itemPath,
          "neither a Compose file (no 'services') nor a Kubernetes" + " manifest (no 'kind')");
    }
    String kind = yaml.scalar(kindEntry).trim();
    switch (kind) {
      case "List":
        List<Node> items = yaml.list(required(top, "items", document, itemPath).value(), "items");
        for (int i = 0; i < items.size(); i++) {
          readManifest(items.get(i), "items[" + i + "]");
        }
        break;
      case "Deployment":
      case "StatefulSet":
      case "ReplicaSet":
      case "Pod":
        readWorkload(kind, top, document, itemPath);
        break;
      case "HorizontalPodAutoscaler":
        readAutoscaler(top, document, itemPath);
        break;
      default:
        break; // a Service, a ConfigMap...: nothing of what the check holds
    }
  }

  private void readAutoscaler(Map<String, YamlTree.Entry> top, Node document, String itemPath) {
    YamlTree.Entry spec = required(top, "spec", document, itemPath);
    Map<String, YamlTree.Entry> s = yaml.mapping(spec.value(), spec.path(), null);
    YamlTree.Entry ref = required(s, "scaleTargetRef", spec.value(), spec.path());
    Map<String, YamlTree.Entry> r = yaml.mapping(ref.value(), ref.path(), null);
    String target =
        yaml.scalar(required(r, "kind", ref.value(), ref.path())).trim()
            + "/"
            + yaml.scalar(required(r, "name", ref.value(), ref.path())).trim();
    autoscaled.put(target, yaml.whole(required(s, "maxReplicas", spec.value(), spec.path()), 1));
  }

  private void readWorkload(
      String kind, Map<String, YamlTree.Entry> top, Node document, String itemPath) {
    YamlTree.Entry metadata = required(top, "metadata", document, itemPath);
    Map<String, YamlTree.Entry> meta = yaml.mapping(metadata.value(), metadata.path(), null);
    String workload = yaml.scalar(required(meta, "name", metadata.value(), metadata.path())).trim();
    YamlTree.Entry specEntry = required(top, "spec", document, itemPath);
    Map<String, YamlTree.Entry> spec = yaml.mapping(specEntry.value(), specEntry.path(), null);
    int replicas = 1;
    int surge = 0;
    String surgeSpec = null;
    String surgeWhy = "";
    Map<String, YamlTree.Entry> annotations;
    Map<String, YamlTree.Entry> podSpec;
    String podPath;
    if (kind.equals("Pod")) {
      annotations = optionalMapping(meta, "annotations");
      podSpec = spec;
      podPath = specEntry.path();
    } else {
      replicas = spec.containsKey("replicas") ? yaml.whole(spec.get("replicas"), 0) : 1;
      if (kind.equals("Deployment")) {
        Map<String, YamlTree.Entry> strategy = optionalMapping(spec, "strategy");
        String type =
            strategy.containsKey("type")
                ? yaml.scalar(strategy.get("type")).trim()
                : "RollingUpdate";
        if (type.equals("RollingUpdate")) {
          Map<String, YamlTree.Entry> rolling = optionalMapping(strategy, "rollingUpdate");
          YamlTree.Entry max = rolling.get("maxSurge");
          String text = max == null ? DEFAULT_MAX_SURGE : yaml.scalar(max);
          try {
            surge = surge(text, replicas);
          } catch (IllegalArgumentException bad) {
            throw yaml.error(
                max.value(),
                max.path(),
                "expected a number of pods or a percentage, like 1"
                    + " or 25%, but was "
                    + Printable.quote(text));
          }
          surgeSpec = text;
          surgeWhy =
              "during a rollout (maxSurge "
                  + Printable.shown(text.trim())
                  + (max == null ? ", the default" : "")
                  + ")";
        }
      }
      YamlTree.Entry template = required(spec, "template", specEntry.value(), specEntry.path());
      Map<String, YamlTree.Entry> t = yaml.mapping(template.value(), template.path(), null);
      annotations = optionalMapping(optionalMapping(t, "metadata"), "annotations");
      YamlTree.Entry ps = required(t, "spec", template.value(), template.path());
      podSpec = yaml.mapping(ps.value(), ps.path(), null);
      podPath = ps.path();
    }
    Map<String, Read<String>> notes = new LinkedHashMap<>();
    for (YamlTree.Entry a : annotations.values()) {
      String v = yaml.scalar(a);
      notes.put(a.key(), new Read<>(v, v, yaml.file, YamlTree.line(a.value()), a.path()));
    }
    YamlTree.Entry list = required(podSpec, "containers", document, podPath);
    List<Node> items = yaml.list(list.value(), list.path());
    if (items.isEmpty()) {
      throw yaml.error(list.value(), list.path(), "is empty: a pod runs at least one container");
    }
    Read<String> chosen = notes.get(CONTAINER);
    if (chosen == null && items.size() > 1 && notes.containsKey(COMPARTMENTS)) {
      Read<String> c = notes.get(COMPARTMENTS);
      throw new ConfigException(
          yaml.file,
          c.line(),
          c.key(),
          "the pod has "
              + items.size()
              + " containers: say which one runs the compartments with "
              + CONTAINER);
    }
    boolean found = false;
    for (Node item : items) {
      Map<String, YamlTree.Entry> c = yaml.mapping(item, list.path() + "[]", null);
      String name = yaml.scalar(required(c, "name", item, list.path() + "[]")).trim();
      String path = list.path() + "[" + name + "]";
      c = yaml.mapping(item, path, null);
      boolean runsThem = chosen == null || chosen.value().trim().equals(name);
      found |= runsThem && chosen != null;
      Map<String, YamlTree.Entry> limits =
          optionalMapping(optionalMapping(c, "resources"), "limits");
      Read<Long> memory =
          limits.containsKey("memory")
              ? quantity(limits.get("memory"), ResourceQuantities::k8sMemory)
              : null;
      Read<Double> cpu =
          limits.containsKey("cpu")
              ? quantity(limits.get("cpu"), ResourceQuantities::k8sCpu)
              : null;
      Map<String, Read<String>> env = new LinkedHashMap<>();
      if (c.containsKey("env")) {
        YamlTree.Entry e = c.get("env");
        for (Node var : yaml.list(e.value(), e.path())) {
          Map<String, YamlTree.Entry> v = yaml.mapping(var, e.path() + "[]", null);
          String key = yaml.scalar(required(v, "name", var, e.path() + "[]")).trim();
          if (v.containsKey("value") && v.get("value").value() instanceof ScalarNode) {
            String value = ((ScalarNode) v.get("value").value()).getValue();
            env.put(
                key,
                new Read<>(
                    value,
                    value,
                    yaml.file,
                    YamlTree.line(v.get("value").value()),
                    e.path() + "[" + key + "]"));
          }
        }
      }
      List<Read<String>> command = command(c.get("command"), path + ".command");
      command.addAll(command(c.get("args"), path + ".args"));
      Map<String, Read<String>> labels = runsThem ? notes : Map.of();
      containers.add(
          new Container(
              yaml.file,
              kind,
              workload,
              name,
              path,
              YamlTree.line(item),
              false,
              replicas,
              kind.equals("Pod") ? "1 pod" : replicas(replicas),
              surgeSpec,
              surge,
              surgeWhy,
              memory,
              cpu,
              jvm(env, command),
              compartments(labels),
              budget(labels),
              setting(command, "max_connections"),
              setting(command, "superuser_reserved_connections")));
    }
    if (chosen != null && !found) {
      throw new ConfigException(
          yaml.file,
          chosen.line(),
          chosen.key(),
          "no container named " + Printable.quote(chosen.value().trim()) + " in the pod");
    }
  }
}
