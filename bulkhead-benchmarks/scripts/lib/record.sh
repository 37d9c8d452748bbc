# Sourced by the runners in bulkhead-benchmarks/scripts/ (run from the repository's root).
#
# results_dir NAME     bulkhead-benchmarks/results/<today, UTC>-NAME: where a run of NAME is kept
# record_run DIR ARGS  DIR/run.txt: the exact command (ARGS, as typed), the commit it ran on and the
#                      machine line (date, cores, CPU, memory, Java, load average before)
# record_end DIR       appends the load average after to DIR/run.txt
#
# scripts/report.py reads the newest results/<date>-NAME/ of each kind; run.txt is for people.

results_dir() {
  printf 'bulkhead-benchmarks/results/%s-%s' "$(date -u +%F)" "$1"
}

record_run() {
  local dir=$1
  shift
  mkdir -p "$dir"
  local dirty=""
  git diff --quiet HEAD 2>/dev/null || dirty=" (with uncommitted changes)"
  {
    printf 'command: %s\n' "$(printf '%q ' "$@" | sed 's/ $//')"
    printf 'commit: %s%s\n' "$(git rev-parse --short HEAD 2>/dev/null || echo unknown)" "$dirty"
    printf 'machine: %s, %s cores (%s), %s memory, %s; load average %s before\n' \
      "$(date -u +%FT%TZ)" "$(nproc)" "$(lscpu | sed -n 's/^Model name:[[:space:]]*//p' | head -n1)" \
      "$(free -h | awk '/^Mem:/ {print $2}')" "$(java -version 2>&1 | head -n1)" \
      "$(cut -d' ' -f1-3 /proc/loadavg)"
  } >"$dir/run.txt"
}

record_end() {
  printf 'load average after: %s\n' "$(cut -d' ' -f1-3 /proc/loadavg)" >>"$1/run.txt"
}
