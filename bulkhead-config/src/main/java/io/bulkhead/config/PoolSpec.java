package io.bulkhead.config;

import io.bulkhead.QueueSettings;
import java.time.Duration;
import java.util.Optional;

/**
 * One workload's connection pool as the settings declare it ({@code
 * datasources.DATABASE.pools.WORKLOAD}): its limit (the connections it holds, and so the calls that
 * may hold one at once), its queue settings and HikariCP's connection timeout.
 *
 * @param name the workload's name
 * @param path where the settings declare it: {@code datasources.DATABASE.pools.WORKLOAD}
 * @param line the line of the file; 0 when not read from a file
 * @param limit how many connections the pool holds, given or inherited from {@code defaults}
 * @param queue how many callers may wait for a connection, and for how long
 * @param connectionTimeout HikariCP's connection timeout, if given
 */
public record PoolSpec(
    String name,
    String path,
    int line,
    int limit,
    QueueSettings queue,
    Optional<Duration> connectionTimeout) {}
