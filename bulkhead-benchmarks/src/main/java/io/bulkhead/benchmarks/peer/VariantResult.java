package io.bulkhead.benchmarks.peer;

import io.bulkhead.scenarios.LoadResult;

/**
 * One variant's run.
 *
 * @param variant what guarded /chat
 * @param load every request's latency and status, from the demo's load generator
 * @param timeline what the app held, sampled during the run
 * @param upstreamMaxConnections the most connections the upstream saw open at once
 * @param upstreamRequests how many requests reached the upstream
 */
record VariantResult(
    Variant variant,
    LoadResult load,
    Timeline timeline,
    int upstreamMaxConnections,
    int upstreamRequests) {}
