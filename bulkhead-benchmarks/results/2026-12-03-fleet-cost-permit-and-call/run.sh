#!/bin/bash
# FleetCost rounds, one subject per JVM: run.sh OUT ROUNDS LABEL=JAR:SUBJECT[:OPERATION]...
# Each round runs the labels in the order given; each label in three JVMs started together.
# This folder: run.sh . 5 local=$JAR:local clocked=$JAR:clocked fleet=$JAR:fleet \
#   local-call=$JAR:local:call clocked-call=$JAR:clocked:call fleet-call=$JAR:fleet:call
# JAR is eb4af76's bulkhead-benchmarks/target/benchmarks.jar.
out=$1; rounds=$2; shift 2; mkdir -p "$out"
for r in $(seq 1 "$rounds"); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; jar=${rest%%:*}; what=${rest#*:}
    subject=${what%%:*}; operation=permit; [[ $what == *:* ]] && operation=${what#*:}
    echo "round $r $label load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
    for j in 1 2 3; do
      java -cp "$jar" io.bulkhead.benchmarks.FleetCost redis://127.0.0.1:6379 3s 10s "$subject" "$operation" \
        > "$out/round$r-$label-jvm$j.json" 2> "$out/round$r-$label-jvm$j.err" &
    done
    wait
  done
done
echo "end load $(cut -d' ' -f1-3 /proc/loadavg)" >> "$out/loads.txt"
