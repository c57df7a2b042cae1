#!/bin/bash
# update-link-order.sh: profiles the release `wire` tool's commands under callgrind and writes LinkOrder/wire-text.ld,
# the linker script that gathers the code they run (LinkOrder/README.md). Run it from the package's root after
# changes that move much code (a new toolchain, a new command, a large refactor), then commit the script it writes.
# Needs valgrind, curl, openssl and python3; takes a few minutes. Builds, so never beside another Swift build.
set -euo pipefail
cd "$(dirname "$0")/.."
W=$(mktemp -d "${TMPDIR:-/tmp}/wire-link-order.XXXXXX")
PIDS=()
# KEEP=1 keeps the scratch folder (the map, the profiles, each run's output) for a look afterwards.
cleanup() {
    for p in "${PIDS[@]}"; do kill "$p" 2> /dev/null || true; wait "$p" 2> /dev/null || true; done
    if [ "${written:-0}" != 1 ] && [ -f "$W/previous.ld" ]; then mv "$W/previous.ld" LinkOrder/wire-text.ld; fi
    if [ "${KEEP:-0}" = 1 ]; then echo "kept $W" >&2; else rm -rf "$W"; fi
}
trap cleanup EXIT
free_port() { python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }
wait_for() { # wait_for PID URL: until URL answers, while PID lives
    for _ in $(seq 600); do
        curl -sk -o /dev/null -m 2 "$2" && return 0
        kill -0 "$1" 2> /dev/null || { echo "the server for $2 exited" >&2; exit 1; }
        sleep 0.1
    done
    echo "no answer from $2" >&2; exit 1
}

# The link map of the build the profiles run: the same objects and addresses, in the link's default order. The
# manifest passes the script whenever the file exists (it is read once and cached), so the script gathers nothing
# meanwhile: an empty section, which the linker drops. The cleanup puts the previous one back if this stops half-way.
cp LinkOrder/wire-text.ld "$W/previous.ld"
printf 'SECTIONS\n{\n  .text.wire_hot : { }\n}\nINSERT BEFORE .text;\n' > LinkOrder/wire-text.ld
rm -f .build/release/wire
swift build -c release --product wire -Xlinker "-Map=$W/wire.map"
WIRE=$(readlink -f .build/release/wire)
# valgrind cannot read the release build's debug information; the profile only needs the symbols and addresses.
PROFILED="$W/wire"
strip --strip-debug -o "$PROFILED" "$WIRE"
profile() { # profile NAME COMMAND...: one run of the stripped tool under callgrind
    valgrind --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no \
        --callgrind-out-file="$W/profile.$1" "$PROFILED" "${@:2}" > "$W/out.$1" 2>&1
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -keyout "$W/key.pem" -out "$W/cert.pem" > /dev/null 2>&1
mkdir -p "$W/files"
head -c 1048576 /dev/urandom > "$W/files/file.bin"
echo '<h1>Hello</h1>' > "$W/files/index.html"

# Peers the client commands talk to: plain and TLS servers of the same build, not profiled.
HTTP=$(free_port); HTTPS=$(free_port)
"$WIRE" serve --port "$HTTP" --root "$W/files" > /dev/null 2>&1 &
PIDS+=($!); wait_for "$!" "http://127.0.0.1:$HTTP/"
"$WIRE" serve --port "$HTTPS" --root "$W/files" --tls-cert "$W/cert.pem" --tls-key "$W/key.pem" > /dev/null 2>&1 &
PIDS+=($!); wait_for "$!" "https://127.0.0.1:$HTTPS/"

# The commands, most used first: the first profile's code comes first in the text.
profile get-http get -s -o /dev/null "http://127.0.0.1:$HTTP/file.bin"
profile get-https get -sk -o /dev/null "https://127.0.0.1:$HTTPS/file.bin"
profile get-file get -s -o "$W/copy.bin" -H 'Accept: */*' "http://127.0.0.1:$HTTP/index.html"
# A profiled server: a few requests of each kind, then SIGTERM (a graceful stop, so callgrind writes its profile).
serve_profile() { # serve_profile NAME SCHEME ARGS...
    local port pid
    port=$(free_port)
    valgrind --tool=callgrind --demangle=no --dump-instr=yes --compress-pos=no \
        --callgrind-out-file="$W/profile.$1" "$PROFILED" serve --port "$port" "${@:3}" > "$W/out.$1" 2>&1 &
    pid=$!
    wait_for "$pid" "$2://127.0.0.1:$port/"
    for _ in 1 2 3; do
        curl -sk -o /dev/null -o /dev/null -o /dev/null \
            "$2://127.0.0.1:$port/" "$2://127.0.0.1:$port/file.bin" "$2://127.0.0.1:$port/missing"
        curl -sk -o /dev/null -H 'Connection: close' "$2://127.0.0.1:$port/index.html"
    done
    kill -TERM "$pid"
    wait "$pid" || true
}
serve_profile serve-http http --root "$W/files"
serve_profile serve-https https --root "$W/files" --tls-cert "$W/cert.pem" --tls-key "$W/key.pem"
serve_profile serve-hello http --hello
profile bench bench -c 4 -n 400 "http://127.0.0.1:$HTTP/index.html"
profile demo demo

python3 scripts/link-order.py --map "$W/wire.map" --binary "$PROFILED" --out LinkOrder/wire-text.ld \
    --toolchain "$(swift --version 2>&1 | head -1)" \
    --runs "get (http, https, to a file), serve (files, files over TLS, hello), bench, demo" \
    "$W/profile.get-http" "$W/profile.get-https" "$W/profile.get-file" "$W/profile.serve-http" \
    "$W/profile.serve-https" "$W/profile.serve-hello" "$W/profile.bench" "$W/profile.demo"
written=1
# The build system does not see the script change: link again with it.
rm -f .build/release/wire
swift build -c release --product wire
