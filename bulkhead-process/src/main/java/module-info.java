/** A supervised worker process on one machine: {@link io.bulkhead.process.WorkerProcess}. */
module io.bulkhead.process {
  requires static transitive org.jspecify; // the annotations are part of the API; compile time only
  requires transitive io.bulkhead.core;
  requires transitive io.bulkhead.insight; // WorkerProcess.resources() is a ResourceView

  exports io.bulkhead.process;
}
