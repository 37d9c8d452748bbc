/**
 * Hooks for integrations that admit calls on a compartment's behalf, such as {@code
 * bulkhead-redis}, whose compartments also need a lease from the fleet before a call may run.
 * <strong>Not for applications</strong>: on the module path this package is exported only to those
 * integrations; on the class path it is visible, but it may change in any release without notice.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}.
 */
@NullMarked
package io.bulkhead.spi;

import org.jspecify.annotations.NullMarked;
