package io.bulkhead.docs;

import io.bulkhead.process.WorkerProcess;
import io.micrometer.tracing.Tracer;

/**
 * docs/operations.md: the report worker of docs/processes.md, whose resources get gauges, and the
 * application's tracer.
 */
@SuppressWarnings("unused")
abstract class OperationsGivens extends Givens {
  WorkerProcess reports;
  Tracer tracer;
}
