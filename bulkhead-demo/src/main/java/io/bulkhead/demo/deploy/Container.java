package io.bulkhead.demo.deploy;

import java.util.List;

/** One container as the deployment runs it: what the check reads of it, each value with where. */
final class Container {
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
    int scaledSurge = surgeSpec == null ? 0 : KubernetesReader.surge(surgeSpec, maxReplicas);
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
