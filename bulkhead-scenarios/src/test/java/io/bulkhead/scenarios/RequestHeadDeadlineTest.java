package io.bulkhead.scenarios;

import static java.util.concurrent.TimeUnit.SECONDS;
import static org.assertj.core.api.Assertions.assertThat;
import static org.awaitility.Awaitility.await;

import java.io.InputStream;
import java.io.OutputStream;
import java.net.InetAddress;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.time.Duration;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import org.eclipse.jetty.http.HttpHeader;
import org.eclipse.jetty.io.Content;
import org.eclipse.jetty.server.Handler;
import org.eclipse.jetty.server.HttpConnectionFactory;
import org.eclipse.jetty.server.Request;
import org.eclipse.jetty.server.Response;
import org.eclipse.jetty.server.Server;
import org.eclipse.jetty.server.ServerConnector;
import org.eclipse.jetty.util.Callback;
import org.eclipse.jetty.util.thread.ScheduledExecutorScheduler;
import org.eclipse.jetty.util.thread.Scheduler;
import org.junit.jupiter.api.Test;

class RequestHeadDeadlineTest {

  /** Long enough that no check runs during the test: only closing can end the pending one. */
  private static final Duration DEADLINE = Duration.ofSeconds(37);

  @Test
  void closingAConnection_cancelsItsPendingCheck_soTheSchedulerNoLongerHoldsIt() throws Exception {
    RecordingScheduler scheduler = new RecordingScheduler(DEADLINE.toNanos());
    Server server = new Server();
    ServerConnector connector =
        new ServerConnector(server, null, scheduler, null, 1, 1, new HttpConnectionFactory());
    connector.setHost("127.0.0.1");
    connector.setPort(0);
    connector.addEventListener(new RequestHeadDeadline(connector, DEADLINE));
    server.addConnector(connector);
    server.setHandler(
        new Handler.Abstract() {
          @Override
          public boolean handle(Request request, Response response, Callback callback) {
            response.getHeaders().put(HttpHeader.CONNECTION, "close");
            Content.Sink.write(response, true, "ok\n", callback);
            return true;
          }
        });
    server.start();
    try {
      try (Socket socket = new Socket(InetAddress.getLoopbackAddress(), connector.getLocalPort())) {
        OutputStream out = socket.getOutputStream();
        out.write("GET / HTTP/1.1\r\nHost: x\r\n\r\n".getBytes(StandardCharsets.US_ASCII));
        out.flush();
        socket.setSoTimeout((int) SECONDS.toMillis(30));
        InputStream in = socket.getInputStream();
        String answer = new String(in.readAllBytes(), StandardCharsets.US_ASCII);
        assertThat(answer).startsWith("HTTP/1.1 200").endsWith("ok\n");
      }

      assertThat(scheduler.checks).as("the connection's head-deadline checks").hasSize(1);
      RecordedTask check = scheduler.checks.peek();
      await().atMost(30, SECONDS).untilTrue(check.cancelled);
    } finally {
      server.stop();
    }
  }

  /** Jetty's scheduler, remembering the tasks scheduled with the deadline's delay. */
  private static final class RecordingScheduler extends ScheduledExecutorScheduler {
    private final long deadlineNanos;
    final Queue<RecordedTask> checks = new ConcurrentLinkedQueue<>();

    RecordingScheduler(long deadlineNanos) {
      this.deadlineNanos = deadlineNanos;
    }

    @Override
    public Scheduler.Task schedule(Runnable task, long delay, TimeUnit unit) {
      Scheduler.Task scheduled = super.schedule(task, delay, unit);
      if (unit.toNanos(delay) != deadlineNanos) {
        return scheduled;
      }
      RecordedTask recorded = new RecordedTask(scheduled);
      checks.add(recorded);
      return recorded;
    }
  }

  private static final class RecordedTask implements Scheduler.Task {
    private final Scheduler.Task task;
    final AtomicBoolean cancelled = new AtomicBoolean();

    RecordedTask(Scheduler.Task task) {
      this.task = task;
    }

    @Override
    public boolean cancel() {
      boolean wasPending = task.cancel();
      if (wasPending) {
        cancelled.set(true);
      }
      return wasPending;
    }
  }
}
