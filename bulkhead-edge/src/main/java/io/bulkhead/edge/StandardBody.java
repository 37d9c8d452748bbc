package io.bulkhead.edge;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.internal.JsonWriter;
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
      String json =
          JsonWriter.compact()
              .beginObject()
              .name("type")
              .value(PROBLEM_TYPE.toString())
              .name("title")
              .value(PROBLEM_TITLE)
              .name("status")
              .value(HttpRejection.STATUS)
              .name("detail")
              .value(rejection.getMessage())
              .name("compartment")
              .value(rejection.bulkheadName())
              .name("reason")
              .value(rejection.reason().name().toLowerCase(Locale.ROOT))
              .endObject()
              .toJson();
      return new Body("application/problem+json", json);
    }
  };
}
