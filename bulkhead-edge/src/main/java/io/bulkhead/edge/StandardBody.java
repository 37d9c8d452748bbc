package io.bulkhead.edge;

import io.bulkhead.BulkheadFullException;
import java.util.Locale;

/** The bodies {@link RejectionBody} offers. */
enum StandardBody implements RejectionBody {
  PLAIN_TEXT {
    @Override
    public Body render(BulkheadFullException rejection, long retryAfterSeconds) {
      return new Body(
          "text/plain;charset=utf-8",
          "bulkhead '"
              + rejection.bulkheadName()
              + "' is full: retry after "
              + retryAfterSeconds
              + " s\n");
    }
  },

  PROBLEM_JSON {
    @Override
    public Body render(BulkheadFullException rejection, long retryAfterSeconds) {
      StringBuilder json = new StringBuilder(256);
      json.append("{\"type\":");
      quote(json, PROBLEM_TYPE.toString()).append(",\"title\":");
      quote(json, PROBLEM_TITLE).append(",\"status\":").append(HttpRejection.STATUS);
      json.append(",\"detail\":");
      quote(json, rejection.getMessage()).append(",\"compartment\":");
      quote(json, rejection.bulkheadName()).append(",\"reason\":");
      quote(json, rejection.reason().name().toLowerCase(Locale.ROOT)).append('}');
      return new Body("application/problem+json", json.toString());
    }
  };

  /** Appends {@code s} as a JSON string: quotes, backslashes and control characters escaped. */
  private static StringBuilder quote(StringBuilder json, String s) {
    json.append('"');
    for (int i = 0; i < s.length(); i++) {
      char c = s.charAt(i);
      if (c == '"' || c == '\\') {
        json.append('\\').append(c);
      } else if (c < 0x20) {
        json.append(String.format("\\u%04x", (int) c));
      } else {
        json.append(c);
      }
    }
    return json.append('"');
  }
}
