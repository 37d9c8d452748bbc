package io.bulkhead.servlet;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import java.util.Optional;
import org.junit.jupiter.api.Test;

class RoutesTest {

  private static final Bulkhead LOGIN = Bulkhead.builder("login").limit(1).build();
  private static final Bulkhead API = Bulkhead.builder("api").limit(1).build();
  private static final Bulkhead REPORTS = Bulkhead.builder("reports").limit(1).build();
  private static final Bulkhead CSV = Bulkhead.builder("csv").limit(1).build();
  private static final Bulkhead SERVER = Bulkhead.builder("server").limit(1).build();

  private static String target(BulkheadFilter filter, String path) {
    return filter.compartmentFor(path).map(Bulkhead::name).orElse("-");
  }

  @Test
  void theMostSpecificSpecWins_asWhenTheContainerPicksAServlet_whateverTheOrderOfTheRoutes() {
    BulkheadFilter filter =
        BulkheadFilter.builder()
            .route("/", SERVER)
            .route("*.csv", CSV)
            .route("/api/*", API)
            .route("/api/reports/*", REPORTS)
            .route("/api/login", LOGIN)
            .bypass("/api/health")
            .build();

    assertThat(target(filter, "/api/login")).isEqualTo("login"); // exact
    assertThat(target(filter, "/api/health")).isEqualTo("-"); // exact bypass
    assertThat(target(filter, "/api/reports/q1.csv")).isEqualTo("reports"); // longest prefix
    assertThat(target(filter, "/api/reports")).isEqualTo("reports"); // the prefix itself
    assertThat(target(filter, "/api/users")).isEqualTo("api");
    assertThat(target(filter, "/api")).isEqualTo("api");
    assertThat(target(filter, "/apiary")).isEqualTo("server"); // not under /api
    assertThat(target(filter, "/export/q1.csv")).isEqualTo("csv"); // suffix before default
    assertThat(target(filter, "/export.csv/q1")).isEqualTo("server"); // only the last segment
    assertThat(target(filter, "/")).isEqualTo("server");
    assertThat(target(filter, "/anything")).isEqualTo("server");
  }

  @Test
  void aPathThatMatchesNoRoute_goesToNoCompartment() {
    BulkheadFilter filter = BulkheadFilter.builder().route("/chat/*", API).build();
    assertThat(filter.compartmentFor("/login")).isEqualTo(Optional.empty());
    assertThat(filter.compartmentFor("/chatty")).isEqualTo(Optional.empty());
    assertThat(target(filter, "/chat/x")).isEqualTo("api");
  }

  @Test
  void slashStar_matchesEverythingTheExactAndLongerPrefixesDoNot() {
    BulkheadFilter filter =
        BulkheadFilter.builder().route("/*", SERVER).route("/a/*", API).bypass("/health").build();
    assertThat(target(filter, "/x/y")).isEqualTo("server");
    assertThat(target(filter, "/a/y")).isEqualTo("api");
    assertThat(target(filter, "/health")).isEqualTo("-");
  }

  @Test
  void badSpecs_areRefusedWithOneLineNamingTheSpec() {
    for (String bad : new String[] {"chat", "/chat*", "/*/x", "*.", "*.a/b", "**.csv", "/a*/*"}) {
      assertThatThrownBy(() -> BulkheadFilter.builder().route(bad, API))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "path spec '"
                  + bad
                  + "' is not a servlet path spec (an exact path like"
                  + " /login, a prefix like /api/*, a suffix like *.csv, or /)");
    }
    assertThatThrownBy(() -> BulkheadFilter.builder().route("", API))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessageStartingWith("path spec '' matches only the context root");
    assertThatThrownBy(() -> BulkheadFilter.builder().route("/chat/*", API).bypass("/chat/*"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("path spec '/chat/*' is already routed to bulkhead 'api'");
    assertThatThrownBy(() -> BulkheadFilter.builder().route(null, API))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("pathSpec");
    assertThatThrownBy(() -> BulkheadFilter.builder().route("/chat", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("compartment");
    assertThatThrownBy(() -> BulkheadFilter.builder().rejectionBody(null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("body");
  }

  @Test
  void build_copiesTheRoutes_soTheBuilderCanBeChangedAfterwards() {
    BulkheadFilter.Builder builder = BulkheadFilter.builder().route("/a", API);
    BulkheadFilter first = builder.build();
    builder.route("/b", LOGIN);
    assertThat(first.compartmentFor("/b")).isEmpty();
    assertThat(builder.build().compartmentFor("/b")).contains(LOGIN);
    assertThat(first).hasToString("BulkheadFilter[/a -> bulkhead 'api']");
  }
}
