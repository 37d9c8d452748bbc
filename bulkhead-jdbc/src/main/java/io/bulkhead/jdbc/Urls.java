package io.bulkhead.jdbc;

import java.util.regex.Pattern;

/** JDBC URLs in messages: the password a URL may carry is replaced, never printed. */
final class Urls {

  private static final Pattern PASSWORD = Pattern.compile("(?i)(password=)[^&;]*");

  private Urls() {}

  /** Returns {@code jdbcUrl} with the value of any {@code password=} parameter replaced by ***. */
  static String redact(String jdbcUrl) {
    return PASSWORD.matcher(jdbcUrl).replaceAll("$1***");
  }
}
