#!/usr/bin/env bash
# The HTTP edge against its peers: one Jetty 12 server and one trivial handler behind nothing
# (plain), behind Jetty's QoSHandler (qos) and behind our BulkheadHandler (bulkhead), both guards
# with the same limit, no queue, driven by h2load (HTTP/1.1, one thread). The server is pinned to
# core 0 and h2load to core 1, so the load tool does not take the server's CPU; each round runs the
# three variants one after the other (a fresh JVM each, in an order that rotates from round to round)
# and report.py gives the median and range over the rounds.
#
# Three cases per variant and round:
#   below     BELOW connections (half the limit) to /, answered at once: the guard's own cost
#   below-5ms BELOW connections to /slow, answered after WORK without a thread: the latency to beat
#   over      OVER connections (ten times the limit) to /slow: the guards refuse what exceeds the limit
#
#   bulkhead-benchmarks/edge-bench.sh DIR [--rounds 5] [--seconds 10] [--warmup 5] [--case-warmup 5]
#       [--variants "plain qos bulkhead"] [--cases "below below-5ms over"] [--before-jar JAR]
#       [--change "TEXT"]
#
# --case-warmup: before each case is measured, its own load runs unmeasured for that many seconds,
# again (up to 4 passes) while the JIT compiler threads took over 1% of a pass.
# A change of load deoptimises code the JIT compiled for the previous one (from the overload
# warm-up's 503s to the answers below the limit, from / to /slow), and the recompilation then ran on
# the server's core through the first seconds of the measured case: -XX:+PrintCompilation showed C2
# recompiling some 60 of Jetty's request-path methods there for BulkheadHandler (0.3-0.8 s of C2 CPU
# in an 8 s case), against 7 for plain Jetty, and that, not the handler's own work, was its p99 gap
# below the limit (results/edge-p99/). 0 measures right after the previous case, as before.
#
# --before-jar adds the variant bulkhead-before: BulkheadHandler as built in JAR (an earlier build of
# benchmarks.jar), for a before/after comparison of a change in the same interleaved run; --change
# names that change in report.py's heading for the comparison.
#
# Writes DIR/edge-runs.jsonl (one line per case and round), DIR/edge-machine.json and, from
# EdgeAllocation, DIR/edge-allocation.json (bytes and CPU per request per variant). Each round
# takes the lock $BENCH_LOCK (a file; none when unset), so that no other
# measurement runs at the same time, and gives it back between rounds. Needs h2load
# (apt-get install nghttp2-client) and taskset; builds nothing: build the jar first with
#   mvn -B -q -Pbenchmarks -pl bulkhead-benchmarks -am package -DskipTests
set -euo pipefail
if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 DIR [--rounds 5] [--seconds 10] [--warmup 5] [--case-warmup 5] [--variants LIST] [--cases LIST] [--before-jar JAR] [--change TEXT]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
rounds=5 seconds=10 warmup=5 case_warmup=5 variants="plain qos bulkhead" cases="below below-5ms over" before_jar=
change=
while [[ $# -gt 0 ]]; do
  case "$1" in
    --rounds) rounds=$2; shift 2 ;;
    --variants) variants=$2; shift 2 ;;
    --cases) cases=$2; shift 2 ;;
    --before-jar) before_jar=$(cd "$(dirname "$2")" && pwd)/$(basename "$2"); variants="$variants bulkhead-before"; shift 2 ;;
    --seconds) seconds=$2; shift 2 ;;
    --warmup) warmup=$2; shift 2 ;;
    --case-warmup) case_warmup=$2; shift 2 ;;
    --change) change=$2; shift 2 ;;
    *) echo "edge-bench: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
jar=${BENCH_JAR:-bulkhead-benchmarks/target/benchmarks.jar} # a copy keeps a rebuild from changing a run
for tool in h2load taskset; do
  command -v "$tool" >/dev/null || { echo "edge-bench: $tool is missing" >&2; exit 1; }
done
[[ -f "$jar" ]] || { echo "edge-bench: $jar is missing; build it first" >&2; exit 1; }
limit=64 below=32 over=640 queue=0 wait=1s work=5ms
# A case's warm-up ends once the JIT compiler threads took under this share of a pass, or after
# this many passes.
jit_quiet_percent=1 case_warmup_passes=4
lock=${BENCH_LOCK:-/dev/null}

runs="$out/edge-runs.jsonl"
: > "$runs"
{
  echo "{"
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"cpu\": \"$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)\","
  echo "  \"cores\": $(nproc),"
  echo "  \"java\": \"$(java -version 2>&1 | head -n1 | sed 's/"/\\"/g')\","
  echo "  \"h2load\": \"$(h2load --version | head -n1)\","
  echo "  \"limit\": $limit, \"queue\": $queue, \"wait\": \"$wait\", \"work\": \"$work\","
  echo "  \"below\": $below, \"over\": $over, \"rounds\": $rounds, \"seconds\": $seconds, \"warmup\": $warmup,"
  echo "  \"case_warmup\": $case_warmup,"
  echo "  \"variants\": \"$variants\", \"cases\": \"$cases\", \"change\": \"${change//\"/\\\"}\","
  echo "  \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""
  echo "}"
} > "$out/edge-machine.json"

# CPU seconds (user + system) a process has used so far.
cpu_of() { awk -v hz="$(getconf CLK_TCK)" '{print ($14 + $15) / hz}' "/proc/$1/stat"; }
# CPU seconds of the process's JIT compiler threads (C1, C2): compiling is a warm-up cost, not the
# cost of an answer, and at a few seconds of warm-up on a shared core it still took a sixth of the
# server's CPU in a case (perf, 2026-12-01). The server runs with a fixed number of compiler
# threads (-XX:-UseDynamicNumberOfCompilerThreads), so none exits and takes its time with it.
jit_cpu_of() {
  local hz t=0 f
  hz=$(getconf CLK_TCK)
  for f in /proc/"$1"/task/*; do
    [[ "$(cat "$f/comm" 2>/dev/null)" == C[12]\ CompilerThre* ]] || continue
    t=$(awk -v t="$t" -v hz="$hz" '{sub(/^.*\) /, ""); print t + ($12 + $13) / hz}' "$f/stat" 2>/dev/null || echo "$t")
  done
  echo "$t"
}
# Context switches (voluntary and not) of all the process's threads so far: a thread hand-off per
# request would show as two or more per answer.
switches_of() {
  cat /proc/"$1"/task/*/status 2>/dev/null \
    | awk '/^(non)?voluntary_ctxt_switches/ {n += $2} END {print n + 0}'
}

server_pid=
cleanup() { [[ -n "$server_pid" ]] && kill "$server_pid" 2>/dev/null; wait 2>/dev/null || true; }
trap cleanup EXIT

# measure VARIANT ROUND CASE CONNECTIONS PATH PORT
measure() {
  local log="$out/h2load.log" time_file="$out/h2load.time" before after
  rm -f "$log"
  local passes=0 jit_a jit_b
  while (( case_warmup > 0 && passes < case_warmup_passes )); do
    # This case's own load, unmeasured: the JIT recompiles what the previous load deoptimised.
    # Again while the compiler threads took over jit_quiet_percent of a pass: on a shared core
    # one pass was not always enough to drain the recompilations.
    passes=$((passes + 1))
    sleep 2
    jit_a=$(jit_cpu_of "$server_pid")
    taskset -c 1 h2load --h1 -t 1 -c "$4" -m 1 -D "$case_warmup" "http://127.0.0.1:$6$5" > /dev/null 2>&1
    jit_b=$(jit_cpu_of "$server_pid")
    awk -v a="$jit_a" -v b="$jit_b" -v s="$case_warmup" -v q="$jit_quiet_percent" \
      'BEGIN { exit !((b - a) * 100 < s * q) }' && break
  done
  # The previous run's connections close first (after ten times the limit, about a second).
  sleep 2
  before=$(cpu_of "$server_pid") jit_before=$(jit_cpu_of "$server_pid")
  switches_before=$(switches_of "$server_pid")
  taskset -c 1 /usr/bin/time -f '%U %S' -o "$time_file" \
    h2load --h1 -t 1 -c "$4" -m 1 -D "$seconds" --log-file="$log" "http://127.0.0.1:$6$5" \
    > "$out/h2load.out" 2>&1
  after=$(cpu_of "$server_pid") jit_after=$(jit_cpu_of "$server_pid")
  switches_after=$(switches_of "$server_pid")
  python3 bulkhead-benchmarks/h2load-summary.py "$log" "$seconds" "$runs" \
    variant="$1" round="$2" case="$3" connections="$4" \
    server_cpu_s="$(awk -v a="$before" -v b="$after" 'BEGIN{print b - a}')" \
    server_jit_cpu_s="$(awk -v a="$jit_before" -v b="$jit_after" 'BEGIN{print b - a}')" \
    server_switches="$((switches_after - switches_before))" \
    server_threads="$(ls /proc/"$server_pid"/task | wc -l)" \
    client_cpu_s="$(awk '{print $1 + $2}' "$time_file")" \
    case_warmup_passes="$passes" load="$(cut -d' ' -f1 /proc/loadavg)"
  rm -f "$log"
}

exec 9>>"$lock"
for ((round = 1; round <= rounds; round++)); do
  list=($variants)
  shift_by=$(( (round - 1) % ${#list[@]} ))
  order=("${list[@]:shift_by}" "${list[@]:0:shift_by}")
  flock 9
  echo "== round $round/$rounds: ${order[*]} (load $(cut -d' ' -f1-3 /proc/loadavg))"
  for variant in "${order[@]}"; do
    port_file="$out/edge.port"
    rm -f "$port_file"
    server_jar=$jar server_variant=$variant
    if [[ "$variant" == bulkhead-before ]]; then server_jar=$before_jar server_variant=bulkhead; fi
    taskset -c 0 java -XX:+UseG1GC -Xms512m -Xmx512m -XX:-UseDynamicNumberOfCompilerThreads -cp "$server_jar" \
      io.bulkhead.benchmarks.edge.EdgeServer "$server_variant" --limit $limit --queue $queue \
      --wait $wait --work $work --port-file "$port_file" > "$out/edge-server.out" 2>&1 &
    server_pid=$!
    for _ in $(seq 100); do [[ -s "$port_file" ]] && break; sleep 0.1; done
    port=$(cat "$port_file")
    # Warm-up: the JIT compiles every path the measured runs take (admitted, refused).
    taskset -c 1 h2load --h1 -t 1 -c $below -m 1 -D "$warmup" "http://127.0.0.1:$port/" > /dev/null 2>&1
    sleep 1
    taskset -c 1 h2load --h1 -t 1 -c $over -m 1 -D "$warmup" "http://127.0.0.1:$port/slow" > /dev/null 2>&1
    for c in $cases; do
      case "$c" in
        below) measure "$variant" "$round" below $below / "$port" ;;
        below-5ms) measure "$variant" "$round" below-5ms $below /slow "$port" ;;
        over) measure "$variant" "$round" over $over /slow "$port" ;;
        *) echo "edge-bench: unknown case $c" >&2; exit 2 ;;
      esac
    done
    kill "$server_pid"; wait "$server_pid" 2>/dev/null || true; server_pid=
    tail -n "$(wc -w <<< "$cases")" "$runs" | python3 -c '
import json, sys
for line in sys.stdin:
    r = json.loads(line)
    ok = r["status"].get("200", {})
    print("  %-8s %-9s %8.0f answers/s, 200: %8.0f/s p99 %6.2f ms, 503: %8.0f/s" % (
        r["variant"], r["case"], r["all"]["per_s"], ok.get("per_s", 0), ok.get("p99_ms") or 0,
        r["status"].get("503", {}).get("per_s", 0)))'
  done
  flock -u 9
done
if [[ "$variants" == "plain qos bulkhead" ]]; then
  flock 9
  echo "== bytes and CPU per request (EdgeAllocation, in-memory connector)"
  java -XX:+UseG1GC -Xms512m -Xmx512m -cp "$jar" io.bulkhead.benchmarks.edge.EdgeAllocation 200000 \
    2> /dev/null > "$out/edge-allocation.json"
  cat "$out/edge-allocation.json"
  flock -u 9
fi
sed -i "s/^}$/, \"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"\n}/" "$out/edge-machine.json"
rm -f "$out/edge.port" "$out/h2load.out" "$out/h2load.time"
