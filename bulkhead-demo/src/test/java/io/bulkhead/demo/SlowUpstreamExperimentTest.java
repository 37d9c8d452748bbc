package io.bulkhead.demo;

import static org.assertj.core.api.Assertions.assertThat;

import io.bulkhead.scenarios.DemoSettings;
import io.bulkhead.scenarios.Experiment;
import io.bulkhead.scenarios.ExperimentResult;
import io.bulkhead.scenarios.LoadResult;
import io.bulkhead.scenarios.Route;
import io.bulkhead.scenarios.Sample;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The slow-upstream experiment, run in this process with a 3-second upstream instead of 30: the
 * shape it predicts must show, whatever the machine's speed. The bounds are stated loosely enough
 * for a loaded two-core machine: they separate "stuck behind the upstream" (seconds) from "not
 * affected by it" (milliseconds) by more than an order of magnitude.
 *
 * <p>A short run goes first and is thrown away, as in any latency measurement: the first few
 * hundred requests of a fresh JVM run interpreted code and load classes, which on a busy two-core
 * machine costs a login tens of milliseconds that have nothing to do with compartments.
 */
class SlowUpstreamExperimentTest {

  private static final Duration DELAY = Duration.ofSeconds(3);
  private static ExperimentResult result;

  @BeforeAll
  static void runTheExperiment() {
    new Experiment(
            new DemoSettings(
                Duration.ofMillis(300),
                80,
                50,
                Duration.ofMillis(100),
                50,
                10,
                20,
                Duration.ofMillis(200),
                Duration.ofSeconds(60)))
        .run(new Experiment.Progress() {});
    result = new Experiment(DemoSettings.slowUpstream(DELAY)).run(new Experiment.Progress() {});
    System.out.print(Report.table(result)); // the figures, for whoever reads the build log
  }

  @Test
  void sharedMode_loginWaitsBehindTheUpstream_andEveryChatIsEventuallyAnswered() {
    LoadResult shared = result.shared().load();

    // The experiment predicts about delay - 1 s; more than half the delay is the bound.
    assertThat(shared.login().p99Ms()).isGreaterThan(DELAY.toMillis() / 2.0);
    assertThat(shared.loginFailures()).isZero();
    assertThat(shared.chatOk()).isEqualTo(80);
    assertThat(shared.chatRejected()).isZero();
    assertThat(shared.chatOther()).isZero();
    // 50 chats hold the 50 slots for a whole delay, the other 30 follow: about two delays in all.
    assertThat(shared.wallMs()).isGreaterThan(2 * DELAY.toMillis() * 0.9);
    // No cap on the shared client: one connection per chat in flight, the whole server cap's worth.
    assertThat(result.shared().upstreamMaxConnections()).isEqualTo(50);
  }

  @Test
  void bulkheadMode_loginIsUnaffected_andTheFloodStaysInItsCompartment() {
    LoadResult bulkhead = result.bulkhead().load();

    // Unaffected: every login was answered before the upstream answered any chat, so no login
    // waited
    // for the slow dependency (an ordering of the run's own events, not a latency window).
    long firstChatAnswer =
        bulkhead.samples().stream()
            .filter(s -> s.route() == Route.CHAT && s.status() == 200)
            .mapToLong(Sample::answeredAtNanos)
            .min()
            .orElseThrow();
    assertThat(bulkhead.samples())
        .filteredOn(s -> s.route() == Route.LOGIN)
        .hasSize(50)
        .allSatisfy(
            login ->
                assertThat(login.answeredAtNanos())
                    .as("login answered before the upstream's first answer")
                    .isLessThan(firstChatAnswer));
    assertThat(bulkhead.loginFailures()).isZero();
    assertThat(bulkhead.chatOk()).isEqualTo(10);
    assertThat(bulkhead.chatRejected()).isEqualTo(70);
    assertThat(bulkhead.chatOther()).isZero();
    // The 20 that queued waited the compartment's full second before their 503; most were refused
    // at once, so the median 503 came well before that.
    List<Sample> refused =
        bulkhead.samples().stream()
            .filter(s -> s.route() == Route.CHAT && s.status() == 503)
            .toList();
    long waitedTheSecond =
        refused.stream().filter(s -> s.latencyNanos() >= Duration.ofSeconds(1).toNanos()).count();
    assertThat(waitedTheSecond).isGreaterThanOrEqualTo(20);
    assertThat(bulkhead.rejected().p50Ms()).isLessThan(1000.0);
    // The llm client never held more connections than its compartment's limit.
    assertThat(result.bulkhead().upstreamMaxConnections()).isLessThanOrEqualTo(10);
    assertThat(result.bulkhead().upstreamRequests()).isEqualTo(10);
  }

  @Test
  void theReportsCarryTheSameNumbers() {
    String table = Report.table(result);
    String json = Report.json(result);
    String html = Report.html(result);

    assertThat(table).contains("login p99", "chat 503", "upstream connections (max open)");
    assertThat(json).contains("\"bulkhead\"", "\"503\": 70", "\"200\": 10");
    assertThat(html)
        .contains("<svg", "shared mode", "bulkhead mode")
        .contains(Report.ms(result.bulkhead().load().login().p99Ms()));
    // One dot per request, in each chart.
    assertThat(html.split("</circle>", -1).length - 1).isEqualTo(2 * 130);
  }
}
