package io.bulkhead.jdbc.demo;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.awaitility.Awaitility.await;

import io.bulkhead.jdbc.PostgresTestSupport;
import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import org.junit.jupiter.api.Test;

/** The command line of {@code demo db}: bad input gets one line and a non-zero exit code. */
class DemoDbTest {

  private final ByteArrayOutputStream out = new ByteArrayOutputStream();
  private final ByteArrayOutputStream err = new ByteArrayOutputStream();

  private int run(String... args) {
    return DemoDb.run(args, new PrintStream(out, true, StandardCharsets.UTF_8),
        new PrintStream(err, true, StandardCharsets.UTF_8));
  }

  private String err() {
    return err.toString(StandardCharsets.UTF_8);
  }

  @Test
  void badOptionsGetOneLineAndExitCode2() {
    assertThat(run("--nope")).isEqualTo(2);
    assertThat(err()).isEqualTo("demo db: unknown option '--nope'; options are --degraded,"
        + " --duration, --healthy, --jdbc-url, --json" + System.lineSeparator());
    err.reset();
    assertThat(run("--degraded", "30x")).isEqualTo(2);
    assertThat(err()).isEqualTo("demo db: --degraded must be a duration such as 30s, 1.5s, 500ms"
        + " or 2m but was '30x'" + System.lineSeparator());
    err.reset();
    assertThat(run("--duration", "0s")).isEqualTo(2);
    assertThat(err()).isEqualTo("demo db: degraded phase must be positive but was PT0S"
        + System.lineSeparator());
    err.reset();
    assertThat(run("--jdbc-url")).isEqualTo(2);
    assertThat(err()).isEqualTo("demo db: --jdbc-url needs a value" + System.lineSeparator());
    assertThat(out.size()).isZero();
  }

  @Test
  void aDatabaseThatCannotBeUsedGetsOneLineAndExitCode1() throws Exception {
    assertThat(run("--jdbc-url", "jdbc:mysql://127.0.0.1/test")).isEqualTo(1);
    assertThat(err()).isEqualTo("demo db: --jdbc-url must be a PostgreSQL JDBC URL starting with"
        + " 'jdbc:postgresql:' but was 'jdbc:mysql://127.0.0.1/test'" + System.lineSeparator());
    err.reset();

    int closedPort;
    try (ServerSocket s = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      closedPort = s.getLocalPort();
    }
    String url = "jdbc:postgresql://127.0.0.1:" + closedPort + "/test";
    assertThat(run("--jdbc-url", url)).isEqualTo(1);
    assertThat(err()).startsWith("demo db: cannot use the PostgreSQL server at " + url + ": ")
        .contains("refused").endsWith(System.lineSeparator());
    assertThat(err().lines()).hasSize(1);
  }

  @Test
  void printsTheJsonOfAShortRun() {
    assertThat(run("--json", "--healthy", "1s", "--duration", "2s", "--degraded", "1.5s"))
        .as(err()).isEqualTo(0);
    assertThat(out.toString(StandardCharsets.UTF_8).strip()).matches(CheckoutVsReportsTest.JSON);
    assertThat(err()).contains("demo db: using PostgreSQL");
    Matcher run = Pattern.compile("connections named (demo-db-[0-9a-f]+)-shared").matcher(err());
    assertThat(run.find()).as(err()).isTrue();
    await().atMost(PostgresTestSupport.SERVER_SETTLES)
        .until(() -> PostgresTestSupport.backends(run.group(1)), n -> n == 0);
  }

  @Test
  void parsesDurations() {
    assertThat(DemoDb.parseDuration("--x", "1.5s")).isEqualTo(Duration.ofMillis(1500));
    assertThat(DemoDb.parseDuration("--x", "500ms")).isEqualTo(Duration.ofMillis(500));
    assertThat(DemoDb.parseDuration("--x", "2m")).isEqualTo(Duration.ofMinutes(2));
    assertThat(DemoDb.parseDuration("--x", "PT30S")).isEqualTo(Duration.ofSeconds(30));
    assertThatThrownBy(() -> DemoDb.parseDuration("--x", "-1s"))
        .hasMessage("--x must be a duration such as 30s, 1.5s, 500ms or 2m but was '-1s'");
  }
}
