/**
 * Not an API: the bulkhead file's YAML reader (positions, bounds, one-line errors), its printing of
 * values in messages, and its "did you mean". Not exported by the module; the demo's deployment
 * check reads Compose files and Kubernetes manifests with the same reader, from the class path.
 */
@NullMarked
package io.bulkhead.config.internal;

import org.jspecify.annotations.NullMarked;
