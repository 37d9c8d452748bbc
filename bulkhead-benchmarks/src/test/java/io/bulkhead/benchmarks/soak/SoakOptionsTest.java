package io.bulkhead.benchmarks.soak;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import java.time.Duration;
import org.junit.jupiter.api.Test;

class SoakOptionsTest {

  @Test
  void defaultsAreTenMinutesSampledEveryTenSeconds() {
    SoakOptions o = SoakOptions.parse(new String[0]);
    assertThat(o.duration).isEqualTo(Duration.ofMinutes(10));
    assertThat(o.sampleEvery).isEqualTo(Duration.ofSeconds(10));
    assertThat(o.upstreamFailures).isEqualTo(0.05);
  }

  @Test
  void readsEveryOption() {
    SoakOptions o =
        SoakOptions.parse(
            new String[] {
              "--duration",
              "1h",
              "--sample-every",
              "5s",
              "--logins",
              "100/s",
              "--chats",
              "600/min",
              "--checkouts",
              "30/s",
              "--reports",
              "1/s",
              "--upstream-delay",
              "1s",
              "--upstream-failures",
              "0.2",
              "--out",
              "/tmp/x"
            });
    assertThat(o.duration).isEqualTo(Duration.ofHours(1));
    assertThat(o.chatsPerSecond).isEqualTo(10);
    assertThat(o.upstreamFailures).isEqualTo(0.2);
    assertThat(SoakOptions.parse(new String[] {"--help"})).isNull();
  }

  @Test
  void aWrongValueIsOneLineNamingTheOption() {
    assertThatThrownBy(() -> SoakOptions.parse(new String[] {"--upstream-failures", "1.5"}))
        .hasMessage("--upstream-failures must be from 0 to 1 but was 1.5");
    assertThatThrownBy(() -> SoakOptions.parse(new String[] {"--chats", "2000000000/s"}))
        .hasMessage("--chats must be above 0 and at most 1000/s but was 2000000000/s");
    assertThatThrownBy(() -> SoakOptions.parse(new String[] {"--duration", "PT2000000H"}))
        .hasMessage("--duration must be from 10s to 24h but was PT2000000H");
    assertThatThrownBy(
            () -> SoakOptions.parse(new String[] {"--duration", "20s", "--sample-every", "30s"}))
        .hasMessage("--sample-every (30s) must not be longer than --duration (20s)");
    assertThatThrownBy(() -> SoakOptions.parse(new String[] {"--duration"}))
        .hasMessage("--duration needs a value");
    assertThatThrownBy(() -> SoakOptions.parse(new String[] {"--nope", "1"}))
        .hasMessage("unknown option '--nope'");
  }
}
