package io.bulkhead.jetty;

import io.bulkhead.internal.DaemonThreads;
import java.io.IOException;
import java.lang.System.Logger.Level;
import java.nio.channels.ClosedChannelException;
import java.nio.channels.ClosedSelectorException;
import java.nio.channels.SelectionKey;
import java.nio.channels.Selector;
import java.nio.channels.SocketChannel;
import java.util.ArrayDeque;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.Executor;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.locks.ReentrantLock;
import org.eclipse.jetty.http.HttpVersion;
import org.eclipse.jetty.server.ConnectionMetaData;
import org.eclipse.jetty.server.Request;

/*
 * Notices HTTP/1.x clients that close their connection while their request waits in a compartment,
 * or while it is handled without a body to read (see ProtectedExchange, R6).
 *
 * Why it exists
 * -------------
 * Jetty 12 reads an HTTP/1.x connection only when someone asks for request content. While a handler
 * holds a request without reading it (as a queued request is held), a client's FIN sits unread in the
 * socket and no Request failure listener hears of it (checked against Jetty 12.1.14: nothing arrives
 * however long one waits; the close is noticed only when the response is finally written). HTTP/2
 * differs: a stream reset reaches the failure listeners, which BulkheadHandler uses as well. So the
 * watcher registers the connection's SocketChannel, for OP_READ, with a selector of its own. A channel
 * may be registered with several selectors; Jetty's own registration is left alone.
 *
 * Algorithm
 * ---------
 * One thread, started by the first watch and ended by close(), blocks in select(). Registrations and
 * cancellations are queued as tasks for that thread: re-registering a channel whose previous key was
 * cancelled (the next request on a keep-alive connection) must wait until the selector has flushed the
 * cancelled key, and only the selecting thread knows when it has.
 *
 * Tasks are run in batches, BATCH after the first of them woke the thread. Most watched requests are
 * short (a handler that answers in a few milliseconds after an asynchronous call): their watch is
 * cancelled before it is registered, so the registration finds it cancelled and does nothing (R2),
 * and the request costs no registration, no deregistration and no wake-up of this thread; without the
 * batch each such request cost two wake-ups of this thread and two epoll_ctl calls (DESIGN.md, "HTTP
 * edges", has what that cost). A new watch is registered one batch later than the batch that found
 * it (`arrivals`, then `aged`): with a single batch, a watch made just before its batch ran was
 * registered at once, so a short request could be registered, deregistered, and the next request's
 * bytes on the still-registered socket woke this thread again before the deregistration ran. Waiting
 * one full batch registers only requests that last longer than BATCH. A client that leaves is noticed at most
 * about 2 * BATCH after its request began to be watched. The thread is woken only when it sleeps in
 * an untimed select, and by the first task after that (`sleeping`, below); it does not sleep untimed
 * while a watch waits to be registered.
 *
 * A watch that was never handed to the selector needs no deregistration, so cancel() queues one only
 * when the watcher thread may have registered it (`registering`, R6).
 *
 * A ready key is cancelled at once (one verdict per watch) and judged without reading:
 *   available() == 0  readable with no bytes is end of stream or an error: the client is gone.
 *   available() >  0  the client sent bytes (a pipelined request, more body, a TLS alert). They are
 *                     Jetty's and cannot be put back, so the watcher stops watching; the request stays
 *                     queued exactly as an unwatched one would.
 * The verdict's callback runs on the given executor, never on the selector thread.
 *
 * A client that half-closes (shuts down its output) but still waits for the answer looks the same as
 * one that left; like nginx, the watcher takes it as gone.
 *
 * Invariants
 * ----------
 *   W1 a watch fires at most once, and never after cancel(): one CAS of `state` from ACTIVE decides
 *      between FIRED, CANCELLED and DONE (stopped watching without a verdict).
 *   W2 only the watcher thread registers, cancels or selects, so a key is never touched concurrently.
 *   W3 the watcher never reads from a channel: every byte stays Jetty's.
 *
 * Races, as interleavings
 * -----------------------
 *   R1 admission vs disconnect. T1 admits the request and cancels its watch while T2, the watcher, has
 *      found the channel at end of stream. Both CAS `state` from ACTIVE; one wins. If T2 wins the
 *      callback runs, and the request's own state CAS in BulkheadHandler decides a second time, so the
 *      request is either abandoned or running, never both.
 *   R2 cancel before register. T1 cancels a watch whose registration task has not run; the task finds
 *      the state is no longer ACTIVE and does not register.
 *   R3 Jetty closes the channel (idle timeout, server stop) while it is watched: register throws
 *      ClosedChannelException, or the key turns invalid and is never reported; the watch ends without a
 *      verdict. Jetty tells the failure listeners itself in those cases.
 *   R4 watch vs close. The thread is started and the watcher closed under `lock`; a watch after close
 *      is refused (null), so no thread starts once the handler has stopped.
 *   R5 task vs sleep. T1 (submit) offers a task, then reads `sleeping`; T2 (the watcher) sets
 *      `sleeping`, then checks the queue before its untimed select. Both are volatile, so at least one
 *      sees the other: T1 wakes the selector (a wake-up before select makes that select return at once),
 *      or T2 finds the task and does not sleep. No task waits for an unrelated event.
 *   R6 cancel vs register. T1 (cancel) CASes `state` to CANCELLED, then reads `registering`; T2 (the
 *      watcher) sets `registering`, then reads `state` and registers only if it is still ACTIVE. Both
 *      are volatile, so at least one sees the other: T2 does not register, or T1 queues the
 *      deregistration (which finds the key, or no key, and is harmless either way). A key is never
 *      left registered for a cancelled watch.
 */
final class DisconnectWatcher implements AutoCloseable {

  private static final System.Logger LOG = System.getLogger("io.bulkhead.jetty");

  /** How long a batch of tasks gathers before it runs: see "Algorithm". */
  private static final long BATCH_MILLIS = 20;

  private final String threadName;
  private final Executor executor;
  private final ConcurrentLinkedQueue<Runnable> tasks = new ConcurrentLinkedQueue<>();

  /** Watches made since the last batch; registered a batch later, if still active. */
  private final ConcurrentLinkedQueue<Watch> arrivals = new ConcurrentLinkedQueue<>();

  /** Watches that have waited a full batch: registered by the next one. Watcher thread only. */
  private final ArrayDeque<Watch> aged = new ArrayDeque<>();

  private final ReentrantLock lock = new ReentrantLock();
  private Selector selector; // guarded by lock until published; then read by the watcher thread
  private Thread thread; // guarded by lock
  private volatile boolean closed;
  private final AtomicBoolean sleeping = new AtomicBoolean(); // in an untimed select (R5)
  private final AtomicLong verdicts = new AtomicLong(); // for tests

  DisconnectWatcher(String threadName, Executor executor) {
    this.threadName = threadName;
    this.executor = executor;
  }

  /** A request being watched. */
  final class Watch {
    private static final int ACTIVE = 0;
    private static final int FIRED = 1;
    private static final int CANCELLED = 2;
    private static final int DONE = 3;

    private final AtomicInteger state = new AtomicInteger(ACTIVE);
    private final SocketChannel channel;
    private final Runnable onGone;
    private volatile boolean registering; // the watcher thread may have registered it (R6)
    private SelectionKey key; // watcher thread only (W2)

    private Watch(SocketChannel channel, Runnable onGone) {
      this.channel = channel;
      this.onGone = onGone;
    }

    /** Stops watching; the callback will not run after this returns (W1). */
    void cancel() {
      if (state.compareAndSet(ACTIVE, CANCELLED) && registering) { // R6
        submit(this::dropKey);
      }
    }

    private void register(Selector sel) {
      registering = true; // before reading state (R6)
      if (state.get() != ACTIVE) {
        return; // R2
      }
      try {
        SelectionKey stale = channel.keyFor(sel);
        if (stale != null) {
          // The previous request on this connection was watched; flush its cancelled key first.
          stale.cancel();
          sel.selectNow(DisconnectWatcher.this::judge);
        }
        key = channel.register(sel, SelectionKey.OP_READ, this);
      } catch (ClosedChannelException e) {
        state.compareAndSet(ACTIVE, DONE); // R3
      } catch (IOException | RuntimeException e) {
        state.compareAndSet(ACTIVE, DONE);
        LOG.log(Level.DEBUG, "cannot watch " + channel + " for a disconnect", e);
      }
    }

    private void dropKey() {
      if (key != null) {
        key.cancel();
      }
    }
  }

  /**
   * Starts watching the connection of {@code request}; {@code onGone} runs once, on the executor,
   * if the client closes it first. Returns null when this connection cannot be watched this way
   * (HTTP/2 and later, a transport that is not a socket channel, or a closed watcher).
   */
  Watch watch(Request request, Runnable onGone) {
    ConnectionMetaData meta = request.getConnectionMetaData();
    HttpVersion version = meta.getHttpVersion();
    if (version == null || version.getVersion() >= HttpVersion.HTTP_2.getVersion()) {
      return null;
    }
    Object transport = meta.getConnection().getEndPoint().getTransport();
    if (!(transport instanceof SocketChannel)) {
      return null;
    }
    Watch w = new Watch((SocketChannel) transport, onGone);
    Selector sel = ensureRunning();
    if (sel == null) {
      return null;
    }
    arrivals.offer(w);
    wakeIfSleeping();
    return w;
  }

  private void submit(Runnable task) {
    tasks.offer(task);
    wakeIfSleeping();
  }

  private void wakeIfSleeping() {
    if (sleeping.get() && sleeping.compareAndSet(true, false)) { // R5
      Selector sel = selector();
      if (sel != null) {
        sel.wakeup();
      }
    }
  }

  private Selector selector() {
    lock.lock();
    try {
      return selector;
    } finally {
      lock.unlock();
    }
  }

  private Selector ensureRunning() {
    lock.lock();
    try {
      if (closed) {
        return null; // R4
      }
      if (thread == null) {
        try {
          selector = Selector.open();
        } catch (IOException e) {
          LOG.log(Level.WARNING, "cannot open a selector to watch for client disconnects", e);
          return null;
        }
        Selector sel = selector;
        thread = DaemonThreads.start(threadName, () -> loop(sel));
      }
      return selector;
    } finally {
      lock.unlock();
    }
  }

  private void loop(Selector sel) {
    try {
      while (!closed) {
        sleeping.set(true);
        if (tasks.isEmpty() && arrivals.isEmpty() && aged.isEmpty() && !closed) { // R5
          sel.select(this::judge);
        }
        sleeping.set(false);
        // Let the batch gather: a watch cancelled meanwhile is never registered.
        long end = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(BATCH_MILLIS);
        for (long left; !closed && (left = end - System.nanoTime()) > 0; ) {
          sel.select(this::judge, Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
        }
        Runnable task;
        while ((task = tasks.poll()) != null) {
          try {
            task.run();
          } catch (RuntimeException e) {
            LOG.log(Level.WARNING, "the disconnect watcher's task failed", e);
          }
        }
        for (Watch w; (w = aged.poll()) != null; ) {
          w.register(sel);
        }
        for (Watch w; (w = arrivals.poll()) != null; ) {
          aged.add(w); // registered by the next batch, if still active then
        }
      }
    } catch (IOException | ClosedSelectorException e) {
      if (!closed) {
        LOG.log(Level.WARNING, "the disconnect watcher stopped", e);
      }
    } finally {
      try {
        sel.close(); // cancels every key, so Jetty's channels are deregistered from this selector
      } catch (IOException e) {
        LOG.log(Level.DEBUG, "closing the disconnect watcher's selector", e);
      }
    }
  }

  private void judge(SelectionKey key) {
    try {
      onReady(key);
    } catch (RuntimeException e) {
      LOG.log(Level.WARNING, "the disconnect watcher failed to judge " + key.channel(), e);
    }
  }

  private void onReady(SelectionKey key) {
    Watch w = (Watch) key.attachment();
    key.cancel();
    if (w.state.get() != Watch.ACTIVE) {
      return; // cancelled, its deregistration not run yet: the bytes are the next request's
    }
    boolean gone = available(w.channel) == 0;
    verdicts.incrementAndGet();
    if (gone) {
      if (w.state.compareAndSet(Watch.ACTIVE, Watch.FIRED)) {
        try {
          executor.execute(w.onGone);
        } catch (RejectedExecutionException stopping) {
          w.onGone.run();
        }
      }
    } else {
      w.state.compareAndSet(Watch.ACTIVE, Watch.DONE);
    }
  }

  private static int available(SocketChannel channel) {
    try {
      return channel.socket().getInputStream().available();
    } catch (IOException e) {
      return 0; // reset, or closed under us: gone either way
    }
  }

  /** Stops the thread, if one was started, and deregisters every watched channel. */
  @Override
  public void close() {
    Thread t;
    Selector sel;
    lock.lock();
    try {
      if (closed) {
        return;
      }
      closed = true;
      t = thread;
      sel = selector;
    } finally {
      lock.unlock();
    }
    if (t == null) {
      return;
    }
    sel.wakeup();
    try {
      t.join(TimeUnit.SECONDS.toMillis(5));
    } catch (InterruptedException e) {
      Thread.currentThread().interrupt();
    }
  }

  /** How many readable sockets the watcher has judged; for tests. */
  long verdicts() {
    return verdicts.get();
  }

  /** Whether the watcher thread is running; for tests. */
  boolean isRunning() {
    lock.lock();
    try {
      return thread != null && thread.isAlive();
    } finally {
      lock.unlock();
    }
  }
}
