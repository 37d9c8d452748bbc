/**
 * Apache HttpClient 5 in compartments: {@link io.bulkhead.httpclient5.BulkheadExecChainHandler}
 * (classic) and {@link io.bulkhead.httpclient5.BulkheadAsyncExecChainHandler} (async) route
 * requests by URL into compartments and hold each slot until the response body is consumed or
 * closed.
 */
@NullMarked
package io.bulkhead.httpclient5;

import org.jspecify.annotations.NullMarked;
