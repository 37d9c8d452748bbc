package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import java.io.IOException;
import java.net.InetAddress;
import java.net.ServerSocket;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;

/**
 * {@code demo fleet} with a short run: the upstream's own count never exceeds the limit, the kill
 * happened while the killed app had calls at the upstream, its slots came back within the lease TTL
 * plus slack, and nothing is left behind (no app JVM, no redis-server of the run's own). Pointed at
 * a port where no Redis listens, the run starts its own redis-server, so it shares no compartment
 * with anything else on this machine's Redis. Latencies are not asserted: on a shared two-core
 * machine they are whatever the neighbours make them.
 */
class FleetCommandTest {

  private static final int LIMIT = 10;
  private static final Duration LEASE_TTL = Duration.ofSeconds(3);

  private static final Duration DELAY = Duration.ofSeconds(1);

  /**
   * A dead app's slots come back one lease TTL plus its longest call (twice the upstream's delay)
   * after its last sync; a survivor's next sync then takes them, and its calls reach the upstream.
   * That second part is bounded by the fleet's rebalance interval (1 s) and a loopback call.
   */
  private static final Duration RECLAIM_BOUND =
      LEASE_TTL.plus(DELAY.multipliedBy(2)).plusSeconds(2);

  @AfterEach
  void nothingLeftBehind() {
    assertThat(childJvms()).as("app processes left running").isEmpty();
  }

  @Test
  void theUpstreamNeverSeesMoreThanTheLimitAndTheKilledAppsSlotsComeBack() throws IOException {
    CliTest.Run r =
        CliTest.run(
            "demo",
            "fleet",
            "--json",
            "--redis",
            "redis://127.0.0.1:" + portWhereNothingListens(),
            "--lease-ttl",
            LEASE_TTL.toSeconds() + "s",
            "--delay",
            "1s",
            "--kill-after",
            "3s",
            "--duration",
            "12s",
            "--limit",
            Integer.toString(LIMIT));
    assertThat(r.exit()).as(r.err()).isZero();
    JsonNode result = new ObjectMapper().readTree(r.out());

    assertThat(result.get("own_redis").asBoolean()).as(r.err()).isTrue();
    int maxConcurrency = result.get("upstream").get("max_concurrency").asInt();
    assertThat(maxConcurrency)
        .as("the upstream's own maximum, " + r.err())
        .isPositive()
        .isLessThanOrEqualTo(LIMIT);

    JsonNode kill = result.get("kill");
    List<Long> pids = new ArrayList<>();
    result.get("app_pids").forEach(p -> pids.add(p.asLong()));
    assertThat(pids).hasSize(FleetRun.APPS).contains(kill.get("pid").asLong());
    assertThat(kill.get("calls_at_upstream").asInt())
        .as("the killed app held calls, " + r.err())
        .isPositive();

    JsonNode reclaim = result.get("reclaim");
    assertThat(reclaim.get("measured_by").asText()).isEqualTo("upstream");
    assertThat(reclaim.get("first_slot_ms").isNumber()).as(r.out()).isTrue();
    assertThat(reclaim.get("first_slot_ms").asDouble())
        .as(r.out())
        .isPositive()
        .isLessThanOrEqualTo(RECLAIM_BOUND.toMillis());

    assertThat(result.get("chats").get("answered").asInt()).isPositive();
    assertThat(result.get("login").get("answered").asInt()).isPositive();

    for (long pid : pids) {
      assertThat(ProcessHandle.of(pid).map(ProcessHandle::isAlive).orElse(false))
          .as("app pid " + pid + " still alive")
          .isFalse();
    }
    String[] redis = result.get("redis").asText().split(":");
    assertThat(FleetRun.answersPing(redis[0], Integer.parseInt(redis[1])))
        .as("the run's own redis-server still answers at " + result.get("redis").asText())
        .isFalse();
  }

  @Test
  void aDelayLongerThanHalfTheLeaseTtlIsRefusedInOneLineNamingTheOption() {
    CliTest.Run r = CliTest.run("demo", "fleet", "--lease-ttl", "2s", "--delay", "1500ms");
    assertThat(r.exit()).isEqualTo(Main.USAGE);
    assertThat(r.err().strip()).doesNotContain("\n").contains("--delay", "1.5s");
    assertThat(r.out()).isEmpty();
  }

  @Test
  void tooLittleRunAfterTheKillIsRefusedInOneLineNamingTheOption() {
    CliTest.Run r =
        CliTest.run(
            "demo", "fleet", "--lease-ttl", "5s", "--kill-after", "8s", "--duration", "12s");
    assertThat(r.exit()).isEqualTo(Main.USAGE);
    assertThat(r.err().strip()).doesNotContain("\n").contains("--duration", "12s");
  }

  @Test
  void aRedisUriThatIsNotOneIsRefusedInOneLineNamingTheOption() {
    CliTest.Run r = CliTest.run("demo", "fleet", "--redis", "http://127.0.0.1:6379");
    assertThat(r.exit()).isEqualTo(Main.USAGE);
    assertThat(r.err().strip()).doesNotContain("\n").contains("--redis", "http://127.0.0.1:6379");
  }

  private static int portWhereNothingListens() throws IOException {
    try (ServerSocket socket = new ServerSocket(0, 1, InetAddress.getLoopbackAddress())) {
      return socket.getLocalPort();
    }
  }

  private static List<String> childJvms() {
    return ProcessHandle.current()
        .descendants()
        .filter(ProcessHandle::isAlive)
        .map(p -> p.pid() + " " + p.info().commandLine().orElse("?"))
        .filter(line -> line.contains(FleetApp.class.getName()) || line.contains("redis-server"))
        .collect(Collectors.toList());
  }
}
