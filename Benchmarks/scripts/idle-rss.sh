#!/bin/bash
# idle-rss.sh WIRE REPS N...: the server's RSS growth per idle keep-alive connection, nginx (one worker) and
# `WIRE serve --hello --loops 1` alternated, as run.sh's idle_rss measures it (server on core 0, holder on core 1).
# Needs nginx-light; no Benchmarks build. Example: Benchmarks/scripts/idle-rss.sh .build/release/wire 3 1000 5000
WIRE=$1; REPS=$2; shift 2
ulimit -n "$(ulimit -Hn)"
W=$(mktemp -d); PY=$(dirname "$0")/matrix.py
. "$(dirname "$0")/nginx-hello.sh"
nginx_hello_conf "$W" 18080
rss() { awk '/^VmRSS/ { print $2 }' /proc/$1/status; }
measure() { # measure PID PORT N
  curl -s -o /dev/null http://127.0.0.1:$2/; local before=$(rss $1)
  taskset -c 1 python3 $PY hold 127.0.0.1 $2 $3 300 > $W/hold.txt 2>&1 & local h=$!
  for i in $(seq 1200); do grep -q '^ready' $W/hold.txt && break; sleep 0.1; done
  sleep 0.5; local after=$(rss $1); kill $h; wait $h 2>/dev/null
  python3 -c "print(round(($after - $before) * 1024 / $3))"
}
for n in "$@"; do for r in $(seq $REPS); do
  taskset -c 0 nginx -p $W -c $W/nginx.conf & NP=$!; sleep 0.5
  echo "nginx n=$n $(measure $NP 18080 $n)"; kill $NP; wait $NP 2>/dev/null
  taskset -c 0 $WIRE serve --hello --loops 1 --port 18081 > $W/wire.log 2>&1 & WP=$!
  for i in $(seq 50); do grep -q listening $W/wire.log && break; sleep 0.1; done
  echo "wire n=$n $(measure $WP 18081 $n)"; kill $WP; wait $WP 2>/dev/null
done; done
rm -rf $W
