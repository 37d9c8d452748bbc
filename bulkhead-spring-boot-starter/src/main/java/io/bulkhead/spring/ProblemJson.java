package io.bulkhead.spring;

import io.bulkhead.BulkheadFullException;
import io.bulkhead.insight.JsonWriter;
import java.util.Locale;

/**
 * The RFC 9457 body of a compartment's {@code 503} where Spring's message converters do not write
 * it: in the servlet filter and the {@code WebFilter}, which answer before any controller runs. It
 * has the members of {@link BulkheadProblemHandler}'s {@code ProblemDetail}, so a client sees one
 * kind of "busy" whichever part of the application said it.
 */
final class ProblemJson {

  /** The content type of the body. */
  static final String CONTENT_TYPE = "application/problem+json";

  /** The title of every compartment's problem. */
  static final String TITLE = "Compartment full";

  private static final int STATUS = 503;

  private ProblemJson() {}

  /** The problem document for {@code rejection}. */
  static String of(BulkheadFullException rejection) {
    return JsonWriter.compact()
        .beginObject()
        .name("type")
        .value(BulkheadProblemHandler.TYPE.toString())
        .name("title")
        .value(TITLE)
        .name("status")
        .value(STATUS)
        .name("detail")
        .value(rejection.getMessage())
        .name("compartment")
        .value(rejection.bulkheadName())
        .name("reason")
        .value(reason(rejection))
        .endObject()
        .toJson();
  }

  /** The rejection's reason as the problem's {@code reason} member says it. */
  static String reason(BulkheadFullException rejection) {
    return rejection.reason().name().toLowerCase(Locale.ROOT);
  }
}
