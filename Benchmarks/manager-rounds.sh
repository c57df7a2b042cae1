#!/usr/bin/env bash
# manager-rounds.sh ROUNDS SECONDS LABEL=BINARY:MODE... — runs ManagerFigures binaries and modes in alternation
# against nginx on 127.0.0.1:18090 (URL overridable with MANAGER_URL), the client pinned to core 1; prints each
# label's µs per request (median, min–max) and its per-round ratio to the first label: this machine's noise moves
# whole rounds together, so the ratios within a round are the figure. Example (BENCHMARKS.md, the manager row):
#   Benchmarks/manager-rounds.sh 10 3 client=.build/release/ManagerFigures:client data=.build/release/ManagerFigures:data
rounds=$1; secs=$2; shift 2
set -euo pipefail
out=$(mktemp)
trap 'rm -f "$out"' EXIT
for i in $(seq $rounds); do
  for spec in "$@"; do
    label=${spec%%=*}; rest=${spec#*=}; bin=${rest%%:*}; mode=${rest##*:}
    v=$(taskset -c 1 $bin $mode ${MANAGER_URL:-http://127.0.0.1:18090/user.json} 64 $secs | tail -1 | python3 -c 'import json,sys; print("%.2f"%json.load(sys.stdin)["cpu_us_per_request"])')
    echo "$i $label $v" >> $out
  done
done
python3 - "$out" "$@" <<'PY'
import sys,statistics,collections
rows=[l.split() for l in open(sys.argv[1])]
labels=[s.split("=")[0] for s in sys.argv[2:]]
by=collections.defaultdict(dict)
for r,l,v in rows: by[l][r]=float(v)
base=labels[0]
for l in labels:
    v=[by[l][r] for r in sorted(by[l])]
    ratios=[by[l][r]/by[base][r] for r in sorted(by[l])]
    print(f"{l:10s} median {statistics.median(v):6.2f} ({min(v):.2f}-{max(v):.2f})  /{base}: median {statistics.median(ratios):.3f} ({min(ratios):.3f}-{max(ratios):.3f})")
PY
