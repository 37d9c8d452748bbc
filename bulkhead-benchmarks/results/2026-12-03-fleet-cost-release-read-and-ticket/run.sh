#!/bin/bash
# FleetCost rounds, one subject per JVM: run.sh OUT ROUNDS LABEL=JAR:SUBJECT...
# Each round runs the labels in the order given; each label in three JVMs started together.
# clock/:  run.sh clock 3 local=$MAIN:local clocked=$MAIN:clocked fleet=$MAIN:fleet \
#            fleet-no-release-read=$CLOCK_EXPERIMENT:fleet
# ticket/: run.sh ticket 3 local=$MAIN:local fleet=$MAIN:fleet fleet-cached-ticket=$TICKET_EXPERIMENT:fleet
# MAIN is f8d4531's bulkhead-benchmarks/target/benchmarks.jar; the experiments' jars are that build
# with the folder's experiment.diff applied.
out=$1; rounds=$2; shift 2; mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; jar=${rest%:*}; subject=${rest##*:}
    echo "round $r $label load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
    for j in 1 2 3; do
      java -cp "$jar" io.bulkhead.benchmarks.FleetCost redis://127.0.0.1:6379 3s 10s "$subject" \
        > "$out/round$r-$label-jvm$j.json" 2> "$out/round$r-$label-jvm$j.err" &
    done
    wait
  done
done
echo "end load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
