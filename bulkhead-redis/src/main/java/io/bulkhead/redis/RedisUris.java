package io.bulkhead.redis;

import io.bulkhead.internal.Urls;
import io.lettuce.core.RedisURI;

/**
 * Parsing the Redis URI a user typed, with a refusal that names the field and never the password.
 */
final class RedisUris {

  private static final String FORM = "redis://[password@]host:port[/database]";

  private RedisUris() {}

  /**
   * Parses {@code uri}.
   *
   * @throws IllegalArgumentException in one line naming {@code field} and the URI, password masked
   */
  static RedisURI parse(String field, String uri) {
    RedisURI parsed;
    try {
      parsed = RedisURI.create(uri);
    } catch (RuntimeException e) { // its message may quote the URI, password and all: not passed on
      throw notAUri(field, uri);
    }
    String host = parsed.getHost();
    if ((host == null || host.isEmpty()) && parsed.getSocket() == null) {
      throw new IllegalArgumentException(field + " names no host: '" + Urls.masked(uri) + "'");
    }
    if (host != null && host.contains(":") && !uri.contains("[")) {
      throw notAUri(field, uri); // Lettuce reads "host:notaport" as a host of that name, port 6379
    }
    return parsed;
  }

  private static IllegalArgumentException notAUri(String field, String uri) {
    return new IllegalArgumentException(
        field + " is not a Redis URI (" + FORM + "): '" + Urls.masked(uri) + "'");
  }
}
