package io.bulkhead.scenarios;

import io.bulkhead.internal.Durations;
import java.time.Duration;
import java.util.concurrent.TimeUnit;
import org.eclipse.jetty.io.Connection;
import org.eclipse.jetty.server.Connector;
import org.eclipse.jetty.util.thread.Scheduler;

/*
 * Closes connections whose client takes longer than the deadline to send a request head.
 *
 * Why it exists
 * -------------
 * Jetty's idle timeout restarts with every byte, so a client that sends one byte of its head every few
 * seconds ("slowloris") holds its connection for ever; Jetty has no deadline on the head as a whole.
 * This listener adds one, using only what every Connection reports: requests whose head was parsed
 * (getMessagesIn), responses begun (getMessagesOut) and bytes received (getBytesIn).
 *
 * Algorithm
 * ---------
 * Each connection gets a check every `period` (the deadline), on Jetty's scheduler, from its opening
 * until it closes; closing cancels the pending check, so that a closed connection is not kept reachable
 * by the scheduler for up to a period (8,000 connections closing at once held about 95 MB of heap for
 * the deadline's 10 s in the slow-upstream experiment at 100 times its load). A check closes the
 * connection when either holds:
 *   A  first head late: at the first check no head has been parsed (messagesIn == 0). The client
 *      connected a whole period ago and has not finished its first head, sent bytes or not.
 *   B  later head late: the previous check saw bytes arrive while no request was in progress
 *      (messagesIn == messagesOut) and no head completed, and this check finds still no new head. So
 *      the head began before the previous check and is unfinished a whole period later.
 * A head is therefore cut off between one and two periods after it began (after its first byte for B,
 * after the connection opened for A); a silent kept-alive connection is left to the idle timeout.
 *
 * Invariants
 * ----------
 *   H1 a connection is closed only if a head has been in progress for at least one period: A counts
 *      from the opening, B from a check that already saw the head's bytes.
 *   H2 a check and the next never overlap (each schedules the next as its last step), so a watch's
 *      fields are touched by one thread at a time; the scheduler's hand-over orders them.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 head completes during a check. The check reads bytesIn after the head's bytes were counted but
 *      before messagesIn was incremented: it marks the connection as receiving a head. The next check
 *      finds messagesIn changed and clears the mark (H1 holds).
 *   R2 connection closes between checks. T2 (Jetty, closing) sets `closed`, then cancels the task in
 *      `next`; T1 (a check) schedules the next task, stores it in `next`, then reads `closed`. Both are
 *      volatile, so at least one sees the other: T2 cancels the new task, or T1 does. Cancelling a task
 *      that is running or already ran is harmless, and a check that runs anyway finds the endpoint
 *      closed and stops.
 */
final class RequestHeadDeadline implements Connection.Listener {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.scenarios");

  private final Connector connector;
  private final long periodNanos;

  RequestHeadDeadline(Connector connector, Duration deadline) {
    this.connector = connector;
    this.periodNanos = deadline.toNanos();
  }

  @Override
  public void onOpened(Connection connection) {
    Watch watch = new Watch(connection);
    connection.addEventListener(watch); // its onClosed cancels the pending check
    watch.schedule();
  }

  private final class Watch implements Connection.Listener {
    private final Connection connection;
    private boolean first = true;
    private long heads;
    private long bytes;
    private boolean receivingHead;
    private volatile Scheduler.Task next;
    private volatile boolean closed;

    Watch(Connection connection) {
      this.connection = connection;
    }

    void schedule() {
      Scheduler.Task task =
          connector.getScheduler().schedule(this::check, periodNanos, TimeUnit.NANOSECONDS);
      next = task;
      if (closed) {
        task.cancel(); // R2
      }
    }

    @Override
    public void onClosed(Connection closedConnection) {
      closed = true;
      Scheduler.Task task = next;
      if (task != null) {
        task.cancel(); // R2
      }
    }

    private void check() {
      if (!connection.getEndPoint().isOpen()) {
        return; // R2
      }
      long headsNow = connection.getMessagesIn();
      long bytesNow = connection.getBytesIn();
      boolean idle = headsNow == connection.getMessagesOut();
      boolean late = first ? headsNow == 0 : receivingHead && headsNow == heads;
      if (late) {
        LOG.log(
            System.Logger.Level.DEBUG,
            () ->
                "closing "
                    + connection.getEndPoint().getRemoteSocketAddress()
                    + ": no request head within "
                    + Durations.format(Duration.ofNanos(periodNanos)));
        connection.close();
        return;
      }
      receivingHead = idle && headsNow == heads && bytesNow > bytes;
      first = false;
      heads = headsNow;
      bytes = bytesNow;
      schedule();
    }
  }
}
