package io.bulkhead.jdbc;

import java.sql.Connection;
import java.sql.ResultSet;
import java.sql.SQLException;
import java.sql.Statement;

/**
 * How many connections a PostgreSQL server lets this application open, as read from the server at
 * start-up: {@code max_connections}, less the slots it keeps for superusers ({@code
 * superuser_reserved_connections}) and for roles with {@code pg_use_reserved_connections} ({@code
 * reserved_connections}, PostgreSQL 16 and later), less the connections you leave to other clients
 * (psql, migrations, monitoring, the other instances of your service).
 *
 * <p>Superuser slots are left out even when the application connects as a superuser: they are the
 * administrator's way in when everything else is taken.
 *
 * <p>This class is immutable.
 */
public final class ServerLimit {

  private final int maxConnections;
  private final int superuserReserved;
  private final int reserved;
  private final int reserve;
  private final String serverVersion;

  ServerLimit(
      int maxConnections, int superuserReserved, int reserved, int reserve, String serverVersion) {
    this.maxConnections = maxConnections;
    this.superuserReserved = superuserReserved;
    this.reserved = reserved;
    this.reserve = reserve;
    this.serverVersion = serverVersion;
  }

  /** Reads the server's settings over {@code connection}. */
  static ServerLimit read(Connection connection, int reserve) throws SQLException {
    try (Statement st = connection.createStatement();
        ResultSet rs =
            st.executeQuery(
                "SELECT current_setting('max_connections'),"
                    + " current_setting('superuser_reserved_connections'),"
                    + " current_setting('reserved_connections', true),"
                    + " current_setting('server_version')")) {
      rs.next();
      String reservedSetting = rs.getString(3); // null before PostgreSQL 16
      return new ServerLimit(
          Integer.parseInt(rs.getString(1)),
          Integer.parseInt(rs.getString(2)),
          reservedSetting == null ? 0 : Integer.parseInt(reservedSetting),
          reserve,
          rs.getString(4));
    }
  }

  /** The server's {@code max_connections}. */
  public int maxConnections() {
    return maxConnections;
  }

  /** The server's {@code superuser_reserved_connections}. */
  public int superuserReservedConnections() {
    return superuserReserved;
  }

  /**
   * The server's {@code reserved_connections}; 0 before PostgreSQL 16, which has no such setting.
   */
  public int reservedConnections() {
    return reserved;
  }

  /** The connections left to other clients, as configured. */
  public int reserve() {
    return reserve;
  }

  /** The server's {@code server_version}, for messages. */
  public String serverVersion() {
    return serverVersion;
  }

  /**
   * What this application's pools may hold together; may be zero or negative when over-reserved.
   */
  public int usable() {
    return maxConnections - superuserReserved - reserved - reserve;
  }

  /**
   * The arithmetic behind {@link #usable()}, for messages: {@code max_connections 100 -
   * superuser_reserved_connections 3 - reserve for other clients 10 = 87}.
   */
  public String explain() {
    StringBuilder sb =
        new StringBuilder("max_connections ")
            .append(maxConnections)
            .append(" - superuser_reserved_connections ")
            .append(superuserReserved);
    if (reserved > 0) {
      sb.append(" - reserved_connections ").append(reserved);
    }
    return sb.append(" - reserve for other clients ")
        .append(reserve)
        .append(" = ")
        .append(usable())
        .toString();
  }

  @Override
  public String toString() {
    return "ServerLimit{" + explain() + ", server_version=" + serverVersion + "}";
  }
}
