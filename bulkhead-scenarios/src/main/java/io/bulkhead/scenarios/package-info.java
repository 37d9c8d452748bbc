/**
 * The experiments the demo runs and the benchmarks measure against their peers, shared by both and
 * published by neither.
 *
 * <p>The slow-upstream experiment: a {@link FakeUpstream} that answers after a delay, a {@link
 * DemoApp} whose {@code /login} never calls it and whose {@code /chat} does, a {@link
 * LoadGenerator}, and the {@link Experiment} that runs them in {@link Mode shared and bulkhead
 * mode}. The checkout-vs-reports outage: {@link CheckoutVsReports} on a real PostgreSQL with one
 * shared pool and with split pools, and {@link LocalPostgres}, the server to run it on. The command
 * line that runs them is {@code bulkhead-demo}.
 *
 * <p>Applications use the libraries ({@code io.bulkhead}, {@code io.bulkhead.jdbc}, {@code
 * io.bulkhead.jetty}, {@code io.bulkhead.httpclient}), never this package.
 */
package io.bulkhead.scenarios;
