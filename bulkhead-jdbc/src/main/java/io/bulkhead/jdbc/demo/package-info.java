/**
 * The {@code demo db} experiment: the checkout-vs-reports outage measured on a real
 * PostgreSQL with one shared pool and with split pools ({@link io.bulkhead.jdbc.demo.CheckoutVsReports})
 * and the server to run it on ({@link io.bulkhead.jdbc.demo.LocalPostgres}). The command line is
 * {@code demo db} in {@code bulkhead-demo}.
 *
 * <p>This package is for the demo and the tests; applications use {@code io.bulkhead.jdbc}.
 */
package io.bulkhead.jdbc.demo;
