package io.bulkhead.config;

import java.util.List;
import java.util.Optional;
import java.util.OptionalInt;

/**
 * A database as the settings declare it ({@code datasources.NAME}): where it is, how many of the
 * server's connections to leave to others, the capacity of its budget, and one pool per workload.
 * Opening the pools is {@code bulkhead-jdbc}'s ({@code DatabasePools}), which checks them against
 * the server's own limit; this is what the settings say, checked as far as they can be without the
 * server.
 *
 * @param name the database's name, which also names its budget and prefixes its pools' compartments
 *     ({@code orders.checkout})
 * @param path where the settings declare it: {@code datasources.NAME}
 * @param line the line of the file; 0 when not read from a file
 * @param url the JDBC URL
 * @param username the user the pools connect as, if given
 * @param password the password, if given; {@link #toString()} does not show it
 * @param reserve how many of the server's connections to leave to other clients
 * @param capacity how many connections the pools may hold together, if below what the server allows
 * @param pools the pools, in the order given
 */
public record DatabaseSpec(
    String name,
    String path,
    int line,
    String url,
    Optional<String> username,
    Optional<String> password,
    int reserve,
    OptionalInt capacity,
    List<PoolSpec> pools) {

  /** Copies {@code pools}. */
  public DatabaseSpec {
    pools = List.copyOf(pools);
  }

  @Override
  public String toString() {
    return "DatabaseSpec{name="
        + name
        + ", url="
        + url
        + username.map(u -> ", username=" + u).orElse("")
        + password.map(p -> ", password=(hidden)").orElse("")
        + ", reserve="
        + reserve
        + (capacity.isPresent() ? ", capacity=" + capacity.getAsInt() : "")
        + ", pools="
        + pools
        + "}";
  }
}
