/**
 * {@link LocalPostgres}: a PostgreSQL to run against, found on {@code 127.0.0.1:5432} or started
 * embedded. For the tests of {@code bulkhead-jdbc} and the checkout-vs-reports outage; not
 * published.
 */
package io.bulkhead.localdb;
