#!/bin/bash
# busy-rps.sh REPS SECONDS "N..." NAME=WIRE...: requests/s and server CPU per request under `wrk -t1 -cN` for nginx
# (one worker) and each named `wire` binary, alternated per repetition (server on core 0, wrk on core 1). One line per
# run. Example: Benchmarks/scripts/busy-rps.sh 5 5 "64 1000 5000" new=.build/release/wire
REPS=$1; D=$2; NS=$3; shift 3
ulimit -n $(ulimit -Hn)
W=$(mktemp -d)
. "$(dirname "$0")/nginx-hello.sh"
nginx_hello_conf "$W" 18080
ticks() { sed 's/.*) //' /proc/$1/stat | awk '{ print $12 + $13 }'; }
run() { # run NAME PID PORT N
  taskset -c 1 wrk -t1 -c$4 -d1s http://127.0.0.1:$3/ > /dev/null 2>&1
  local b=$(ticks $2)
  taskset -c 1 wrk -t1 -c$4 -d${D}s --timeout 10s http://127.0.0.1:$3/ > $W/wrk.txt 2>&1
  local a=$(ticks $2)
  local req=$(awk '/requests in/ {print $1}' $W/wrk.txt); local rps=$(awk '/Requests\/sec/ {print $2}' $W/wrk.txt)
  local err=$(grep -c "Socket errors\|Non-2xx" $W/wrk.txt)
  echo "$1 n=$4 rps=$rps cpu_us_per_req=$(python3 -c "print(round(($a-$b)*10000/$req,2))") errlines=$err"
}
for n in $NS; do for r in $(seq $REPS); do
  taskset -c 0 nginx -p $W -c $W/nginx.conf & P=$!; sleep 0.5; run nginx $P 18080 $n; kill $P; wait $P 2>/dev/null
  for nb in "$@"; do name=${nb%%=*}; bin=${nb#*=}
    taskset -c 0 $bin serve --hello --loops 1 --port 18081 > $W/w.log 2>&1 & P=$!
    for i in $(seq 50); do grep -q listening $W/w.log && break; sleep 0.1; done
    run $name $P 18081 $n; kill $P; wait $P 2>/dev/null
  done
done; done
rm -rf $W
