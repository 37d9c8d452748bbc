#!/usr/bin/env bash
# diag.sh VARIANT JAR OUTDIR [extra jvm flags...]: one edge-bench-like run (warm-up, below, below-5ms)
# with GC log, compilation log and per-thread CPU per case. Run under flock.
set -euo pipefail
variant=$1 jar=$2 out=$3; shift 3
mkdir -p "$out"
pf="$out/port"; rm -f "$pf"
t0=$(date +%s.%N)
taskset -c 0 java -XX:+UseG1GC -Xms512m -Xmx512m -XX:-UseDynamicNumberOfCompilerThreads \
  -Xlog:gc*:file="$out/gc.log":uptime -Xlog:safepoint:file="$out/safepoint.log":uptime \
  -XX:+UnlockDiagnosticVMOptions -XX:+PrintCompilation "$@" -cp "$jar" \
  io.bulkhead.benchmarks.edge.EdgeServer "$variant" --limit 64 --queue 0 --wait 1s --work 5ms --port-file "$pf" > "$out/server.out" 2>&1 &
pid=$!
for _ in $(seq 100); do [[ -s "$pf" ]] && break; sleep 0.1; done
port=$(cat "$pf")
threads() { for f in /proc/$pid/task/*; do echo "$(cat $f/comm 2>/dev/null)|$(awk '{sub(/^.*\) /,""); print $12+$13}' $f/stat 2>/dev/null)"; done | awk -F'|' '{a[$1]+=$2} END{for(k in a) print k"|"a[k]}' | sort; }
mark() { echo "$1 $(awk -v a=$t0 -v b=$(date +%s.%N) 'BEGIN{printf "%.3f", b-a}')" >> "$out/marks"; }
: > "$out/marks"
taskset -c 1 h2load --h1 -t 1 -c 32 -m 1 -D 10 "http://127.0.0.1:$port/" > /dev/null 2>&1
sleep 1
taskset -c 1 h2load --h1 -t 1 -c 640 -m 1 -D 10 "http://127.0.0.1:$port/slow" > /dev/null 2>&1
for c in below below-5ms; do
  path=/; [[ $c == below-5ms ]] && path=/slow
  sleep 2
  threads > "$out/threads-$c.before"
  mark "$c-start"
  taskset -c 1 h2load --h1 -t 1 -c 32 -m 1 -D 8 "http://127.0.0.1:$port$path" > "$out/h2load-$c.out" 2>&1
  mark "$c-end"
  threads > "$out/threads-$c.after"
  join -t'|' "$out/threads-$c.before" "$out/threads-$c.after" | awk -F'|' '{d=$3-$2; if (d>0) printf "%-40s %.2f\n", $1, d/100}' > "$out/threads-$c.cpu"
done
kill $pid; wait $pid 2>/dev/null || true
