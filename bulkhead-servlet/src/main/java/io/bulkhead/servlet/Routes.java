package io.bulkhead.servlet;

import io.bulkhead.Bulkhead;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Optional;

/**
 * Servlet path specs mapped to a compartment (or to a bypass, as {@link Optional#empty()}), matched
 * as a servlet container maps a request to a servlet: an exact path first, then the longest prefix,
 * then the longest suffix, then the default {@code /}. Immutable once built.
 */
final class Routes {

  /** One kind of servlet path spec, in the order the container tries them. */
  enum Kind {
    EXACT,
    PREFIX,
    SUFFIX,
    DEFAULT
  }

  /** A parsed spec: {@code key} is the exact path, the prefix without {@code /*}, or the suffix. */
  record Spec(String declaration, Kind kind, String key) {

    static Spec parse(String declaration) {
      if (declaration.isEmpty()) {
        throw new IllegalArgumentException(
            "path spec '' matches only the context root; use '/' for"
                + " every request or an exact path like /login");
      }
      if (declaration.equals("/")) {
        return new Spec(declaration, Kind.DEFAULT, "");
      }
      if (declaration.startsWith("*.")) {
        String suffix = declaration.substring(1);
        if (suffix.length() > 1 && suffix.indexOf('/') < 0 && suffix.indexOf('*') < 0) {
          return new Spec(declaration, Kind.SUFFIX, suffix);
        }
      } else if (declaration.startsWith("/")) {
        if (declaration.endsWith("/*")) {
          String prefix = declaration.substring(0, declaration.length() - 2);
          if (prefix.indexOf('*') < 0) {
            return new Spec(declaration, Kind.PREFIX, prefix);
          }
        } else if (declaration.indexOf('*') < 0) {
          return new Spec(declaration, Kind.EXACT, declaration);
        }
      }
      throw new IllegalArgumentException(
          "path spec '"
              + declaration
              + "' is not a servlet path spec"
              + " (an exact path like /login, a prefix like /api/*, a suffix like *.csv, or /)");
    }

    boolean matches(String path) {
      return switch (kind) {
        case EXACT -> path.equals(key);
        case PREFIX ->
            path.startsWith(key)
                && (path.length() == key.length() || path.charAt(key.length()) == '/');
        case SUFFIX -> path.substring(path.lastIndexOf('/') + 1).endsWith(key);
        case DEFAULT -> true;
      };
    }
  }

  /** A spec and where it sends a request. */
  record Route(Spec spec, Optional<Bulkhead> target) {}

  private final Map<String, Optional<Bulkhead>> exact = new HashMap<>();
  private final List<Route> ordered; // prefixes (longest first), suffixes (longest first), default

  Routes(List<Route> routes) {
    List<Route> rest = new ArrayList<>();
    for (Route route : routes) {
      if (route.spec().kind() == Kind.EXACT) {
        exact.put(route.spec().key(), route.target());
      } else {
        rest.add(route);
      }
    }
    rest.sort(
        Comparator.comparing((Route r) -> r.spec().kind())
            .thenComparing(r -> -r.spec().key().length()));
    this.ordered = List.copyOf(rest);
  }

  /** Where a request to {@code path} goes: empty if it matches no route or a bypass. */
  Optional<Bulkhead> target(String path) {
    Optional<Bulkhead> hit = exact.get(path);
    if (hit != null) {
      return hit;
    }
    for (Route route : ordered) {
      if (route.spec().matches(path)) {
        return route.target();
      }
    }
    return Optional.empty();
  }
}
