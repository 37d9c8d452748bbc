#!/bin/bash
out=$1; rounds=$2; mkdir -p $out
MAIN=/work/main/bulkhead-benchmarks/target/benchmarks.jar
EXP=/tmp/exp2-benchmarks.jar
for r in $(seq 1 $rounds); do
  for s in local fleet fleet-cached-ticket; do
    jar=$MAIN; subj=$s
    if [ $s = fleet-cached-ticket ]; then jar=$EXP; subj=fleet; fi
    echo "round $r $s load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/loads.txt
    for j in 1 2 3; do
      java -cp $jar io.bulkhead.benchmarks.FleetCost redis://127.0.0.1:6379 3s 10s $subj > $out/round$r-$s-jvm$j.json 2>$out/round$r-$s-jvm$j.err &
    done
    wait
  done
done
