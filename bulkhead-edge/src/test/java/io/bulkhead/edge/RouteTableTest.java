package io.bulkhead.edge;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

import io.bulkhead.Bulkhead;
import org.junit.jupiter.api.Test;

class RouteTableTest {

  private static final Bulkhead LOGIN = Bulkhead.builder("login").limit(1).build();
  private static final Bulkhead API = Bulkhead.builder("api").limit(1).build();
  private static final Bulkhead REPORTS = Bulkhead.builder("reports").limit(1).build();
  private static final Bulkhead SERVER = Bulkhead.builder("server").limit(1).build();

  private static String target(RouteTable routes, String path) {
    return routes.route(path) instanceof Route.Through through ? through.bulkhead().name() : "-";
  }

  @Test
  void theMostSpecificPatternWins_anExactPathThenTheLongestPrefix_whateverTheOrderOfTheCalls() {
    RouteTable routes =
        RouteTable.builder()
            .route("/**", SERVER)
            .route("/api/**", API)
            .route("/api/reports/**", REPORTS)
            .route("/api/login", LOGIN)
            .bypass("/api/health")
            .build();

    assertThat(target(routes, "/api/login")).isEqualTo("login"); // exact
    assertThat(target(routes, "/api/health")).isEqualTo("-"); // exact bypass
    assertThat(target(routes, "/api/health/deep")).isEqualTo("api"); // an exact path has no below
    assertThat(target(routes, "/api/reports/q1.csv")).isEqualTo("reports"); // longest prefix
    assertThat(target(routes, "/api/reports")).isEqualTo("reports"); // the prefix itself
    assertThat(target(routes, "/api/users")).isEqualTo("api");
    assertThat(target(routes, "/api")).isEqualTo("api");
    assertThat(target(routes, "/apiary")).isEqualTo("server"); // not under /api
    assertThat(target(routes, "/")).isEqualTo("server");
    assertThat(target(routes, "/anything/at/all")).isEqualTo("server");
  }

  @Test
  void aPathThatMatchesNoPattern_isBypassed_andTheRootIsAnExactPath() {
    RouteTable routes = RouteTable.builder().route("/chat/**", API).route("/", LOGIN).build();
    assertThat(routes.route("/login")).isEqualTo(Route.bypass());
    assertThat(routes.route("/chatty")).isSameAs(Route.bypass());
    assertThat(routes.route("/chat/x")).isEqualTo(Route.through(API));
    assertThat(target(routes, "/")).isEqualTo("login");
    assertThat(target(routes, "/x")).isEqualTo("-");
    assertThat(RouteTable.builder().build().route("/x")).isSameAs(Route.bypass());
  }

  @Test
  void badPatterns_areRefusedWithOneLineNamingThePattern() {
    String form =
        " (a pattern is an exact path like /login, or a path followed by /** like /chat/**;"
            + " /** alone is every request)";
    assertThatThrownBy(() -> RouteTable.builder().route("/api/*", API))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage(
            "path pattern '/api/*': write /api/** for a path and everything below it" + form);
    assertThatThrownBy(() -> RouteTable.builder().route("/*", API))
        .hasMessageStartingWith("path pattern '/*': write /** for a path and everything below it");
    for (String relative : new String[] {"chat", "*.csv", "", "**"}) {
      assertThatThrownBy(() -> RouteTable.builder().route(relative, API))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage("path pattern '" + relative + "': it does not start with /" + form);
    }
    for (String wild : new String[] {"/chat*", "/*/x", "/a*/**", "/users/{id}", "/a/**/b", "/a?"}) {
      assertThatThrownBy(() -> RouteTable.builder().route(wild, API))
          .isInstanceOf(IllegalArgumentException.class)
          .hasMessage(
              "path pattern '"
                  + wild
                  + "': wildcards other than a final /** and {variables} are not supported"
                  + form);
    }
    assertThatThrownBy(() -> RouteTable.builder().bypass("/chat/"))
        .hasMessage("path pattern '/chat/': it ends with /" + form);
    assertThatThrownBy(() -> RouteTable.builder().route("//**", API))
        .hasMessage("path pattern '//**': write /** for every request" + form);
    assertThatThrownBy(() -> RouteTable.builder().route("/chat/**", API).bypass("/chat/**"))
        .isInstanceOf(IllegalArgumentException.class)
        .hasMessage("path pattern '/chat/**' is already routed to bulkhead 'api'");
    assertThatThrownBy(() -> RouteTable.builder().route(null, API))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("pattern");
    assertThatThrownBy(() -> RouteTable.builder().route("/chat", null))
        .isInstanceOf(NullPointerException.class)
        .hasMessage("bulkhead");
    assertThatThrownBy(() -> RouteTable.builder().build().route(null))
        .isInstanceOf(NullPointerException.class);
  }

  @Test
  void build_copiesTheRoutes_soTheBuilderCanBeChangedAfterwards() {
    RouteTable.Builder builder = RouteTable.builder().route("/a", API);
    RouteTable first = builder.build();
    builder.bypass("/b/**");
    assertThat(first.route("/b")).isEqualTo(Route.bypass());
    assertThat(first).hasToString("[/a -> bulkhead 'api']");
    assertThat(builder.build()).hasToString("[/a -> bulkhead 'api', /b/** -> bypass]");
  }
}
