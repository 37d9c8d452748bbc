package io.bulkhead.jdbc;

import com.zaxxer.hikari.HikariDataSource;
import io.bulkhead.Permit;
import java.lang.reflect.InvocationHandler;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Method;
import java.lang.reflect.Proxy;
import java.sql.CallableStatement;
import java.sql.Connection;
import java.sql.DatabaseMetaData;
import java.sql.PreparedStatement;
import java.sql.SQLException;
import java.sql.Statement;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.BooleanSupplier;

/*
 * The connection handed to the application: HikariCP's connection plus the compartment permit that
 * admitted the caller. The permit is what keeps the compartment's count of calls holding a connection
 * true, so it must be given back exactly once, when the application is done with the connection.
 *
 * Algorithm
 * ---------
 * A dynamic proxy forwards every java.sql.Connection method to HikariCP's connection, except:
 *   close()        first caller wins a CAS on `done`; it closes HikariCP's connection (returning it to
 *                  the pool, or evicting it first when the pool shrank and counts it as surplus)
 *                  and then, in a finally block, closes the permit. Later calls do nothing.
 *   abort(e)       first caller wins the same CAS; it aborts the physical connection, evicts it from
 *                  the pool (so no later borrower is handed a dead connection), closes HikariCP's
 *                  connection quietly, and closes the permit in a finally block.
 *   isClosed()     true once `done` is set, or when HikariCP's connection says so.
 *   statements and DatabaseMetaData come back wrapped so that their getConnection() returns this
 *                  proxy, not HikariCP's connection: closing what stmt.getConnection() returns must
 *                  give the permit back too.
 *   unwrap(T)      this proxy if it is a T, otherwise the driver's connection (never HikariCP's, whose
 *                  close would return the connection and strand the permit).
 * The pool side (WorkloadPool.getConnection) closes the permit itself when HikariCP throws before a
 * connection exists, so there is exactly one release path per outcome: this class for a connection
 * that was handed out, the pool for one that never was.
 *
 * Order: the connection goes back to HikariCP before the permit is released, so the caller admitted
 * next finds an idle connection instead of waiting inside HikariCP for this one.
 *
 * Invariants
 * ----------
 *   I1 the permit is closed exactly once per handed-out connection: only the thread that wins the CAS
 *      on `done` closes it, and it does so in a finally block, whatever HikariCP or the driver throw.
 *      (Permit.close() is itself idempotent; the CAS is there so that HikariCP's close, which is not
 *      safe to run twice concurrently, runs once.)
 *   I2 HikariCP's connection is closed (returned or evicted) before the permit is released.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 double close. T1 and T2 both call close(). One CAS wins, say T1's; T1 returns the connection
 *      and releases the permit; T2 sees `done` and returns at once. HikariCP's recycle runs once.
 *   R2 abort vs close. T1 (a watchdog) calls abort while T2 (the worker) calls close. Whoever wins the
 *      CAS does the whole job; the loser returns. If close won, abort is a no-op on a closed
 *      connection, as JDBC specifies. If abort won, T2's close returns at once; T2's statement calls
 *      afterwards fail with "connection is closed" from HikariCP.
 *   R3 close while a statement runs. T1 runs a query on the connection; T2 closes it. HikariCP closes
 *      the open statements and returns the connection; T1's query fails with an SQLException. The
 *      permit is released by T2 once, as R1.
 */
final class PermitConnection implements InvocationHandler {

  private static final Class<?>[] CONNECTION = {Connection.class};

  private final Connection target;
  private final Permit permit;
  private final HikariDataSource pool;
  private final String poolName;
  private final BooleanSupplier surplus;
  private final AtomicBoolean done = new AtomicBoolean();

  private PermitConnection(
      Connection target,
      Permit permit,
      HikariDataSource pool,
      String poolName,
      BooleanSupplier surplus) {
    this.target = target;
    this.permit = permit;
    this.pool = pool;
    this.poolName = poolName;
    this.surplus = surplus;
  }

  /**
   * Returns {@code target} behind a proxy that closes {@code permit} when the connection is closed;
   * at that close, {@code surplus} says (and counts) whether the connection leaves the pool instead
   * of going back to it.
   */
  static Connection wrap(
      Connection target,
      Permit permit,
      HikariDataSource pool,
      String poolName,
      BooleanSupplier surplus) {
    return (Connection)
        Proxy.newProxyInstance(
            PermitConnection.class.getClassLoader(),
            CONNECTION,
            new PermitConnection(target, permit, pool, poolName, surplus));
  }

  @Override
  public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
    String name = method.getName();
    int arity = args == null ? 0 : args.length;
    switch (name) {
      case "close":
        if (arity == 0) {
          close();
          return null;
        }
        break;
      case "abort":
        if (arity == 1) {
          abort((Executor) args[0]);
          return null;
        }
        break;
      case "isClosed":
        if (arity == 0) {
          return done.get() || target.isClosed();
        }
        break;
      case "toString":
        if (arity == 0) {
          return "BulkheadConnection{pool=" + poolName + (done.get() ? ", closed}" : ", open}");
        }
        break;
      default:
        break;
    }
    Object own = answerAsProxy(proxy, name, args, arity);
    if (own != null) {
      return own;
    }
    Object result = forward(target, method, args);
    return rewrap((Connection) proxy, method.getReturnType(), result);
  }

  private void close() throws SQLException {
    if (!done.compareAndSet(false, true)) {
      return;
    }
    try {
      if (surplus.getAsBoolean()) {
        pool.evictConnection(target); // closed for good before anyone can borrow it again
      }
      target.close();
    } finally {
      permit.close();
    }
  }

  private void abort(Executor executor) throws SQLException {
    if (executor == null) {
      throw new SQLException("abort needs an executor but was given null");
    }
    if (!done.compareAndSet(false, true)) {
      return;
    }
    try {
      target.abort(executor);
    } finally {
      try {
        pool.evictConnection(target);
        target.close();
      } catch (SQLException | RuntimeException ignored) {
        // The physical connection is being torn down; HikariCP has marked it evicted and will not
        // hand it out again. What its close reports about the dead socket is not news.
      } finally {
        permit.close();
      }
    }
  }

  /** Statements and metadata report this proxy as their connection. */
  private static Object rewrap(Connection owner, Class<?> type, Object result) {
    if (result == null) {
      return null;
    }
    if (type == Statement.class
        || type == PreparedStatement.class
        || type == CallableStatement.class
        || type == DatabaseMetaData.class) {
      return Proxy.newProxyInstance(
          PermitConnection.class.getClassLoader(),
          new Class<?>[] {type},
          new OwnedBy(owner, result));
    }
    return result;
  }

  /**
   * What each of these proxies answers about itself: unwrap and isWrapperFor for the interface it
   * implements, and identity equals and hashCode. Returns null, never an answer to one of these,
   * for any other call, which the proxy then forwards.
   */
  private static Object answerAsProxy(Object proxy, String name, Object[] args, int arity) {
    switch (name) {
      case "unwrap":
        return arity == 1 && ((Class<?>) args[0]).isInstance(proxy) ? proxy : null;
      case "isWrapperFor":
        return arity == 1 && ((Class<?>) args[0]).isInstance(proxy) ? Boolean.TRUE : null;
      case "equals":
        return arity == 1 ? Boolean.valueOf(proxy == args[0]) : null;
      case "hashCode":
        return arity == 0 ? Integer.valueOf(System.identityHashCode(proxy)) : null;
      default:
        return null;
    }
  }

  static Object forward(Object target, Method method, Object[] args) throws Throwable {
    try {
      return method.invoke(target, args);
    } catch (InvocationTargetException e) {
      throw e.getCause();
    }
  }

  /** A statement or metadata object whose getConnection() returns the permit-holding connection. */
  private static final class OwnedBy implements InvocationHandler {

    private final Connection owner;
    private final Object target;

    OwnedBy(Connection owner, Object target) {
      this.owner = owner;
      this.target = target;
    }

    @Override
    public Object invoke(Object proxy, Method method, Object[] args) throws Throwable {
      int arity = args == null ? 0 : args.length;
      if (arity == 0 && method.getName().equals("getConnection")) {
        return owner;
      }
      Object own = answerAsProxy(proxy, method.getName(), args, arity);
      return own != null ? own : forward(target, method, args);
    }
  }
}
