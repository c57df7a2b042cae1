#!/usr/bin/env bash
# client-user-system.sh ROUNDS SECONDS CONNECTIONS LABEL=[VAR=VALUE,...@]BINARY|wrk ... — user and system CPU per
# request, apart, for wrk and ClientFigures-shaped binaries (arguments PORT CONNECTIONS SECONDS, a JSON line with
# "requests") run in turn, the order rotated each round, each pinned to core 1, against 127.0.0.1:$PORT (default 18391,
# nginx-hello.sh's nginx on core 0). /usr/bin/time gives each run's user and system seconds. Prints each label's medians
# and its per-round ratio to the first label's, user time alone and in all: the kernel's share of a loopback request is
# the same for every client, so the user time is where two clients differ.
#   Benchmarks/scripts/client-user-system.sh 8 2 1000 wrk=wrk loop=ON_LOOP=1@.build/release/ClientFigures
set -euo pipefail
rounds=$1; secs=$2; connections=$3; shift 3
port=${PORT:-18391}
out=$(mktemp)
trap 'rm -f "$out"' EXIT
. "$(dirname "$0")/rotation.sh"
for i in $(seq "$rounds"); do
  mapfile -t order < <(rotated "$i" "$@")
  for spec in "${order[@]}"; do
    spec_parts "$spec"
    if [[ $bin == wrk ]]; then
      report=$( { /usr/bin/time -f 'TIME %U %S' taskset -c 1 wrk -t1 -c"$connections" -d"${secs}s" \
        "http://127.0.0.1:$port/"; } 2>&1)
      requests=$(grep -oE '^ *[0-9]+ requests in' <<< "$report" | grep -oE '[0-9]+')
    else
      report=$( { /usr/bin/time -f 'TIME %U %S' env $vars taskset -c 1 "$bin" "$port" "$connections" \
        "$secs"; } 2>&1)
      requests=$(grep -oE '"requests":[0-9]+' <<< "$report" | grep -oE '[0-9]+')
    fi
    echo "$i $label $requests $(grep -oE 'TIME [0-9.]+ [0-9.]+' <<< "$report" | cut -d' ' -f2-)" >> "$out"
  done
done
python3 - "$out" "$@" <<'PY'
import sys, statistics, collections
labels = [spec.split("=")[0] for spec in sys.argv[2:]]
user, system = collections.defaultdict(dict), collections.defaultdict(dict)
for r, label, requests, u, s in (line.split() for line in open(sys.argv[1])):
    user[label][r] = float(u) * 1e6 / int(requests)
    system[label][r] = float(s) * 1e6 / int(requests)
first = labels[0]
for label in labels:
    rounds = sorted(user[label])
    total = {r: user[label][r] + system[label][r] for r in rounds}
    base = {r: user[first][r] + system[first][r] for r in rounds}
    by_user = [user[label][r] / user[first][r] for r in rounds]
    by_total = [total[r] / base[r] for r in rounds]
    print(f"{label:10s} user {statistics.median(user[label].values()):6.2f} µs  system "
          f"{statistics.median(system[label].values()):6.2f} µs  all {statistics.median(total.values()):6.2f} µs  "
          f"÷ {first}: user {statistics.median(by_user):.3f} ({min(by_user):.2f}-{max(by_user):.2f}), "
          f"all {statistics.median(by_total):.3f} ({min(by_total):.2f}-{max(by_total):.2f})")
PY
