#!/bin/bash
# massif-idle.sh WIRE_PROFILE N OUTDIR: massif heap snapshots of `wire-profile serve` before and after N idle keep-alive
# connections (valgrind 3.19 cannot read this toolchain's DWARF, so a stripped copy runs). Break the growth down by
# allocation site with: python3 Benchmarks/scripts/massif-diff.py OUTDIR N
set -e
HERE=$(dirname "$(readlink -f "$0")"); BIN=$(readlink -f "$1"); N=$2; OUT=$3; mkdir -p "$OUT"; OUT=$(readlink -f "$OUT"); cd "$OUT"
cp $BIN $OUT/wp && strip --strip-debug $OUT/wp
valgrind --tool=massif --vgdb=yes --massif-out-file=$OUT/massif.out --threshold=0.1 --depth=14 \
  $OUT/wp serve > serve.log 2>&1 &
VPID=$!
for i in $(seq 1 60); do grep -q "listening on" serve.log && break; sleep 1; done
PORT=$(grep -o "listening on [0-9]*" serve.log | awk '{print $3}')
curl -s http://127.0.0.1:$PORT/ >/dev/null
vgdb --pid=$VPID detailed_snapshot $OUT/before.txt >/dev/null
python3 "$HERE/matrix.py" hold 127.0.0.1 $PORT $N 120 > hold.txt 2>&1 &
HPID=$!
for i in $(seq 1 120); do grep -q ready hold.txt && break; sleep 1; done
sleep 2
vgdb --pid=$VPID detailed_snapshot $OUT/after.txt >/dev/null
kill $HPID; kill $VPID; wait 2>/dev/null || true
