package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.demo.CliTest.Run;
import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * {@code check FILE --deploy PATH}: the shipped deployments of the checkout/reports split pass
 * (exit 0), a copy with one deliberate mistake prints the table and one problem line (exit 1), and
 * a deployment that cannot be read is one line on standard error (exit 2), as for the bulkhead file
 * itself.
 */
class DeployCheckCliTest {

  private static final Path EXAMPLES = Path.of("..", "examples");
  private static final String FILE = EXAMPLES.resolve("checkout-reports.yml").toString();
  private static final Path K8S = EXAMPLES.resolve("deploy").resolve("k8s");
  private static final String COMPOSE =
      EXAMPLES.resolve("deploy").resolve("docker-compose.yml").toString();

  @TempDir Path dir;

  /**
   * A copy of the shipped Kubernetes directory whose {@code file} has {@code from}, once, as {@code
   * to}.
   */
  private Path k8sWith(String file, String from, String to) throws IOException {
    Path copy = Files.createDirectories(dir.resolve("k8s"));
    try (DirectoryStream<Path> shipped = Files.newDirectoryStream(K8S)) {
      for (Path p : shipped) {
        String text = Files.readString(p);
        if (p.getFileName().toString().equals(file)) {
          assertThat(text.split(java.util.regex.Pattern.quote(from), -1)).as(from).hasSize(2);
          text = text.replace(from, to);
        }
        Files.writeString(copy.resolve(p.getFileName()), text);
      }
    }
    return copy;
  }

  @Test
  void theShippedDeployments_pass() {
    Run r = CliTest.run("check", FILE, "--deploy", COMPOSE, "--deploy", K8S + "/");
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(CheckCommand.OK);
    assertThat(r.err()).isEmpty();
    assertThat(r.out())
        .startsWith(FILE + ": 2 compartments, 1 budget\n")
        .contains(
            "\nbudget 'postgres': checkout 6 + reports 4 = 10, within its capacity of 10\n\n"
                + COMPOSE
                + ": service api: runs checkout (limit 6) on 1 CPU;")
        .contains(
            K8S.resolve("postgres.yaml")
                + ": StatefulSet postgres: budget 'postgres':"
                + " max_connections 40 >= 37 the fleet may open: api 5 x 6 + report-worker 1 x 4 + 3 reserved\n")
        .doesNotContain("warning")
        .doesNotContain("no memory limit");
    assertThat(r.out().lines().filter(l -> l.startsWith(COMPOSE + ": ") || l.startsWith(K8S + "/")))
        .hasSize(6);
  }

  @Test
  void oneDeliberateMistake_isOneLineNamingFileLineAndKey_andExitsOne() throws IOException {
    Path copy = k8sWith("api.yaml", "-XX:MaxRAMPercentage=75.0", "-XX:MaxRAMPercentage=90.0");
    Run r = CliTest.run("check", FILE, "--deploy", copy.toString());
    assertThat(r.exit()).as(r.out() + r.err()).isEqualTo(CheckCommand.OVER_SUBSCRIBED);
    assertThat(r.err()).isEmpty();
    String api = copy.resolve("api.yaml").toString();
    int line =
        Files.readAllLines(copy.resolve("api.yaml"))
                .indexOf("            limits: {cpu: \"1\", memory: 512Mi}")
            + 1;
    assertThat(r.out())
        .endsWith(
            "\n"
                + api
                + ":"
                + line
                + ": spec.template.spec.containers[api].resources.limits.memory: the heap of 461 MiB"
                + " (-XX:MaxRAMPercentage=90.0 in spec.template.spec.containers[api].env[JAVA_TOOL_OPTIONS]) leaves"
                + " 51.2 MiB of the 512 MiB limit; the JVM needs 128 MiB beside its heap (a quarter of the limit,"
                + " more than 64 MiB of metadata and code + 36 thread stacks of 1 MiB): lower the heap to 384 MiB"
                + " or raise the limit\n");
  }

  @Test
  void anUnreadableDeployment_isOneLineOnStandardError_andExitsTwo() throws IOException {
    Path copy = k8sWith("report-worker.yaml", "cpu: 500m,", "cpu: half,");
    Run r = CliTest.run("check", FILE, "--deploy", copy.toString());
    assertThat(r.exit()).isEqualTo(CheckCommand.INVALID);
    assertThat(r.out()).isEmpty();
    assertThat(r.err().lines())
        .singleElement()
        .asString()
        .startsWith(copy.resolve("report-worker.yaml") + ":")
        .endsWith(
            ": spec.template.spec.containers[report-worker].resources.limits.cpu: expected a"
                + " Kubernetes CPU quantity, like 500m, 1 or 1.5, but was 'half'");
    Run missing = CliTest.run("check", FILE, "--deploy", dir.resolve("nowhere").toString());
    assertThat(missing.exit()).isEqualTo(CheckCommand.INVALID);
    assertThat(missing.err()).isEqualTo(dir.resolve("nowhere") + ": no such file\n");
  }
}
