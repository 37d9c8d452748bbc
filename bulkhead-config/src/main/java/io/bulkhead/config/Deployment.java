package io.bulkhead.config;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import org.snakeyaml.engine.v2.nodes.MappingNode;
import org.snakeyaml.engine.v2.nodes.Node;
import org.snakeyaml.engine.v2.nodes.ScalarNode;

/**
 * One deployment of the services a bulkhead file sizes: a Docker Compose file, or Kubernetes
 * manifests (a file of one or more documents, or a directory of them). {@link #check} holds it
 * against the file: every container has memory and CPU limits, the JVM's heap leaves room below the
 * memory limit, CPU-bound compartments do not run more calls at once than the container has CPUs,
 * and the database's {@code max_connections} holds every pool of every replica.
 *
 * <p>What the check reads, and nothing else (other keys are the tools' business):
 *
 * <ul>
 *   <li>Compose: {@code services.NAME} with {@code deploy.replicas} (or {@code scale}), {@code
 *       deploy.resources.limits.memory} and {@code .cpus} (or the older {@code mem_limit} and
 *       {@code cpus}), {@code deploy.update_config} ({@code order: start-first} starts {@code
 *       parallelism} new containers before stopping old ones), {@code environment}, {@code
 *       command}, {@code labels}.
 *   <li>Kubernetes: {@code Deployment}, {@code StatefulSet}, {@code ReplicaSet} and {@code Pod}
 *       documents with their {@code replicas}, the rolling update's {@code maxSurge} (extra pods
 *       during a rollout, 25% by default), the containers' {@code resources.limits.memory} and
 *       {@code .cpu}, {@code env}, {@code command} and {@code args}; a {@code
 *       HorizontalPodAutoscaler}'s {@code maxReplicas} replaces the replicas of the workload it
 *       scales.
 * </ul>
 *
 * <p>Two names tie the deployment to the bulkhead file, as Compose labels or Kubernetes
 * pod-template annotations: {@code bulkhead.io/compartments: checkout, search} on the container
 * that runs those compartments (a pod of several containers says which one with {@code
 * bulkhead.io/container}), and {@code bulkhead.io/budget: postgres} on the database server whose
 * command sets {@code max_connections} (and {@code superuser_reserved_connections}) with {@code
 * -c}.
 *
 * <p>The JVM's options are read where the JVM reads them, later ones winning: the {@code
 * JAVA_TOOL_OPTIONS} and {@code JDK_JAVA_OPTIONS} environment variables, then the command.
 *
 * <p>{@link #load} fails with a {@link ConfigException} naming the file, the line and the key for a
 * file it cannot read, malformed YAML, a wrong type or a malformed quantity ({@code 512MB}, {@code
 * 500m} of memory); problems of the deployment itself are {@link #check}'s answer. The same bounds
 * as the bulkhead file apply: at most {@link BulkheadFile#MAX_FILE_BYTES} a file, at most {@link
 * #MAX_FILES} files in a directory.
 *
 * <p>This class is immutable.
 */
public final class Deployment {

  /**
   * The most manifests {@link #load} reads from one directory. A service's manifests are a handful;
   * the bound keeps a wrong directory (a home directory, {@code /}) from being read file by file.
   */
  public static final int MAX_FILES = 64;

  static final String COMPARTMENTS = "bulkhead.io/compartments";
  static final String CONTAINER = "bulkhead.io/container";
  static final String BUDGET = "bulkhead.io/budget";

  /** The environment variables the JVM itself reads options from, in the order it applies them. */
  static final List<String> JVM_OPTION_VARIABLES = List.of("JAVA_TOOL_OPTIONS", "JDK_JAVA_OPTIONS");

  /** Kubernetes' default {@code maxSurge}: a quarter of the replicas, rounded up. */
  private static final String DEFAULT_MAX_SURGE = "25%";

  private static final int PERCENT = 100;

  private final String name;
  private final List<String> files;
  private final List<Container> containers;

  private Deployment(String name, List<String> files, List<Container> containers) {
    this.name = name;
    this.files = List.copyOf(files);
    this.containers = List.copyOf(containers);
  }

  /**
   * Reads a Compose file, a file of Kubernetes manifests, or a directory of them (its {@code .yaml}
   * and {@code .yml} files, in name order, not its subdirectories), named in errors as {@code path}
   * was written.
   *
   * @throws ConfigException if a file cannot be read, is not valid YAML, is neither Compose nor
   *     Kubernetes, or holds a value of the wrong type or a malformed quantity
   */
  public static Deployment load(Path path) {
    Objects.requireNonNull(path, "path");
    String name = path.toString();
    List<Path> paths = new ArrayList<>();
    if (Files.isDirectory(path)) {
      try (DirectoryStream<Path> dir = Files.newDirectoryStream(path, "*.{yaml,yml}")) {
        for (Path p : dir) {
          if (Files.isRegularFile(p)) {
            if (paths.size() == MAX_FILES) {
              throw new ConfigException(
                  name,
                  0,
                  null,
                  "holds more than "
                      + MAX_FILES
                      + " manifests: name the directory of one service's deployment");
            }
            paths.add(p);
          }
        }
      } catch (NoSuchFileException e) {
        throw new ConfigException(name, 0, null, "no such directory", e);
      } catch (IOException e) {
        throw new ConfigException(name, 0, null, "cannot be read: " + e, e);
      }
      if (paths.isEmpty()) {
        throw new ConfigException(name, 0, null, "is a directory without .yaml or .yml files");
      }
      paths.sort(null);
    } else {
      paths.add(path);
    }
    List<String> files = new ArrayList<>();
    List<Container> containers = new ArrayList<>();
    Map<String, Integer> autoscaled = new LinkedHashMap<>();
    for (Path p : paths) {
      String file = p.toString();
      files.add(file);
      YamlTree yaml =
          new YamlTree(
              file,
              YamlTree.MAX_MANIFEST_NESTING,
              "a Kubernetes manifest nests about a dozen deep");
      new FileReader(yaml, containers, autoscaled).read(YamlTree.read(p, file));
    }
    List<Container> scaled = new ArrayList<>();
    for (Container c : containers) {
      Integer max = autoscaled.get(c.kind + "/" + c.workload);
      scaled.add(max == null ? c : c.autoscaled(max));
    }
    return new Deployment(name, files, scaled);
  }

  /** The path the deployment was loaded from, as it was named. */
  public String name() {
    return name;
  }

  /** The files read, in the order read. */
  public List<String> files() {
    return files;
  }

  /**
   * Holds this deployment against the bulkhead file whose compartments it runs.
   *
   * @see DeploymentCheck for the rules and their thresholds
   */
  public DeploymentCheck check(BulkheadFile config) {
    return DeploymentCheck.of(Objects.requireNonNull(config, "config"), this);
  }

  List<Container> containers() {
    return containers;
  }

  @Override
  public String toString() {
    return "Deployment{" + name + ", files=" + files + "}";
  }

  // ------------------------------------------------------------------------------------------------

  /** A value read from a file, with where it was read. */
  record Read<T>(T value, String text, String file, int line, String key) {}

  /** One container as the deployment runs it. */
  static final class Container {
    final String file;
    final String kind; // Deployment, StatefulSet, ReplicaSet, Pod, or service (Compose)
    final String workload; // the service or workload name
    final String name; // the container's name
    final String path; // the key path of the container in its document
    final int line;
    final boolean compose;
    final int replicas;
    final String replicasWhy; // "2 replicas"
    final String surgeSpec; // Kubernetes' maxSurge as given or defaulted; null: no surge
    final int surge; // extra instances during a rollout
    final String surgeWhy; // "during a rollout (maxSurge 25%, the default)"
    final String instancesWhy; // how replicas and surge were found, for the fleet line
    final Read<Long> memory; // null: no limit
    final Read<Double> cpu; // null: no limit
    final List<Read<String>> jvmOptions;
    final JvmOptions jvm;
    final Read<List<String>> compartments; // null: runs none that the file names
    final Read<String> budget; // null: not a database of a budget
    final Read<Integer> maxConnections; // null: not set
    final Read<Integer> reserved; // null: not set

    Container(
        String file,
        String kind,
        String workload,
        String name,
        String path,
        int line,
        boolean compose,
        int replicas,
        String replicasWhy,
        String surgeSpec,
        int surge,
        String surgeWhy,
        Read<Long> memory,
        Read<Double> cpu,
        List<Read<String>> jvmOptions,
        Read<List<String>> compartments,
        Read<String> budget,
        Read<Integer> maxConnections,
        Read<Integer> reserved) {
      this.file = file;
      this.kind = kind;
      this.workload = workload;
      this.name = name;
      this.path = path;
      this.line = line;
      this.compose = compose;
      this.replicas = replicas;
      this.replicasWhy = replicasWhy;
      this.surgeSpec = surgeSpec;
      this.surge = surge;
      this.surgeWhy = surgeWhy;
      this.instancesWhy = replicasWhy + (surge > 0 ? " + " + surge + " " + surgeWhy : "");
      this.memory = memory;
      this.cpu = cpu;
      this.jvmOptions = List.copyOf(jvmOptions);
      this.jvm = JvmOptions.parse(jvmOptions);
      this.compartments = compartments;
      this.budget = budget;
      this.maxConnections = maxConnections;
      this.reserved = reserved;
    }

    /** The most instances that run at once: the replicas and, during a rollout, the surge. */
    long instances() {
      return (long) replicas + surge;
    }

    /** The key a memory limit is set at, for a container without one. */
    String memoryKey() {
      return compose ? path + ".deploy.resources.limits.memory" : path + ".resources.limits.memory";
    }

    /** The key a CPU limit is set at, for a container without one. */
    String cpuKey() {
      return compose ? path + ".deploy.resources.limits.cpus" : path + ".resources.limits.cpu";
    }

    /**
     * The container as its autoscaler runs it at most: {@code maxReplicas}, and the surge of a
     * rollout computed again from them.
     */
    Container autoscaled(int maxReplicas) {
      int scaledSurge = surgeSpec == null ? 0 : Surge.of(surgeSpec, maxReplicas);
      return new Container(
          file,
          kind,
          workload,
          name,
          path,
          line,
          compose,
          maxReplicas,
          "maxReplicas " + maxReplicas + " of its autoscaler",
          surgeSpec,
          scaledSurge,
          surgeWhy,
          memory,
          cpu,
          jvmOptions,
          compartments,
          budget,
          maxConnections,
          reserved);
    }
  }

  /** Kubernetes' {@code maxSurge}: a number of pods, or a percentage of the replicas rounded up. */
  private static final class Surge {
    /**
     * The extra pods, at most {@link Integer#MAX_VALUE}.
     *
     * @throws IllegalArgumentException if {@code text} is not a whole number or percentage, or is
     *     negative
     */
    static int of(String text, int replicas) {
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
  }

  /** Reads one file into containers; every check throws at the first problem with its position. */
  private static final class FileReader {

    private final YamlTree yaml;
    private final List<Container> containers;
    private final Map<String, Integer> autoscaled;

    FileReader(YamlTree yaml, List<Container> containers, Map<String, Integer> autoscaled) {
      this.yaml = yaml;
      this.containers = containers;
      this.autoscaled = autoscaled;
    }

    void read(String text) {
      if (text.length() > BulkheadFile.MAX_FILE_BYTES) {
        throw YamlTree.tooLarge(yaml.file);
      }
      List<Node> documents = yaml.composeAll(text);
      if (documents.isEmpty()) {
        throw new ConfigException(
            yaml.file,
            0,
            null,
            "the file is empty: expected a Compose file (services) or Kubernetes manifests (kind)");
      }
      Node first = documents.get(0);
      if (documents.size() == 1
          && first instanceof MappingNode
          && yaml.mapping(first, null, null).containsKey("services")) {
        readCompose(yaml.mapping(first, null, null));
        return;
      }
      for (Node document : documents) {
        readManifest(document, null);
      }
    }

    // --- Compose
    // ----------------------------------------------------------------------------------

    private void readCompose(Map<String, YamlTree.Entry> top) {
      for (YamlTree.Entry s :
          yaml.mapping(top.get("services").value(), "services", null).values()) {
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
          if (kv.value() instanceof ScalarNode
              && !YamlTree.describe(kv.value()).equals("nothing")) {
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

    private List<Read<String>> command(YamlTree.Entry e, String path) {
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

    private String scalarItem(Node item, String path) {
      if (!(item instanceof ScalarNode) || YamlTree.describe(item).equals("nothing")) {
        throw yaml.error(
            item, path, "expected a single value in the list but found " + YamlTree.describe(item));
      }
      return ((ScalarNode) item).getValue();
    }

    // --- Kubernetes
    // -------------------------------------------------------------------------------

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

    private static String child(String parent, String key) {
      return parent == null ? key : parent + "." + key;
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
      String workload =
          yaml.scalar(required(meta, "name", metadata.value(), metadata.path())).trim();
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
              surge = Surge.of(text, replicas);
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

    // --- both
    // -------------------------------------------------------------------------------------

    private static String replicas(int n) {
      return n + " replica" + (n == 1 ? "" : "s");
    }

    private static List<Read<String>> jvm(
        Map<String, Read<String>> env, List<Read<String>> command) {
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

    private static Read<List<String>> compartments(Map<String, Read<String>> labels) {
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

    private static Read<String> budget(Map<String, Read<String>> labels) {
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
    private Read<Integer> setting(List<Read<String>> command, String setting) {
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
                setting
                    + " must be a whole number of connections but was "
                    + Printable.quote(value));
          }
          found = new Read<>((int) n, value, at.file(), at.line(), at.key());
        }
      }
      return found;
    }

    private <T> Read<T> quantity(YamlTree.Entry e, java.util.function.Function<String, T> parser) {
      String text = yaml.scalar(e);
      try {
        return new Read<>(
            parser.apply(text), text.trim(), yaml.file, YamlTree.line(e.value()), e.path());
      } catch (IllegalArgumentException bad) {
        throw yaml.error(e.value(), e.path(), bad.getMessage());
      }
    }

    private Map<String, YamlTree.Entry> optionalMapping(
        Map<String, YamlTree.Entry> parent, String key) {
      YamlTree.Entry e = parent.get(key);
      if (e == null || YamlTree.describe(e.value()).equals("nothing")) {
        return Map.of();
      }
      return yaml.mapping(e.value(), e.path(), null);
    }

    private YamlTree.Entry required(
        Map<String, YamlTree.Entry> parent, String key, Node at, String path) {
      YamlTree.Entry e = parent.get(key);
      if (e == null) {
        throw yaml.error(at, child(path, key), "missing");
      }
      return e;
    }
  }
}
