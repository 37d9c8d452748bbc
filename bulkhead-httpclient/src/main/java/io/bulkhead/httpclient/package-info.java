/**
 * Outgoing HTTP in a compartment: {@link io.bulkhead.httpclient.UpstreamClient}, a per-dependency
 * {@code java.net.http} client whose compartment caps the connections it opens.
 */
@NullMarked
package io.bulkhead.httpclient;

import org.jspecify.annotations.NullMarked;
