package io.bulkhead.jdbc;

import java.util.regex.Pattern;

/** JDBC URLs in messages: the password a URL may carry is replaced, never printed. */
final class Urls {

  private static final Pattern PASSWORD = Pattern.compile("(?i)(password=)[^&;]*");

  /** {@code //user:password@host}, as MySQL, MariaDB and others accept. */
  private static final Pattern USER_INFO_PASSWORD = Pattern.compile("(//[^/:@]*:)[^/@]*@");

  private Urls() {}

  /**
   * Returns {@code jdbcUrl} with the value of any {@code password=} parameter, and the password of
   * a {@code //user:password@host} part, replaced by ***.
   */
  static String redact(String jdbcUrl) {
    String masked = USER_INFO_PASSWORD.matcher(jdbcUrl).replaceAll("$1***@");
    return PASSWORD.matcher(masked).replaceAll("$1***");
  }
}
