#!/usr/bin/env bash
# The slow-upstream experiment at ten and a hundred times its load: 800 chats + 500 logins, then
# 8,000 chats + 5,000 logins, with the server cap (50 per 130 requests) and the llm compartment
# (10 in flight, 20 waiting, 1 s) sized up by the same factor. The upstream and the app are two JVMs
# (ScaleProcess), so that each has its own open files and the app's heap and threads are measured
# alone. The load is sent by h2load (scale-load.py): an event-driven client on one thread per
# process whose own cost is small next to the app's, unlike the demo's `load` (a platform thread and
# a blocking socket per request, which at 13,000 requests was most of what the logins waited for).
#
# For each factor:
#   bulkhead   the experiment in bulkhead mode on a fresh app (its JIT compiles during the burst)
#   warm       the same load again on the same app once it holds no request
#   floor      on the same app, the logins alone: what a burst of that many connections costs the
#              client and the app with nothing else going on
#              (each of the three with the app's CPU by thread group: JIT, GC, Jetty, upstream
#              client; its threads 3 s in; the kernel's SYN retransmissions and accept-queue
#              overflows during it)
#   inflight   a fresh app with every chat admitted (server cap and llm limit at the chats), the
#              chats alone; its heap before, once every chat has arrived (counts read from the app's
#              /bulkheads), and once the load generator was killed and the app holds no request
#   queued     the same with the server cap and the llm limit at the experiment's llm limit, so that
#              every other chat waits at the server cap
#   shared     the experiment in shared mode, for contrast
#
#   bulkhead-benchmarks/scale-experiment.sh DIR [--factors "10 100"] [--delay 10s]
#
# Writes DIR/scale-<factor>-<run>.json and DIR/scale-machine.json, read by report.py
# (report.py DIR --only scale). Each factor holds the lock $BENCH_LOCK (a file; none when unset).
# The app's JVM options are $APP_JVM (default below). Needs h2load, nstat, jcmd. Builds nothing.
set -euo pipefail
if [[ $# -lt 1 || "$1" == -* ]]; then
  echo "usage: $0 DIR [--factors \"10 100\"] [--delay 10s]" >&2
  exit 2
fi
mkdir -p "$1"
out=$(cd "$1" && pwd)
shift
factors="10 100" delay=10s
while [[ $# -gt 0 ]]; do
  case "$1" in
    --factors) factors=$2; shift 2 ;;
    --delay) delay=$2; shift 2 ;;
    *) echo "scale-experiment: unknown option $1" >&2; exit 2 ;;
  esac
done
cd "$(dirname "$0")/.."
jar=${BENCH_JAR:-bulkhead-benchmarks/target/benchmarks.jar}
[[ -f "$jar" ]] || { echo "scale-experiment: $jar is missing; build it first" >&2; exit 1; }
command -v h2load >/dev/null || { echo "scale-experiment: h2load is missing (nghttp2-client)" >&2; exit 1; }
command -v nstat >/dev/null || { echo "scale-experiment: nstat is missing (iproute2)" >&2; exit 1; }
command -v jcmd >/dev/null || { echo "scale-experiment: jcmd is missing (a JDK, not a JRE)" >&2; exit 1; }
lock=${BENCH_LOCK:-/dev/null}
# Every request is a connection of its own, in the app and in the load generator.
ulimit -n "$(ulimit -Hn)"
java_cmd=(java -cp "$jar")
# The app's JVM: G1 with a fixed 2 GB heap, as a service would run it, and a young generation
# of 1 GB: G1 starts it at 5% of the heap (~100 MB), which at x100 collected 3-4 times per run,
# pauses of 70-200 ms on these two busy cores in the middle of the logins; a run allocates ~300 MB
read -r -a app_jvm <<< "${APP_JVM:--XX:+UseG1GC -Xms2g -Xmx2g -Xmn1g}"

{
  echo "{"
  echo "  \"date\": \"$(date -u +%Y-%m-%dT%H:%M:%SZ)\","
  echo "  \"cpu\": \"$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)\","
  echo "  \"cores\": $(nproc),"
  echo "  \"memory\": \"$(free -h | awk '/^Mem:/ {print $2}')\","
  echo "  \"java\": \"$(java -version 2>&1 | head -n1 | sed 's/"/\\"/g')\","
  echo "  \"somaxconn\": $(cat /proc/sys/net/core/somaxconn),"
  echo "  \"client\": \"h2load (nghttp2 $(h2load --version | awk '{print $2}' | sed 's/nghttp2\///'), --h1, one thread each)\","
  echo "  \"app_jvm\": \"${app_jvm[*]}\","
  echo "  \"open_files\": $(ulimit -n), \"delay\": \"$delay\", \"factors\": \"$factors\","
  echo "  \"load_before\": \"$(cut -d' ' -f1-3 /proc/loadavg)\""
  echo "}"
} > "$out/scale-machine.json"

pids=()
cleanup() { for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done; wait 2>/dev/null || true; }
trap cleanup EXIT

wait_for() { for _ in $(seq 300); do [[ -s "$1" ]] && return 0; sleep 0.1; done; echo "timed out waiting for $1" >&2; return 1; }

# heap_kb PID: the used heap in KiB after a full collection
heap_kb() {
  jcmd "$1" GC.run > /dev/null
  jcmd "$1" GC.run > /dev/null
  jcmd "$1" GC.heap_info | sed -n 's/.* used \([0-9]*\)K.*/\1/p' | head -n1
}
threads_of() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
# fds_of PID: the process's open files (its sockets: connections from clients and to the upstream)
fds_of() { ls "/proc/$1/fd" | wc -l; }

# held PORT: "IN_FLIGHT WAITING" of the app's server cap, from its /bulkheads (outside the cap)
held() {
  curl -s --max-time 10 "http://127.0.0.1:$1/bulkheads" | python3 -c '
import json, sys
for c in json.load(sys.stdin)["compartments"]:
    if c["name"] == "server":
        s = c.get("stats", c)
        print(s["inFlight"], s["waiting"])'
}

# settle PORT COUNT: waits (up to 60 s) until the server cap holds COUNT requests, in flight
# and waiting together, or stops growing; the load generator of a big run needs time to send them
settle() {
  local last=-1 now
  for _ in $(seq 120); do
    now=$(held "$1" | awk '{print $1 + $2}')
    [[ -n "$now" && "$now" -ge "$2" ]] && return 0
    [[ "$now" == "$last" ]] && return 0
    last=$now
    sleep 0.5
  done
}

start_upstream() {
  rm -f "$out/upstream.port"
  "${java_cmd[@]}" -Xmx1g io.bulkhead.benchmarks.scale.ScaleProcess upstream --delay "$delay" \
    --port-file "$out/upstream.port" > "$out/upstream.log" 2>&1 &
  upstream_pid=$!; pids+=("$upstream_pid")
  wait_for "$out/upstream.port"
  upstream_port=$(cat "$out/upstream.port")
}

# start_app MODE SERVER_LIMIT LLM_LIMIT LLM_QUEUE MAX_CONNECTIONS STATS
start_app() {
  rm -f "$out/app.port"
  "${java_cmd[@]}" "${app_jvm[@]}" io.bulkhead.benchmarks.scale.ScaleProcess app \
    --mode "$1" --upstream "http://127.0.0.1:$upstream_port" --server-limit "$2" \
    --llm-limit "$3" --llm-queue "$4" --llm-wait 1s --max-connections "$5" \
    --port-file "$out/app.port" --stats-file "$6" > "$out/app.log" 2>&1 &
  app_pid=$!; pids+=("$app_pid")
  wait_for "$out/app.port"
  app_port=$(cat "$out/app.port")
}

stop() { kill "$1" 2>/dev/null || true; wait "$1" 2>/dev/null || true; }

# start_load CHATS LOGINS OUT: h2load (scale-load.py), chats at once and the logins 1 s later
start_load() {
  rm -f "$out/load.started"
  python3 bulkhead-benchmarks/scale-load.py --target "http://127.0.0.1:$app_port" --chats "$1" \
    --logins "$2" --logins-after 1 --out "$3" --workdir "$out" \
    --started-file "$out/load.started" > "$out/load.log" 2>&1 &
  load_pid=$!; pids+=("$load_pid")
}

# merge FILE key=value...: adds numeric fields to a JSON file
merge() {
  python3 - "$@" <<'PY'
import json, sys
path = sys.argv[1]
doc = json.load(open(path))
for pair in sys.argv[2:]:
    k, v = pair.split("=", 1)
    try:
        doc[k] = float(v) if "." in v else int(v)
    except ValueError:
        doc[k] = v
json.dump(doc, open(path, "w"), indent=2)
PY
}

# add_app_stats RESULT STATS: the app's own figures (written when it stopped), prefixed app_
add_app_stats() {
  python3 - "$1" "$2" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
doc.update({"app_" + k: v for k, v in json.load(open(sys.argv[2])).items()})
json.dump(doc, open(sys.argv[1], "w"), indent=2)
PY
}

# app_cpu FILE PREFIX PID BEFORE_JSON: the app's CPU by thread group since BEFORE_JSON, as PREFIX_*
app_cpu() {
  python3 - "$1" "$2" "$4" "$(python3 bulkhead-benchmarks/scale-threads.py "$3")" <<'PY'
import json, sys
path, prefix, before, after = sys.argv[1], sys.argv[2], json.loads(sys.argv[3]), json.loads(sys.argv[4])
doc = json.load(open(path))
for k, v in after.items():
    if k != "threads":
        doc["%s_%s_s" % (prefix, k)] = round(v - before.get(k, 0), 2)
json.dump(doc, open(path, "w"), indent=2)
PY
}

# idle PORT: waits (up to 30 s) until the app's server cap holds no request: the load's requests
# have all been answered, refused or abandoned and freed
idle() {
  for _ in $(seq 60); do
    [[ "$(held "$1")" == "0 0" ]] && return 0
    sleep 0.5
  done
  echo "  (the app still holds $(held "$1") requests)" >&2
}

# tcp_counters: the kernel's count of SYNs the clients sent again (a connect that waited a second or
# more), of connections the accept queue had no room for, and of SYNs dropped at the listen socket
tcp_counters() {
  nstat -az TcpExtTCPSynRetrans TcpExtListenOverflows TcpExtListenDrops 2>/dev/null | awk '
    {v[$1] = $2}
    END {print v["TcpExtTCPSynRetrans"] + 0, v["TcpExtListenOverflows"] + 0, v["TcpExtListenDrops"] + 0}'
}

# closed PID: waits (up to 30 s) until the app's open files stop falling for a second: the
# connections of the requests that just left are closed and their objects unreachable, so the heap
# measured next is the idle app's (upstream connections the client pools for reuse stay: they are
# the app's, not a request's, and the open-file count says how many)
closed() {
  local last=-1 now
  for _ in $(seq 30); do
    now=$(fds_of "$1")
    [[ "$now" == "$last" ]] && return 0
    last=$now
    sleep 1
  done
}

# round NAME FACTOR CHATS LOGINS: one round of the load against the running app, with the app's CPU
# by thread group during it; the app is idle again when it returns
round() {
  local result="$out/scale-$2-$1.json" before
  before=$(python3 bulkhead-benchmarks/scale-threads.py "$app_pid")
  local tcp_before; read -r -a tcp_before < <(tcp_counters)
  start_load "$3" "$4" "$result"
  wait_for "$out/load.started"
  sleep 3
  local probe_threads; probe_threads=$(threads_of "$app_pid")
  wait "$load_pid"
  app_cpu "$result" app "$app_pid" "$before"
  local tcp_after; read -r -a tcp_after < <(tcp_counters)
  idle "$app_port"
  merge "$result" factor="$2" mode=bulkhead app_threads_at_probe="$probe_threads" \
    syn_retrans="$((tcp_after[0] - tcp_before[0]))" \
    listen_overflows="$((tcp_after[1] - tcp_before[1]))" listen_drops="$((tcp_after[2] - tcp_before[2]))" \
    load="$(cut -d' ' -f1 /proc/loadavg)"
}

# probe_run NAME FACTOR CHATS SERVER_LIMIT LLM_LIMIT LLM_QUEUE: a fresh bulkhead-mode app, first
# idle (its heap before), then the chats alone: its heap once they have all arrived (counts read
# from the app), then again once the load generator has been killed and every request it held has
# left and been freed (queued ones leave the queue, admitted ones when their upstream call ends):
# the app as warm as at the probe, holding no request. Heaps after two full collections.
probe_run() {
  local result="$out/scale-$2-$1.json" probe_kb after_kb before_kb probe_threads
  start_app bulkhead "$4" "$5" "$6" "$conns" "$out/app-stats-$1.json"
  before_kb=$(heap_kb "$app_pid"); before_fds=$(fds_of "$app_pid")
  start_load "$3" 0 "$out/load-$1.json"
  wait_for "$out/load.started"
  sleep 3
  settle "$app_port" "$3"
  read -r held_in_flight held_waiting < <(held "$app_port")
  probe_kb=$(heap_kb "$app_pid"); probe_threads=$(threads_of "$app_pid")
  probe_fds=$(fds_of "$app_pid")
  stop "$load_pid"
  idle "$app_port"
  closed "$app_pid"
  read -r left_in_flight left_waiting < <(held "$app_port")
  after_kb=$(heap_kb "$app_pid"); after_fds=$(fds_of "$app_pid")
  stop "$app_pid"
  echo "{}" > "$result"
  merge "$result" factor="$2" mode=bulkhead chats="$3" server_limit="$4" llm_limit="$5" \
    in_flight_at_probe="$held_in_flight" queued_at_probe="$held_waiting" counts=measured \
    held_after="$((left_in_flight + left_waiting))" heap_before_kb="$before_kb" \
    heap_probe_kb="$probe_kb" heap_after_kb="$after_kb" app_threads_at_probe="$probe_threads" \
    fds_before="$before_fds" fds_probe="$probe_fds" fds_after="$after_fds" \
    after_wait_s=0 # none since RequestHeadDeadline cancels a closed connection's check (report.py)
  echo "  $1: $held_in_flight in flight + $held_waiting queued; heap before/probe/after" \
    "$before_kb/$probe_kb/$after_kb KiB, open files $before_fds/$probe_fds/$after_fds," \
    "app threads $probe_threads"
}

exec 9>>"$lock"
for f in $factors; do
  chats=$((80 * f)) logins=$((50 * f))
  server=$((50 * f)) llm=$((10 * f)) queue=$((20 * f))
  conns=$((chats + logins + 100))
  flock 9
  echo "== x$f: $chats chats + $logins logins; server cap $server, llm $llm in flight, $queue waiting (load $(cut -d' ' -f1-3 /proc/loadavg))"
  start_upstream

  # bulkhead: the experiment on a fresh app (its JIT compiles the app's code during the burst),
  # then again on the same app once it is idle (warm), then the logins alone (the floor)
  start_app bulkhead "$server" "$llm" "$queue" "$conns" "$out/app-stats.json"
  round bulkhead "$f" "$chats" "$logins"
  round warm "$f" "$chats" "$logins"
  round floor "$f" 0 "$logins"
  stop "$app_pid"
  for run in bulkhead warm; do
    merge "$out/scale-$f-$run.json" server_limit="$server" llm_limit="$llm" llm_queue="$queue"
  done
  add_app_stats "$out/scale-$f-bulkhead.json" "$out/app-stats.json"
  for run in bulkhead warm floor; do
    echo "  $run: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("login p50/p99/max %s/%s/%s ms (from the burst start p99 %s ms), SYNs sent again %s, accept queue overflows %s, chats 200/503/other %s/%s/%s, app CPU %s s (JIT %s s), client CPU %.2f s" % (d["login_p50_ms"], d["login_p99_ms"], d["login_max_ms"], d.get("login_from_start_p99_ms"), d["syn_retrans"], d["listen_overflows"], d["chat_ok"], d["chat_rejected"], d["chat_other"], d["app_total_s"], d["app_jit_s"], d["client_cpu_s_during_run"]))' "$out/scale-$f-$run.json")"
  done

  # in flight: every chat admitted (server cap and llm limit at the chats), the chats alone
  probe_run inflight "$f" "$chats" "$chats" "$chats" "$queue"
  # queued: the server cap at the llm limit, so every chat beyond it waits at the server cap
  probe_run queued "$f" "$chats" "$llm" "$llm" "$queue"

  # shared: the same load with no compartment for the upstream
  start_app shared "$server" "$llm" "$queue" "$conns" "$out/app-stats-shared.json"
  result="$out/scale-$f-shared.json"
  start_load "$chats" "$logins" "$result"
  wait "$load_pid" || true
  stop "$app_pid"
  merge "$result" factor="$f" mode=shared server_limit="$server" load="$(cut -d' ' -f1 /proc/loadavg)"
  add_app_stats "$result" "$out/app-stats-shared.json"
  echo "  shared: $(python3 -c 'import json,sys; d=json.load(open(sys.argv[1])); print("login p50/p99 %s/%s ms, chats 200/503/other %s/%s/%s" % (d["login_p50_ms"], d["login_p99_ms"], d["chat_ok"], d["chat_rejected"], d["chat_other"]))' "$result")"
  stop "$upstream_pid"
  flock -u 9
done
sed -i "s/^}$/, \"load_after\": \"$(cut -d' ' -f1-3 /proc/loadavg)\"\n}/" "$out/scale-machine.json"
rm -f "$out"/*.port "$out/load.started" "$out"/app-stats*.json "$out"/load-*.json "$out"/*.log "$out"/*.tsv
