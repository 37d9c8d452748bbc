/**
 * Compartments at the edge of any Jakarta Servlet 6 container: Tomcat 11, Jetty 12 (ee10), or the
 * embedded server of a Spring MVC application.
 *
 * <h2>What it does</h2>
 *
 * <p>{@link io.bulkhead.servlet.BulkheadFilter} sends each request whose path matches a route
 * through that route's compartment. While the compartment has a free slot, the request runs as if
 * the filter were not there. When it is full, the request waits in the compartment's short FIFO
 * queue, for at most the compartment's {@code maxWait}, <em>without holding a container
 * thread</em>: the filter puts it into async mode and dispatches it again once a slot is handed to
 * it. When the queue is full too, or the wait runs out, the client gets a {@code 503} at once, with
 * a {@code Retry-After} the compartment derives from its measured latency, and the servlet never
 * sees the request. So a slow dependency behind {@code /chat} fills {@code /chat}'s compartment and
 * no more; {@code /login} keeps its threads.
 *
 * <h2>Setting it up</h2>
 *
 * <pre>{@code
 * Bulkhead llm = Bulkhead.builder("llm").limit(10).maxQueue(20)
 *     .maxWait(Duration.ofSeconds(1)).build();
 * BulkheadFilter filter = BulkheadFilter.builder()
 *     .route("/chat/*", llm)
 *     .bypass("/health")
 *     .rejectionBody((rejection, retryAfterSeconds, response) -> {
 *       response.setContentType("application/problem+json");
 *       return "{\"title\":\"busy\",\"status\":503}";
 *     })
 *     .build();
 *
 * FilterRegistration.Dynamic registration = servletContext.addFilter("bulkheads", filter);
 * registration.setAsyncSupported(true);
 * registration.addMappingForUrlPatterns(
 *     EnumSet.of(DispatcherType.REQUEST, DispatcherType.ASYNC), false, "/*");
 * }</pre>
 *
 * <p>Three things matter when you register it:
 *
 * <ul>
 *   <li><b>{@code asyncSupported}</b> on the filter and on every filter before it (servlets need it
 *       only for async of their own). Without it a request that has to wait waits on the
 *       container's thread (the filter logs this once).
 *   <li><b>{@code REQUEST} and {@code ASYNC} dispatches.</b> A waiting request is admitted through
 *       an {@code ASYNC} dispatch; the filter recognises it by a request attribute and lets it
 *       through holding its slot. Forwards, includes and error dispatches of requests it never
 *       routed pass untouched.
 *   <li><b>Order.</b> Put it early, before filters that do real work for a request (authentication
 *       that calls a database, say), so a refused request costs as little as possible.
 * </ul>
 *
 * <h2>How a request ends</h2>
 *
 * <table>
 *   <caption>What the client gets and what the compartment counts</caption>
 *   <tr><th>Case</th><th>Client</th><th>Counted as</th></tr>
 *   <tr><td>slot free</td><td>the servlet's answer</td><td>admitted</td></tr>
 *   <tr><td>waited, then a slot</td><td>the servlet's answer</td><td>admitted</td></tr>
 *   <tr><td>queue full</td><td>503 + Retry-After, at once</td><td>rejected, QUEUE_FULL</td></tr>
 *   <tr><td>waited {@code maxWait}</td><td>503 + Retry-After</td><td>rejected, WAIT_TIMEOUT</td></tr>
 *   <tr><td>async timeout while waiting (unbounded {@code maxWait} only)</td>
 *       <td>503, no Retry-After</td><td>cancelled</td></tr>
 *   <tr><td>request failed by the container while waiting ({@code AsyncListener.onError}), as an
 *       HTTP/2 stream reset is</td><td>nothing</td><td>cancelled</td></tr>
 * </table>
 *
 * <p>A client that closes its HTTP/1.1 connection while its request waits is not reported by Tomcat
 * 11 or Jetty 12 ee10, which do not read a parked request's connection (see {@link
 * io.bulkhead.servlet.BulkheadFilter}): its request stays queued until admitted or refused at
 * {@code maxWait}, and its slot is accounted for as usual. An HTTP/2 stream reset is reported by
 * both.
 *
 * <p>An admitted request holds its slot until the chain returns or throws (a {@code 500} from the
 * container, and the slot freed all the same) or, if the application started async itself, until
 * that async completes, fails or times out.
 *
 * <p>The Jetty 12 core handler {@code io.bulkhead.jetty.BulkheadHandler} does the same for
 * applications written against Jetty's own API; this module does not depend on Jetty, nor that one
 * on the Servlet API.
 */
@NullMarked
package io.bulkhead.servlet;

import org.jspecify.annotations.NullMarked;
