package io.bulkhead.jdbc.demo;

import java.io.PrintStream;
import java.math.BigDecimal;
import java.sql.SQLException;
import java.time.Duration;
import java.util.Locale;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * {@code demo db} without the demo application: runs {@link CheckoutVsReports} and prints the
 * side-by-side table, or the JSON with {@code --json}.
 *
 * <pre>
 * java -cp ... io.bulkhead.jdbc.demo.DemoDb [--degraded 30s] [--duration 40s] [--healthy 10s]
 *     [--jdbc-url jdbc:postgresql://host:5432/db?user=me] [--json]
 * </pre>
 *
 * <p>Progress goes to standard error. A bad option or a database that cannot be used ends with a
 * one-line message and exit code 2 (usage) or 1 (the run failed), never a stack trace.
 */
public final class DemoDb {

  private static final Pattern DURATION = Pattern.compile("(\\d+(?:\\.\\d+)?)(ms|s|m)");

  private DemoDb() {}

  public static void main(String[] args) {
    System.exit(run(args, System.out, System.err));
  }

  /** Runs the command; returns the exit code. */
  static int run(String[] args, PrintStream out, PrintStream err) {
    CheckoutVsReports.Settings.Builder settings = CheckoutVsReports.Settings.builder();
    String jdbcUrl = null;
    boolean json = false;
    try {
      for (int i = 0; i < args.length; i++) {
        String option = args[i];
        switch (option) {
          case "--json":
            json = true;
            break;
          case "--degraded":
            settings.degradedReportQuery(parseDuration(option, value(args, ++i, option)));
            break;
          case "--duration":
            settings.degradedPhase(parseDuration(option, value(args, ++i, option)));
            break;
          case "--healthy":
            settings.healthyPhase(parseDuration(option, value(args, ++i, option)));
            break;
          case "--jdbc-url":
            jdbcUrl = value(args, ++i, option);
            break;
          default:
            throw new IllegalArgumentException("unknown option '" + option + "'; options are"
                + " --degraded, --duration, --healthy, --jdbc-url, --json");
        }
      }
    } catch (IllegalArgumentException e) {
      err.println("demo db: " + e.getMessage());
      return 2;
    }
    try (LocalPostgres db = jdbcUrl == null ? LocalPostgres.findOrStart() : LocalPostgres.at(jdbcUrl)) {
      err.println("demo db: using " + db.description());
      CheckoutVsReports.Result result = CheckoutVsReports.run(db, settings.build(),
          line -> err.println("demo db: " + line));
      out.print(json ? result.toJson() + System.lineSeparator() : result.table());
      return 0;
    } catch (SQLException | IllegalArgumentException | IllegalStateException e) {
      err.println("demo db: " + e.getMessage());
      return 1;
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
      err.println("demo db: interrupted");
      return 1;
    }
  }

  private static String value(String[] args, int i, String option) {
    if (i >= args.length) {
      throw new IllegalArgumentException(option + " needs a value");
    }
    return args[i];
  }

  /**
   * Parses {@code 30s}, {@code 1.5s}, {@code 500ms}, {@code 2m} or an ISO-8601 duration such as
   * {@code PT30S}.
   *
   * @throws IllegalArgumentException naming the option and the value
   */
  public static Duration parseDuration(String option, String text) {
    Matcher m = DURATION.matcher(text.trim().toLowerCase(Locale.ROOT));
    if (m.matches()) {
      BigDecimal amount = new BigDecimal(m.group(1));
      BigDecimal nanosPerUnit;
      switch (m.group(2)) {
        case "ms":
          nanosPerUnit = BigDecimal.valueOf(1_000_000L);
          break;
        case "s":
          nanosPerUnit = BigDecimal.valueOf(1_000_000_000L);
          break;
        default:
          nanosPerUnit = BigDecimal.valueOf(60_000_000_000L);
          break;
      }
      BigDecimal nanos = amount.multiply(nanosPerUnit);
      if (nanos.compareTo(BigDecimal.valueOf(Long.MAX_VALUE)) > 0) {
        throw new IllegalArgumentException(option + " is too long: '" + text + "'");
      }
      return Duration.ofNanos(nanos.longValue());
    }
    try {
      return Duration.parse(text.trim());
    } catch (RuntimeException e) {
      throw new IllegalArgumentException(option + " must be a duration such as 30s, 1.5s, 500ms"
          + " or 2m but was '" + text + "'");
    }
  }
}
