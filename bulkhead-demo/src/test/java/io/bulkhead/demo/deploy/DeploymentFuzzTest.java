package io.bulkhead.demo.deploy;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.config.ConfigException;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import net.jqwik.api.Arbitraries;
import net.jqwik.api.Arbitrary;
import net.jqwik.api.ForAll;
import net.jqwik.api.Property;
import net.jqwik.api.Provide;

/**
 * The shipped deployment examples with one value replaced by an edge value (a wrong type, a number
 * at the edge of {@code long}, a malformed quantity, a control character, a collection): every
 * variant is refused with one {@link ConfigException} line, or checked with every problem on one
 * line. Never an other exception. The try count keeps the class to seconds on a loaded machine.
 */
class DeploymentFuzzTest {

  private static final List<String> EDGES =
      List.of(
          "0",
          "-1",
          "1.5",
          "2147483648",
          "9223372036854775807",
          "9223372036854775808",
          "99999999999999999999999999999999",
          "1e308",
          ".inf",
          "NaN",
          "~",
          "null",
          "true",
          "\"\"",
          "[]",
          "{}",
          "[1, [2]]",
          "{a: {b: c}}",
          "512MB",
          "512m",
          "512Mi",
          "1Gi",
          "500m",
          "0m",
          "-Xmx",
          "-Xmx0",
          "-Xmx99999999999999999999g",
          "-XX:MaxRAMPercentage=101",
          "-XX:ActiveProcessorCount=0",
          "max_connections=-1",
          "\"\\e[31m\"",
          "\"a\\nb\"",
          "\"\\u202e\"",
          "*a",
          "&a x",
          "!!binary AAAA",
          "25%",
          "999999999999%",
          "Recreate",
          "start-first",
          "List",
          "HorizontalPodAutoscaler",
          "Pod",
          "checkout, reports, nope");

  /** A plain value after a colon or a dash: what one substitution replaces. */
  private static final Pattern VALUE = Pattern.compile("(?<=: |- )[^\\s{}\\[\\],#][^,}\\]\\n#]*");

  private static final List<Path> SHIPPED =
      List.of(
          DeploymentCheckTest.COMPOSE,
          DeploymentCheckTest.K8S.resolve("api.yaml"),
          DeploymentCheckTest.K8S.resolve("report-worker.yaml"),
          DeploymentCheckTest.K8S.resolve("postgres.yaml"));

  @Property(tries = 300)
  void oneValueReplaced_isCheckedOrRefusedWithOneLine(@ForAll("variants") String yaml)
      throws IOException {
    Path dir = Files.createTempDirectory("deploy-fuzz");
    Path file = dir.resolve("deploy.yaml");
    try {
      Files.writeString(file, yaml);
      DeploymentCheck check;
      try {
        check = Deployment.load(file).check(DeploymentCheckTest.config());
      } catch (ConfigException e) {
        assertOneLine(e.getMessage());
        return;
      }
      for (DeploymentProblem p : check.problems()) {
        assertOneLine(p.toString());
      }
      for (String line : check.summary()) {
        assertThat(line).doesNotContain("\n");
      }
    } finally {
      Files.deleteIfExists(file);
      Files.delete(dir);
    }
  }

  private static void assertOneLine(String message) {
    assertThat(message).doesNotContain("\n").hasSizeLessThan(1_000);
    message.codePoints().forEach(c -> assertThat(Character.isISOControl(c)).as(message).isFalse());
  }

  @Provide
  Arbitrary<String> variants() throws IOException {
    List<String> texts = new ArrayList<>();
    for (Path p : SHIPPED) {
      texts.add(Files.readString(p));
    }
    return Arbitraries.of(texts)
        .flatMap(
            text -> {
              List<int[]> spans = new ArrayList<>();
              Matcher m = VALUE.matcher(text);
              while (m.find()) {
                spans.add(new int[] {m.start(), m.end()});
              }
              return Arbitraries.of(spans)
                  .flatMap(
                      span ->
                          Arbitraries.of(EDGES)
                              .map(
                                  edge ->
                                      text.substring(0, span[0]) + edge + text.substring(span[1])));
            });
  }
}
