# Sourced by the benchmark scripts here: a scratch folder and the servers started, removed and stopped at exit, a
# process's CPU ticks, and a free loopback port.
#   W       the scratch folder (made here)
#   PIDS    the processes to stop at exit: add each server with PIDS+=($!)
W=$(mktemp -d "${TMPDIR:-/tmp}/wire-bench.XXXXXX")
PIDS=()
cleanup() { for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done; rm -rf "$W"; }
trap cleanup EXIT
# ticks PID: the process's user and system time so far, in clock ticks.
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
