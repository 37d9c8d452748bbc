/**
 * Budgets and compartments from a YAML file, sized with Little's law: {@link
 * io.bulkhead.config.BulkheadFile} loads and checks a file and builds its compartments; a bad file
 * is a {@link io.bulkhead.config.ConfigException} naming file, line and key.
 */
@NullMarked
package io.bulkhead.config;

import org.jspecify.annotations.NullMarked;
