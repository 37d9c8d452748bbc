package io.bulkhead.edge;

import java.util.Objects;

/**
 * One pattern of a {@link RouteTable.Builder}: an exact path, or a prefix ({@code path} followed by
 * {@code /**}; {@code ""} for {@code /**}).
 */
record EdgePattern(String path, boolean prefix) {

  private static final String BELOW = "/**";

  static EdgePattern parse(String pattern) {
    Objects.requireNonNull(pattern, "pattern");
    boolean prefix = pattern.endsWith(BELOW);
    String path = prefix ? pattern.substring(0, pattern.length() - BELOW.length()) : pattern;
    if (!pattern.startsWith("/")) {
      throw bad(pattern, "it does not start with /");
    }
    if (path.endsWith("/*")) {
      throw bad(
          pattern,
          "write "
              + path.substring(0, path.length() - 2)
              + "/** for a path and everything below it");
    }
    if (path.chars().anyMatch(c -> c == '*' || c == '?' || c == '{' || c == '}')) {
      throw bad(pattern, "wildcards other than a final /** and {variables} are not supported");
    }
    if (path.endsWith("/") && !path.equals("/")) {
      throw bad(pattern, "it ends with /");
    }
    if (prefix && path.equals("/")) {
      throw bad(pattern, "write /** for every request");
    }
    return new EdgePattern(path, prefix);
  }

  /** Whether {@code path} is this prefix or below it; for an exact pattern, whether it is equal. */
  boolean matches(String requestPath) {
    if (!prefix) {
      return requestPath.equals(path);
    }
    return requestPath.startsWith(path)
        && (requestPath.length() == path.length() || requestPath.charAt(path.length()) == '/');
  }

  private static IllegalArgumentException bad(String pattern, String why) {
    return new IllegalArgumentException(
        "path pattern '"
            + pattern
            + "': "
            + why
            + " (a pattern is an exact path like /login, or a path followed by /** like /chat/**;"
            + " /** alone is every request)");
  }
}
