/**
 * Helpers that Bulkhead's own modules share, kept in one place instead of copied into each.
 * <strong>Not an API</strong>: on the module path this package is exported only to Bulkhead's
 * sibling modules; on the class path it is visible, but it may change in any release without
 * notice.
 *
 * <p>Nothing in this package accepts or returns {@code null} unless it is marked {@link
 * org.jspecify.annotations.Nullable @Nullable}.
 */
@NullMarked
package io.bulkhead.internal;

import org.jspecify.annotations.NullMarked;
