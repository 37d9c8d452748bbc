/**
 * The HTTP edge without a framework: routes, the {@code 503}'s body and the {@code Retry-After}
 * rule, shared by {@code bulkhead-jetty}, {@code bulkhead-servlet} and the Spring Boot starter.
 */
@NullMarked
package io.bulkhead.edge;

import org.jspecify.annotations.NullMarked;
