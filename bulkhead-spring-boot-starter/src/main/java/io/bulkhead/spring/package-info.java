/**
 * Spring Boot auto-configuration for Bulkhead: compartments from {@code bulkhead.*} properties,
 * {@link io.bulkhead.spring.Bulkhead @Bulkhead} on bean methods, {@code 503} problem responses,
 * RestClient compartments per upstream, Micrometer meters and the {@code compartments} Actuator
 * endpoint.
 */
@NullMarked
package io.bulkhead.spring;

import org.jspecify.annotations.NullMarked;
