package io.bulkhead.scenarios;

/**
 * One mode's run.
 *
 * @param mode shared or bulkhead
 * @param load what the load generator measured
 * @param upstreamMaxConnections the most connections the upstream saw open at once
 * @param upstreamRequests how many requests reached the upstream
 */
public record ModeResult(
    Mode mode, LoadResult load, int upstreamMaxConnections, int upstreamRequests) {}
