#!/usr/bin/env bash
# client-vs-wrk.sh ROUNDS SECONDS LABEL=[VAR=VALUE,...@]BINARY... — issue 33's first figure: wrk and ClientFigures-shaped
# binaries (arguments PORT CONNECTIONS SECONDS, a JSON line with cpu_us_per_request) in alternation, the order rotated
# each round, each pinned to core 1 with $CONNECTIONS (default 64) requests in flight against a server on
# 127.0.0.1:$PORT (default 18391; the matrix's nginx from nginx-hello.sh, pinned to core 0). wrk's CPU per request is
# its user+system time from /usr/bin/time over its request count. Prints each row's µs per request (median, min–max)
# and its per-round ratio to wrk's: the machine's noise moves whole rounds together, so the ratios are the figure.
#   Benchmarks/scripts/client-vs-wrk.sh 5 4 global=.build/release/ClientFigures loop=ON_LOOP=1@.build/release/ClientFigures
rounds=$1; secs=$2; shift 2
set -euo pipefail
port=${PORT:-18391}
connections=${CONNECTIONS:-64}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/rotation.sh"
for i in $(seq "$rounds"); do
  mapfile -t order < <(rotated "$i" wrk "$@")
  for spec in "${order[@]}"; do
    if [[ $spec == wrk ]]; then
      report=$( { /usr/bin/time -f 'TIME %U %S' taskset -c 1 wrk -t1 -c"$connections" -d"${secs}s" \
        "http://127.0.0.1:$port/"; } 2>&1)
      requests=$(grep -oE '^ *[0-9]+ requests in' <<< "$report" | grep -oE '[0-9]+')
      cpu=$(grep -oE 'TIME [0-9.]+ [0-9.]+' <<< "$report" | awk '{print $2 + $3}')
      echo "$i wrk $(python3 -c 'import sys; print("%.3f" % (float(sys.argv[1]) * 1e6 / int(sys.argv[2])))' "$cpu" "$requests")" >> "$out"
      continue
    fi
    spec_parts "$spec"
    line=$(env $vars taskset -c 1 "$bin" "$port" "$connections" "$secs" | tail -1)
    echo "$i $label $(python3 -c 'import json,sys; print("%.3f" % json.loads(sys.argv[1])["cpu_us_per_request"])' "$line")" >> "$out"
  done
done
python3 - "$out" wrk "$@" <<'PY'
import sys, statistics, collections
rows = [line.split() for line in open(sys.argv[1])]
labels = [spec.split("=")[0] for spec in sys.argv[2:]]
cpu = collections.defaultdict(dict)
for r, label, c in rows:
    cpu[label][r] = float(c)
for label in labels:
    rs = sorted(cpu[label])
    c = [cpu[label][r] for r in rs]
    ratios = [cpu[label][r] / cpu["wrk"][r] for r in rs]
    print(f"{label:10s} {statistics.median(c):6.2f} µs ({min(c):.2f}-{max(c):.2f})  "
          f"÷ wrk: {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})  "
          f"rounds: {' '.join('%.2f' % x for x in ratios)}")
PY
