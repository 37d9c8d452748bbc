/** What Bulkhead's HTTP edges share in their implementation; exported to them only, not an API. */
@NullMarked
package io.bulkhead.edge.internal;

import org.jspecify.annotations.NullMarked;
