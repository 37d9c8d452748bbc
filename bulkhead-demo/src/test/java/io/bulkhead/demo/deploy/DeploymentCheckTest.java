package io.bulkhead.demo.deploy;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.catchThrowable;

import io.bulkhead.config.BulkheadFile;
import io.bulkhead.config.ConfigException;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@link Deployment#check} on the shipped examples ({@code examples/deploy}), which pass, and on
 * copies of them with one deliberate mistake each, which it catches with one problem naming the
 * file, the line and the key. Each copy is made here from the shipped file by one substitution, so
 * that a copy cannot drift from the example it breaks: if the example changes, the substitution
 * fails loudly.
 */
class DeploymentCheckTest {

  static final Path EXAMPLES = Path.of("..", "examples");
  static final Path K8S = EXAMPLES.resolve("deploy").resolve("k8s");
  static final Path COMPOSE = EXAMPLES.resolve("deploy").resolve("docker-compose.yml");

  @TempDir Path dir;

  static BulkheadFile config() {
    return BulkheadFile.load(EXAMPLES.resolve("checkout-reports.yml"));
  }

  /** {@code text} with {@code from}, which it holds exactly once, replaced by {@code to}. */
  static String replaceOnce(String text, String from, String to) {
    int at = text.indexOf(from);
    assertThat(at).as("the example holds %s", from).isNotNegative();
    assertThat(text.indexOf(from, at + 1)).as("the example holds %s once", from).isNegative();
    return text.substring(0, at) + to + text.substring(at + from.length());
  }

  /** A copy of the shipped Kubernetes directory in which {@code file} has one substitution. */
  static Path k8sWith(Path dir, String file, String from, String to) throws IOException {
    Path copy = Files.createDirectories(dir.resolve("k8s"));
    try (DirectoryStream<Path> shipped = Files.newDirectoryStream(K8S)) {
      for (Path p : shipped) {
        String text = Files.readString(p);
        if (p.getFileName().toString().equals(file)) {
          text = replaceOnce(text, from, to);
        }
        Files.writeString(copy.resolve(p.getFileName()), text);
      }
    }
    return copy;
  }

  /** A copy of the shipped Compose file with one substitution. */
  static Path composeWith(Path dir, String from, String to) throws IOException {
    Path copy = dir.resolve("docker-compose.yml");
    Files.writeString(copy, replaceOnce(Files.readString(COMPOSE), from, to));
    return copy;
  }

  private static DeploymentProblem theOneProblem(DeploymentCheck check) {
    assertThat(check.problems()).as(check.summary().toString()).hasSize(1);
    DeploymentProblem p = check.problems().get(0);
    assertThat(p.toString()).doesNotContain("\n").hasSizeLessThan(600);
    return p;
  }

  private static int lineOf(Path file, String text) throws IOException {
    List<String> lines = Files.readAllLines(file);
    for (int i = 0; i < lines.size(); i++) {
      if (lines.get(i).contains(text)) {
        return i + 1;
      }
    }
    throw new AssertionError(text + " is not in " + file);
  }

  // --- the shipped examples ----------------------------------------------------------------------

  @Test
  void theShippedExamples_pass_andEveryContainerAndTheDatabaseAreRead() {
    for (Path deployment : List.of(COMPOSE, K8S)) {
      DeploymentCheck check = Deployment.load(deployment).check(config());
      assertThat(check.problems()).as(deployment.toString()).isEmpty();
      assertThat(check.warnings()).as(deployment.toString()).isEmpty();
      assertThat(check.passed()).isTrue();
      assertThat(check.summary()).hasSize(3);
    }
    DeploymentCheck k8s = Deployment.load(K8S).check(config());
    assertThat(k8s.summary().get(0))
        .contains(
            "Deployment api: runs checkout (limit 6) on 1 CPU;"
                + " 512 MiB: heap 384 MiB (-XX:MaxRAMPercentage=75.0), 128 MiB beside it, 128 MiB needed;"
                + " 5 instances at most (maxReplicas 4 of its autoscaler + 1 during a rollout (maxSurge 25%,"
                + " the default))");
    assertThat(k8s.summary().get(2))
        .endsWith(
            "StatefulSet postgres: budget 'postgres': max_connections 40"
                + " >= 37 the fleet may open: api 5 x 6 + report-worker 1 x 4 + 3 reserved");
    DeploymentCheck compose = Deployment.load(COMPOSE).check(config());
    assertThat(compose.summary().get(2))
        .endsWith(
            "service postgres: budget 'postgres': max_connections 40"
                + " >= 19 the fleet may open: api 2 x 6 + report-worker 1 x 4 + 3 reserved");
  }

  // --- one mistake each --------------------------------------------------------------------------

  @Test
  void k8s_aContainerWithoutAMemoryLimit() throws IOException {
    Path copy =
        k8sWith(dir, "api.yaml", "limits: {cpu: \"1\", memory: 512Mi}", "limits: {cpu: \"1\"}");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.file()).isEqualTo(copy.resolve("api.yaml").toString());
    assertThat(p.key()).isEqualTo("spec.template.spec.containers[api].resources.limits.memory");
    assertThat(p.line()).hasValue(lineOf(copy.resolve("api.yaml"), "- name: api"));
    assertThat(p.problem()).startsWith("no memory limit");
  }

  @Test
  void k8s_aContainerWithoutACpuLimit() throws IOException {
    Path copy =
        k8sWith(
            dir,
            "report-worker.yaml",
            "limits: {cpu: 500m, memory: 256Mi}",
            "limits: {memory: 256Mi}");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.toString())
        .isEqualTo(
            copy.resolve("report-worker.yaml")
                + ":"
                + lineOf(copy.resolve("report-worker.yaml"), "- name: report-worker")
                + ": spec.template.spec.containers[report-worker].resources.limits.cpu: no CPU limit: a runaway"
                + " thread can take every core of the node from the containers beside it");
  }

  @Test
  void compose_theDatabaseWithoutItsOlderMemLimit() throws IOException {
    Path copy = composeWith(dir, "    mem_limit: 1g ", "    ");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.key()).isEqualTo("services.postgres.deploy.resources.limits.memory");
    assertThat(p.problem()).startsWith("no memory limit");
  }

  @Test
  void k8s_aHeapThatLeavesNoRoom() throws IOException {
    Path copy = k8sWith(dir, "api.yaml", "-XX:MaxRAMPercentage=75.0", "-XX:MaxRAMPercentage=90.0");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.key()).isEqualTo("spec.template.spec.containers[api].resources.limits.memory");
    assertThat(p.line())
        .hasValue(lineOf(copy.resolve("api.yaml"), "limits: {cpu: \"1\", memory: 512Mi}"));
    assertThat(p.problem())
        .isEqualTo(
            "the heap of 461 MiB (-XX:MaxRAMPercentage=90.0 in"
                + " spec.template.spec.containers[api].env[JAVA_TOOL_OPTIONS]) leaves 51.2 MiB of the 512 MiB"
                + " limit; the JVM needs 128 MiB beside its heap (a quarter of the limit, more than 64 MiB of"
                + " metadata and code + 36 thread stacks of 1 MiB): lower the heap to 384 MiB or raise the"
                + " limit");
  }

  @Test
  void compose_anXmxAsLargeAsTheLimit() throws IOException {
    Path copy = composeWith(dir, "-Xmx384m", "-Xmx512m");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.key()).isEqualTo("services.api.deploy.resources.limits.memory");
    assertThat(p.problem())
        .startsWith(
            "the heap of 512 MiB (-Xmx512m in"
                + " services.api.environment.JAVA_TOOL_OPTIONS) is at least the 512 MiB limit;");
  }

  @Test
  void aSmallContainer_needsRoomForItsThreadStacks_notJustAQuarter() throws IOException {
    // 256 MiB at 75%: a quarter (64 MiB) is less than 64 MiB of metadata and code + 34 stacks.
    Path copy =
        k8sWith(
            dir, "report-worker.yaml", "-XX:MaxRAMPercentage=60.0", "-XX:MaxRAMPercentage=75.0");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.problem())
        .contains(
            "the JVM needs 98 MiB beside its heap (64 MiB of metadata and code"
                + " + 34 thread stacks of 1 MiB)")
        .endsWith("lower the heap to 158 MiB or raise the limit");
  }

  @Test
  void cpuBoundReports_onHalfACpu(@TempDir Path files) throws IOException {
    Path marked = files.resolve("checkout-reports.yml");
    Files.writeString(
        marked,
        replaceOnce(
            Files.readString(EXAMPLES.resolve("checkout-reports.yml")),
            "    latency: 1.5s\n",
            "    latency: 1.5s\n    cpu-bound: true\n"));
    DeploymentProblem p = theOneProblem(Deployment.load(K8S).check(BulkheadFile.load(marked)));
    assertThat(p.key())
        .isEqualTo("spec.template.spec.containers[report-worker].resources.limits.cpu");
    assertThat(p.problem())
        .isEqualTo(
            "500m runs 4 cpu-bound calls at once (reports 4) on 1 processor: 3 of"
                + " them wait for a core while holding their slots, and the quota throttles the container's other"
                + " threads with them; give it 4 CPUs or those compartments 1 slot between them");
  }

  @Test
  void anActiveProcessorCountAboveTheCpuLimit() throws IOException {
    Path copy =
        k8sWith(dir, "api.yaml", "-XX:ActiveProcessorCount=1", "-XX:ActiveProcessorCount=4");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.key()).isEqualTo("spec.template.spec.containers[api].env[JAVA_TOOL_OPTIONS]");
    assertThat(p.problem())
        .startsWith("-XX:ActiveProcessorCount=4 is above the container's CPU limit of 1");
  }

  @Test
  void k8s_anAutoscalerThatOutgrowsMaxConnections() throws IOException {
    Path copy = k8sWith(dir, "api.yaml", "maxReplicas: 4", "maxReplicas: 6");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.file()).isEqualTo(copy.resolve("postgres.yaml").toString());
    assertThat(p.key()).isEqualTo("spec.template.spec.containers[postgres].args[1]");
    assertThat(p.line()).hasValue(lineOf(copy.resolve("postgres.yaml"), "max_connections=40"));
    assertThat(p.problem())
        .isEqualTo(
            "max_connections 40 is below what the fleet may open on budget"
                + " 'postgres': api 8 x 6 + report-worker 1 x 4 + 3 reserved = 55 (api: maxReplicas 6 of its"
                + " autoscaler + 2 during a rollout (maxSurge 25%, the default); report-worker: 1 replica): raise"
                + " it, or lower the replicas or the limits");
  }

  @Test
  void compose_moreReplicasThanTheDatabaseTakes() throws IOException {
    Path copy = composeWith(dir, "replicas: 2", "replicas: 6");
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.key()).isEqualTo("services.postgres.command[2]");
    assertThat(p.problem())
        .startsWith(
            "max_connections 40 is below what the fleet may open on budget"
                + " 'postgres': api 6 x 6 + report-worker 1 x 4 + 3 reserved = 43");
  }

  @Test
  void aMaxSurgeGiven_isCountedAsGiven_alsoUnderTheAutoscaler() throws IOException {
    Path copy =
        k8sWith(
            dir,
            "api.yaml",
            "  replicas: 2\n",
            "  replicas: 2\n  strategy: {rollingUpdate: {maxSurge: 3}}\n");
    DeploymentCheck check = Deployment.load(copy).check(config());
    assertThat(check.summary().get(2))
        .endsWith(
            "max_connections 40 < 49 the fleet may open: api 7 x 6"
                + " + report-worker 1 x 4 + 3 reserved");
    assertThat(theOneProblem(check).problem())
        .contains("api: maxReplicas 4 of its autoscaler + 3 during a" + " rollout (maxSurge 3)");
  }

  @Test
  void aMisspeltCompartment_isNamedWithASuggestion() throws IOException {
    Path copy =
        k8sWith(
            dir,
            "api.yaml",
            "bulkhead.io/compartments: checkout",
            "bulkhead.io/compartments: checkuot");
    DeploymentCheck check = Deployment.load(copy).check(config());
    DeploymentProblem p = theOneProblem(check);
    assertThat(p.key()).isEqualTo("spec.template.metadata.annotations.bulkhead.io/compartments");
    assertThat(p.problem())
        .isEqualTo(
            "no compartment named 'checkuot' in ../examples/checkout-reports.yml"
                + " (did you mean 'checkout'?)");
    assertThat(check.warnings())
        .containsExactly(
            copy
                + ": compartment 'checkout' of"
                + " ../examples/checkout-reports.yml runs in no container (bulkhead.io/compartments)");
  }

  @Test
  void aDatabaseOfAnUnknownBudget_andABudgetWithoutADatabase() throws IOException {
    Path copy = composeWith(dir, "bulkhead.io/budget: postgres", "bulkhead.io/budget: postgre");
    DeploymentCheck check = Deployment.load(copy).check(config());
    assertThat(theOneProblem(check).problem())
        .isEqualTo(
            "no budget named 'postgre' in"
                + " ../examples/checkout-reports.yml (did you mean 'postgres'?)");
    assertThat(check.warnings())
        .singleElement()
        .asString()
        .contains("budget 'postgres': no database");
  }

  /**
   * Found by probing: a percentage surge on the largest autoscaler overflowed an int into a
   * negative count.
   */
  @Test
  void hugeReplicasAndSurges_countWithoutOverflow_andANegativeSurgeIsRefused() throws IOException {
    Path copy =
        k8sWith(
            dir,
            "api.yaml",
            "  replicas: 2\n",
            "  replicas: 2\n  strategy: {rollingUpdate: {maxSurge: 999999999999%}}\n");
    String huge =
        Files.readString(copy.resolve("api.yaml"))
            .replace("maxReplicas: 4", "maxReplicas: 2147483647");
    Files.writeString(copy.resolve("api.yaml"), huge);
    DeploymentProblem p = theOneProblem(Deployment.load(copy).check(config()));
    assertThat(p.problem())
        .contains(
            "api 4294967294 x 6 + report-worker 1 x 4 + 3 reserved = 25769803771 (api: maxReplicas 2147483647 of its autoscaler + 2147483647 during a rollout");
    Path negative =
        k8sWith(
            dir.resolve("negative"),
            "api.yaml",
            "  replicas: 2\n",
            "  replicas: 2\n  strategy: {rollingUpdate: {maxSurge: -1}}\n");
    assertThat(refused(negative).problem())
        .isEqualTo("expected a number of pods or a percentage, like 1 or" + " 25%, but was '-1'");
  }

  // --- bad input: one line naming the file, the line and the key (exit 2 in check)
  // ----------------

  private static ConfigException refused(Path deployment) {
    Throwable t = catchThrowable(() -> Deployment.load(deployment));
    assertThat(t).isInstanceOf(ConfigException.class);
    assertThat(t.getMessage()).doesNotContain("\n").hasSizeLessThan(400);
    return (ConfigException) t;
  }

  @Test
  void malformedQuantities_areRefused_namingFileLineKeyAndValue() throws IOException {
    ConfigException mb =
        refused(
            k8sWith(
                dir.resolve("a"),
                "api.yaml",
                "cpu: \"1\", memory: 512Mi}",
                "cpu: \"1\", memory: 512MB}"));
    assertThat(mb.getMessage())
        .endsWith(
            "api.yaml:"
                + mb.line().getAsInt()
                + ": spec.template.spec.containers[api].resources.limits.memory: expected a Kubernetes memory"
                + " quantity, like 512Mi, 1Gi, 500M or a number of bytes, but was '512MB' (did you mean 512Mi?)");
    ConfigException milli =
        refused(
            k8sWith(
                dir.resolve("b"),
                "api.yaml",
                "cpu: \"1\", memory: 512Mi}",
                "cpu: \"1\", memory: 512m}"));
    assertThat(milli.problem())
        .isEqualTo("'512m' is thousandths of a byte (m is milli): did you mean 512Mi?");
    ConfigException cpu =
        refused(k8sWith(dir.resolve("c"), "report-worker.yaml", "cpu: 500m,", "cpu: half,"));
    assertThat(cpu.key())
        .hasValue("spec.template.spec.containers[report-worker].resources.limits.cpu");
    assertThat(cpu.problem()).contains("but was 'half'");
    Path compose = composeWith(dir, "-Xmx384m", "-Xmx384mb");
    ConfigException xmx = refused(compose);
    assertThat(xmx.getMessage())
        .contains(
            "docker-compose.yml:"
                + lineOf(compose, "JAVA_TOOL_OPTIONS: -Xmx")
                + ": services.api.environment.JAVA_TOOL_OPTIONS:"
                + " -Xmx384mb: expected a JVM size, like 512m, 2g or a number of bytes, but was '384mb'");
    ConfigException max =
        refused(
            k8sWith(
                dir.resolve("d"), "postgres.yaml", "max_connections=40", "max_connections=lots"));
    assertThat(max.problem())
        .isEqualTo("max_connections must be a whole number of connections but was 'lots'");
  }

  @Test
  void wrongTypes_areRefused_namingTheKey() throws IOException {
    assertThat(
            refused(k8sWith(dir.resolve("a"), "api.yaml", "replicas: 2", "replicas: two"))
                .getMessage())
        .contains(": spec.replicas: expected a whole number but was 'two'");
    assertThat(
            refused(
                    k8sWith(
                        dir.resolve("b"),
                        "api.yaml",
                        "      containers:\n",
                        "      containers:\n        x: 1\n      c:\n"))
                .getMessage())
        .contains(": spec.template.spec.containers: expected a list");
    assertThat(
            refused(
                    composeWith(
                        dir,
                        "    deploy:\n      replicas: 2",
                        "    deploy: [2]\n    x:\n      replicas: 2"))
                .getMessage())
        .contains(": services.api.deploy: expected a mapping");
  }

  @Test
  void manyContainersInAPod_mustSayWhichRunsTheCompartments() throws IOException {
    String sidecar =
        "      containers:\n        - name: proxy\n          image: envoy\n"
            + "          resources: {limits: {cpu: 100m, memory: 64Mi}}\n";
    Path copy = k8sWith(dir, "api.yaml", "      containers:\n", sidecar);
    assertThat(refused(copy).problem())
        .isEqualTo(
            "the pod has 2 containers: say which one runs the"
                + " compartments with bulkhead.io/container");
    Path named = k8sWith(dir.resolve("named"), "api.yaml", "      containers:\n", sidecar);
    String text = Files.readString(named.resolve("api.yaml"));
    Files.writeString(
        named.resolve("api.yaml"),
        replaceOnce(
            text,
            "        bulkhead.io/compartments: checkout",
            "        bulkhead.io/container: api\n        bulkhead.io/compartments: checkout"));
    assertThat(Deployment.load(named).check(config()).problems()).isEmpty();
  }

  @Test
  void hostileFiles_areRefusedInBoundedMemory() throws IOException {
    Path huge = dir.resolve("huge.yaml");
    Files.writeString(huge, "kind: Pod\n# " + "x".repeat(BulkheadFile.MAX_FILE_BYTES) + "\n");
    assertThat(refused(huge).problem()).startsWith("is larger than 1048576 bytes");
    Path deep = dir.resolve("deep.yaml");
    Files.writeString(deep, "kind: Pod\nspec: " + "[".repeat(10_000) + "]".repeat(10_000) + "\n");
    assertThat(refused(deep).problem()).startsWith("collections nested more than 32 deep");
    Path neither = dir.resolve("neither.yaml");
    Files.writeString(neither, "name: x\n");
    assertThat(refused(neither).getMessage())
        .endsWith(
            "neither.yaml:1: neither a Compose file (no"
                + " 'services') nor a Kubernetes manifest (no 'kind')");
    Path bomb = dir.resolve("bomb.yaml");
    StringBuilder sb = new StringBuilder("a: &a [x, x]\n");
    for (int i = 0; i < 60; i++) {
      sb.append("b")
          .append(i)
          .append(": &b")
          .append(i)
          .append(" [*")
          .append(i == 0 ? "a" : "b" + (i - 1))
          .append(", *")
          .append(i == 0 ? "a" : "b" + (i - 1))
          .append("]\n");
    }
    Files.writeString(bomb, sb.toString());
    assertThat(refused(bomb).problem()).startsWith("invalid YAML");
    Path many = Files.createDirectories(dir.resolve("many"));
    for (int i = 0; i <= Deployment.MAX_FILES; i++) {
      Files.writeString(many.resolve("m" + i + ".yaml"), "kind: Service\n");
    }
    assertThat(refused(many).problem()).startsWith("holds more than 64 manifests");
    Path empty = Files.createDirectories(dir.resolve("empty"));
    assertThat(refused(empty).problem()).isEqualTo("is a directory without .yaml or .yml files");
    assertThat(refused(dir.resolve("missing.yaml")).problem()).isEqualTo("no such file");
  }

  // --- the quantities, read as each tool reads them ----------------------------------------------

  @Test
  void quantities() {
    assertThat(ResourceQuantities.k8sMemory("512Mi")).isEqualTo(512L << 20);
    assertThat(ResourceQuantities.k8sMemory("1Gi")).isEqualTo(1L << 30);
    assertThat(ResourceQuantities.k8sMemory("1.5Gi")).isEqualTo(3L << 29);
    assertThat(ResourceQuantities.k8sMemory("500M")).isEqualTo(500_000_000L);
    assertThat(ResourceQuantities.k8sMemory("1G")).isEqualTo(1_000_000_000L);
    assertThat(ResourceQuantities.k8sMemory("134217728")).isEqualTo(134_217_728L);
    assertThat(ResourceQuantities.k8sCpu("500m")).isEqualTo(0.5);
    assertThat(ResourceQuantities.k8sCpu("1.5")).isEqualTo(1.5);
    assertThat(ResourceQuantities.k8sCpu("2")).isEqualTo(2.0);
    assertThat(ResourceQuantities.dockerBytes("512M")).isEqualTo(512L << 20);
    assertThat(ResourceQuantities.dockerBytes("512m")).isEqualTo(512L << 20);
    assertThat(ResourceQuantities.dockerBytes("1g")).isEqualTo(1L << 30);
    assertThat(ResourceQuantities.dockerBytes("1GB")).isEqualTo(1L << 30);
    assertThat(ResourceQuantities.dockerCpus("0.5")).isEqualTo(0.5);
    assertThat(ResourceQuantities.jvmSize("384m")).isEqualTo(384L << 20);
    assertThat(ResourceQuantities.jvmSize("2G")).isEqualTo(2L << 30);
    for (String bad :
        List.of("", "Mi", "-1Gi", "0", "512 Mi", "512mi", "1e400", "0x10", "1".repeat(40))) {
      assertThat(catchThrowable(() -> ResourceQuantities.k8sMemory(bad)))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
    for (String bad : List.of("", "0", "0m", "-1", "1.5m.", "one", "1 cpu", "Infinity", "NaN")) {
      assertThat(catchThrowable(() -> ResourceQuantities.k8sCpu(bad)))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
    for (String bad : List.of("", "0", "1.5g", "512mb", "99999999999999999999g")) {
      assertThat(catchThrowable(() -> ResourceQuantities.jvmSize(bad)))
          .as(bad)
          .isInstanceOf(IllegalArgumentException.class);
    }
  }
}
