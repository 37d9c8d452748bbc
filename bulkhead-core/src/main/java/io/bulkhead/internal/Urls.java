package io.bulkhead.internal;

import java.util.regex.Pattern;

/**
 * URLs fit to print: every message and log line that echoes a URL (an HTTP upstream, a Redis URI, a
 * JDBC URL) passes it through {@link #masked} first, so that no credential reaches a log.
 */
public final class Urls {

  /**
   * The userinfo of an authority: after {@code //}, up to the last {@code @} before the path, query
   * or fragment (a password typed with a raw {@code @} in it is covered too).
   */
  private static final Pattern USER_INFO = Pattern.compile("(?<=//)[^/?#\\s]+@");

  /** An authority without a scheme ({@code svc:s3cret@llm.internal}), as a host setting takes. */
  private static final Pattern LEADING_USER_INFO = Pattern.compile("^[^/?#\\s]+@");

  /** Oracle's thin driver: {@code jdbc:oracle:thin:scott/tiger@host:1521:orcl}. */
  private static final Pattern ORACLE_USER_INFO = Pattern.compile("(?i)(?<=:thin:)[^@\\s]+@");

  /** A password given as a parameter: {@code ?password=}, {@code ;password=}, {@code &pwd=}. */
  private static final Pattern PASSWORD_PARAMETER =
      Pattern.compile("(?i)\\b(password|pwd)=[^&;\\s]*");

  private static final Pattern LINE_BREAK = Pattern.compile("[\\r\\n]");

  private Urls() {}

  /**
   * Returns {@code url} with its userinfo (user and password) replaced by {@code ***}, the value of
   * any {@code password=} or {@code pwd=} parameter too, and line breaks replaced by spaces so that
   * the message quoting it stays one line: {@code ftp://svc:s3cret@llm.internal/v1} becomes {@code
   * ftp://***@llm.internal/v1}, and a host given without a scheme ({@code svc:s3cret@llm.internal})
   * is masked alike. Any text is accepted; text without credentials comes back with only its line
   * breaks replaced.
   */
  public static String masked(String url) {
    String out =
        url.contains("//")
            ? USER_INFO.matcher(url).replaceAll("***@")
            : LEADING_USER_INFO.matcher(url).replaceFirst("***@");
    out = ORACLE_USER_INFO.matcher(out).replaceAll("***@");
    out = PASSWORD_PARAMETER.matcher(out).replaceAll("$1=***");
    return LINE_BREAK.matcher(out).replaceAll(" ");
  }
}
