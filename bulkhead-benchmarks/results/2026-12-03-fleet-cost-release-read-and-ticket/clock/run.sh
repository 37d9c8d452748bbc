#!/bin/bash
# usage: run.sh OUTDIR ROUNDS
out=$1; rounds=$2; mkdir -p $out
MAIN=/work/main/bulkhead-benchmarks/target/benchmarks.jar
EXP=/tmp/exp-benchmarks.jar
for r in $(seq 1 $rounds); do
  for s in local clocked fleet fleet-no-release-read; do
    jar=$MAIN; subj=$s
    if [ $s = fleet-no-release-read ]; then jar=$EXP; subj=fleet; fi
    echo "round $r $s load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/loads.txt
    for j in 1 2 3; do
      java -cp $jar io.bulkhead.benchmarks.FleetCost redis://127.0.0.1:6379 3s 10s $subj > $out/round$r-$s-jvm$j.json 2>$out/round$r-$s-jvm$j.err &
    done
    wait
  done
done
echo "end load $(cut -d' ' -f1-3 /proc/loadavg)" >> $out/loads.txt
