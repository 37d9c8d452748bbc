/**
 * OkHttp in compartments: {@link io.bulkhead.okhttp.BulkheadInterceptor} routes calls by URL into
 * compartments and holds each slot until the response body is closed.
 */
@NullMarked
package io.bulkhead.okhttp;

import org.jspecify.annotations.NullMarked;
