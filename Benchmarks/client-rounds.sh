#!/usr/bin/env bash
# client-rounds.sh ROUNDS SECONDS LABEL=[VAR=VALUE,...@]BINARY... — runs ClientFigures-shaped binaries (arguments PORT
# CONNECTIONS SECONDS, a JSON line with cpu_us_per_request) in alternation, the order rotated each round, against a
# server on 127.0.0.1:$PORT (default 18391), the client pinned to core 1 and 64 requests in flight. Prints each
# label's µs per request and requests per second (median, min–max) and its per-round CPU ratio to the first label:
# this machine's noise moves whole rounds together, so the ratios within a round are the figure. Example (BENCHMARKS.md,
# the event listener and WireEcosystem's bridge):
#   Benchmarks/client-rounds.sh 9 4 base=/tmp/base/ClientFigures none=.build/release/ClientFigures \
#       listener=LISTENER=1@.build/release/ClientFigures bridge=MODE=noop@.build/release/EcosystemFigures
rounds=$1; secs=$2; shift 2
set -euo pipefail
port=${PORT:-18391}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/scripts/rotation.sh"
for i in $(seq "$rounds"); do
  mapfile -t order < <(rotated "$i" "$@")
  for spec in "${order[@]}"; do
    spec_parts "$spec"
    line=$(env $vars taskset -c 1 "$bin" "$port" 64 "$secs" | tail -1)
    echo "$i $label $(python3 -c 'import json,sys; d=json.loads(sys.argv[1]); print("%.3f %.0f" % (d["cpu_us_per_request"], d["requests_per_second"]))' "$line")" >> "$out"
  done
done
python3 - "$out" "$@" <<'PY'
import sys, statistics, collections
rows = [line.split() for line in open(sys.argv[1])]
labels = [spec.split("=")[0] for spec in sys.argv[2:]]
cpu, rate = collections.defaultdict(dict), collections.defaultdict(dict)
for r, label, c, q in rows:
    cpu[label][r], rate[label][r] = float(c), float(q)
base = labels[0]
for label in labels:
    rs = sorted(cpu[label])
    c = [cpu[label][r] for r in rs]; q = [rate[label][r] for r in rs]
    ratios = [cpu[label][r] / cpu[base][r] for r in rs]
    print(f"{label:10s} {statistics.median(c):6.2f} µs ({min(c):.2f}-{max(c):.2f})  "
          f"{statistics.median(q)/1000:5.1f}k req/s ({min(q)/1000:.1f}k-{max(q)/1000:.1f}k)  "
          f"CPU/{base}: {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
PY
