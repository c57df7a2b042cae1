#!/usr/bin/env bash
# The benchmark matrix of issue #6: Wire beside its peers, in one run, as one Markdown table.
#
#   Benchmarks/run.sh              # R=3 repetitions of D=5 s per figure: about 7 minutes of measuring (9 once
#                                  # wire bench and TLS are in), plus the builds (a clean one takes 6-8 minutes)
#   QUICK=1 Benchmarks/run.sh      # smoke run: 1 repetition of 2 s, about a minute of measuring
#
# Environment: R (repetitions), D (seconds per load run), R_BULK (repetitions of the downloads, default 2R+1),
# SERVER_CPU / CLIENT_CPU (cores for taskset, default 0 / 1), SCALE (connection counts, default "1 64 1000 10000"),
# BULK_SIZE (default 1G), ROWS (sections to run, default "client server bulk scale tls parser"), OUT (default
# Benchmarks/results/latest.md), WIRE_TOOL (another build of the `wire` tool to measure instead of this checkout's).
#
# From a clean clone it installs what it lacks (nginx-light wrk curl python3 openssl time, as root through apt-get),
# builds Wire's tool and this package in release, then measures. Every server runs pinned to SERVER_CPU and every
# client to CLIENT_CPU; each figure is the median of R runs with the spread (min–max); the repetitions interleave the
# tools, so that a drift of the machine touches them alike. Server CPU comes from /proc/PID/stat (utime+stime over
# the run, divided by the requests served); client CPU from /usr/bin/time, or from getrusage inside the Swift peers.
# Rows for `wire bench` and for TLS run once those exist in the tool, and say "skipped" until then.
set -euo pipefail

HERE=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
ROOT=$(dirname "$HERE")
PY="$HERE/scripts/matrix.py"
LUA="$HERE/scripts/pipeline.lua"
if [ "${QUICK:-0}" = 1 ]; then R=${R:-1}; D=${D:-2}; else R=${R:-3}; D=${D:-5}; fi
R_BULK=${R_BULK:-$((2 * R + 1))} # a download lasts about half a second: more repetitions steady its median
SERVER_CPU=${SERVER_CPU:-0}
CLIENT_CPU=${CLIENT_CPU:-1}
SCALE=${SCALE:-1 64 1000 10000}
BULK_SIZE=${BULK_SIZE:-1G}
ROWS=${ROWS:-client server bulk scale tls parser}
OUT=${OUT:-$HERE/results/latest.md}
CONNS=64

say() { printf '== %s\n' "$*" >&2; }
note() { printf '   %s\n' "$*" >&2; }
die() { printf 'run.sh: error: %s\n' "$*" >&2; exit 1; }
wants() { [[ " $ROWS " == *" $1 "* ]]; }

# --- what the run needs ----------------------------------------------------------------------------------------

command -v swift > /dev/null || die "swift is not on PATH"
missing=()
command -v nginx > /dev/null || [ -x /usr/sbin/nginx ] || missing+=(nginx-light)
command -v wrk > /dev/null || missing+=(wrk)
command -v curl > /dev/null || missing+=(curl)
command -v python3 > /dev/null || missing+=(python3)
command -v openssl > /dev/null || missing+=(openssl)
command -v taskset > /dev/null || missing+=(util-linux)
[ -x /usr/bin/time ] || missing+=(time)
if [ ${#missing[@]} -gt 0 ]; then
    [ "$(id -u)" = 0 ] || die "missing ${missing[*]}: run as root, or install them first"
    say "installing ${missing[*]}"
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq --no-install-recommends "${missing[@]}" > /dev/null
fi
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
CLK_TCK=$(getconf CLK_TCK)
[ "$(nproc)" -ge 2 ] || note "only $(nproc) core: server and client share it, the figures mean less"

# 10,000 connections need a descriptor each in the server and in the client; both inherit this limit (the hard limit
# may stop it lower: 20,000 here, which is still enough).
ulimit -n 65536 2> /dev/null || ulimit -n "$(ulimit -Hn)" 2> /dev/null || true
FD_LIMIT=$(ulimit -n)

# --- builds ----------------------------------------------------------------------------------------------------

LOGS="$HERE/.build/run-logs"
mkdir -p "$LOGS"
lock=()
if command -v flock > /dev/null; then lock=(flock "${WIRE_BUILD_LOCK:-/tmp/wire-swift.lock}"); fi
build() { # build DIR NAME: a release build of the package in DIR, its log in $LOGS/NAME.log
    say "building $2 (release)"
    local started=$SECONDS
    if ! (cd "$1" && "${lock[@]}" swift build -c release) > "$LOGS/$2.log" 2>&1; then
        grep -E 'error:' "$LOGS/$2.log" | head -20 >&2 || true
        die "the $2 build failed; see $LOGS/$2.log"
    fi
    note "built in $((SECONDS - started)) s"
}
build "$ROOT" wire
build "$HERE" benchmarks
WIRE=${WIRE_TOOL:-"$(cd "$ROOT" && swift build -c release --show-bin-path)/wire"}
BIN=$(cd "$HERE" && swift build -c release --show-bin-path)

HAVE_BENCH=0
if "$WIRE" --help 2>&1 | grep -qE '^ +bench( |$)'; then HAVE_BENCH=1; else note "skipped: wire bench not built"; fi
HAVE_TLS=0
if "$WIRE" serve --help 2>&1 | grep -q -- '--tls-cert'; then HAVE_TLS=1; else note "skipped: TLS not built"; fi

# --- servers and their cleanup ---------------------------------------------------------------------------------

WORK=$(mktemp -d "${TMPDIR:-/tmp}/wire-matrix.XXXXXX")
RAW="$WORK/raw.tsv"
: > "$RAW"
PIDS=()

# stop_pid PID: SIGTERM, then SIGKILL after 5 s (a server that hangs on shutdown must not hang the run); the PID
# leaves the cleanup list, so that a number the system hands out again is never signalled.
stop_pid() {
    local pid=$1 i kept=()
    for i in "${PIDS[@]}"; do [ "$i" = "$pid" ] || kept+=("$i"); done
    PIDS=("${kept[@]}")
    kill "$pid" 2> /dev/null || return 0
    for i in $(seq 50); do kill -0 "$pid" 2> /dev/null || break; sleep 0.1; done
    kill -9 "$pid" 2> /dev/null || true
    wait "$pid" 2> /dev/null || true
}
cleanup() {
    local pid
    for pid in "${PIDS[@]}"; do stop_pid "$pid"; done
    PIDS=()
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 130' INT TERM

free_port() {
    python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'
}

# start_server NAME PORT COMMAND...: runs COMMAND pinned to SERVER_CPU and waits until it answers HTTP on PORT
# (https when TLS_WAIT=1); sets SERVER_PID.
start_server() {
    local name=$1 port=$2 scheme=http i
    shift 2
    [ "${TLS_WAIT:-0}" = 1 ] && scheme=https
    taskset -c "$SERVER_CPU" "$@" > "$WORK/$name.log" 2>&1 &
    SERVER_PID=$!
    PIDS+=("$SERVER_PID")
    for i in $(seq 200); do
        if curl -sk -o /dev/null -m 1 "$scheme://127.0.0.1:$port/"; then return 0; fi
        if ! kill -0 "$SERVER_PID" 2> /dev/null; then
            cat "$WORK/$name.log" >&2
            die "$name exited before answering on port $port"
        fi
        sleep 0.05
    done
    die "$name did not answer on port $port within 10 s"
}

# nginx_conf NAME PORT [TLS_PORT CERT KEY]: a one-worker nginx in the foreground, `return 200` on /, files under
# /files/ (sendfile), everything it writes under $WORK/NAME.
nginx_conf() {
    local dir="$WORK/$1" port=$2 tls=""
    mkdir -p "$dir"
    if [ $# -ge 5 ]; then
        tls="listen 127.0.0.1:$3 ssl backlog=4096; ssl_certificate $4; ssl_certificate_key $5;
             ssl_session_cache shared:matrix:8m; ssl_session_tickets on; ssl_protocols TLSv1.2 TLSv1.3;"
    fi
    cat > "$dir/nginx.conf" << EOF
daemon off;
master_process off;
worker_processes 1;
worker_rlimit_nofile 65536;
pid $dir/nginx.pid;
error_log $dir/error.log warn;
events { worker_connections 20000; multi_accept on; }
http {
    access_log off;
    default_type text/plain;
    sendfile on;
    tcp_nopush on;
    keepalive_timeout 300s;
    keepalive_requests 100000000;
    client_body_temp_path $dir/body;
    proxy_temp_path $dir/proxy;
    fastcgi_temp_path $dir/fastcgi;
    uwsgi_temp_path $dir/uwsgi;
    scgi_temp_path $dir/scgi;
    server {
        listen 127.0.0.1:$port backlog=4096;
        $tls
        location = / { return 200 "Hello, World!"; }
        location /files/ { alias $WORK/files/; }
    }
}
EOF
    echo "$dir/nginx.conf"
}
start_nginx() { # start_nginx NAME PORT [TLS_PORT CERT KEY]
    local conf
    conf=$(nginx_conf "$@")
    start_server "$1" "$2" "$NGINX" -p "$WORK/$1" -e "$WORK/$1/error.log" -c "$conf"
}
start_wire() { # start_wire NAME PORT ARGS...: wire serve --loops 1
    local name=$1 port=$2
    shift 2
    start_server "$name" "$port" "$WIRE" serve --loops 1 --port "$port" "$@"
}

# --- measurements ----------------------------------------------------------------------------------------------

rec() { local IFS=$'\t'; echo "$*" >> "$RAW"; }
ticks() { sed 's/.*) //' "/proc/$1/stat" | awk '{ print $12 + $13 }'; }
rss_kib() { awk '/^VmRSS/ { print $2 }' "/proc/$1/status"; }
calc() { python3 -c "print($*)"; }

# load_wrk SECTION TOOL CPU_OF SERVER_PID CONNECTIONS URL [WRK ARGS...]: one `wrk -t1` run; records requests/s,
# p99, and the CPU per request of the client (CPU_OF=client) or of SERVER_PID (CPU_OF=server).
load_wrk() {
    local section=$1 tool=$2 cpu_of=$3 spid=$4 conns=$5 url=$6 before after requests rate p99 errors user system
    shift 6
    before=$(ticks "$spid")
    if ! /usr/bin/time -f '%U %S' -o "$WORK/time.txt" taskset -c "$CLIENT_CPU" \
        wrk -t1 -c"$conns" -d"${D}s" --timeout 10s --latency "$@" "$url" > "$WORK/wrk.txt" 2>&1; then
        cat "$WORK/wrk.txt" >&2
        die "wrk failed ($section, $tool)"
    fi
    after=$(ticks "$spid")
    read -r requests rate p99 errors < <(python3 "$PY" wrk "$WORK/wrk.txt")
    read -r user system < <(tail -1 "$WORK/time.txt")
    [ "$errors" = 0 ] || note "$tool: $errors socket errors or non-2xx responses in $section"
    rec m "$section" "$tool" rps "$rate"
    if [ "$cpu_of" = client ]; then
        rec m "$section" "$tool" cpu_us "$(calc "($user + $system) * 1e6 / $requests")"
    else
        rec m "$section" "$tool" cpu_us "$(calc "($after - $before) / $CLK_TCK * 1e6 / $requests")"
    fi
    [ "$cpu_of" = client ] || rec m "$section" "$tool" p99_ms "$p99"
}

# load_json SECTION TOOL CPU_OF SERVER_PID COMMAND...: one run of a client that prints a JSON line (wire bench
# --json, AHCClient, URLSessionClient, ClientFigures); records requests/s, CPU per request and p99 when given.
load_json() {
    local section=$1 tool=$2 cpu_of=$3 spid=$4 before after requests rate cpu p99
    shift 4
    before=$(ticks "$spid")
    if ! taskset -c "$CLIENT_CPU" "$@" > "$WORK/client.txt" 2>&1; then
        cat "$WORK/client.txt" >&2
        die "$tool failed ($section)"
    fi
    after=$(ticks "$spid")
    read -r requests rate cpu p99 < <(python3 "$PY" json "$WORK/client.txt" "$D")
    rec m "$section" "$tool" rps "$rate"
    if [ "$cpu_of" = client ]; then
        rec m "$section" "$tool" cpu_us "$cpu"
    else
        rec m "$section" "$tool" cpu_us "$(calc "($after - $before) / $CLK_TCK * 1e6 / $requests")"
        rec m "$section" "$tool" p99_ms "$p99"
    fi
}

# download SECTION TOOL BYTES COMMAND...: one bulk download to /dev/null; records MB/s, CPU seconds, peak RSS.
download() {
    local section=$1 tool=$2 bytes=$3 start end elapsed user system rss
    shift 3
    start=$(date +%s.%N)
    if ! /usr/bin/time -f '%e %U %S %M' -o "$WORK/time.txt" taskset -c "$CLIENT_CPU" "$@" > "$WORK/get.txt" 2>&1; then
        cat "$WORK/get.txt" "$WORK/time.txt" >&2
        die "$tool failed ($section)"
    fi
    end=$(date +%s.%N)
    read -r elapsed user system rss < <(tail -1 "$WORK/time.txt")
    rec m "$section" "$tool" mbps "$(calc "$bytes / 1e6 / ($end - $start)")"
    rec m "$section" "$tool" cpu_s "$(calc "$user + $system")"
    rec m "$section" "$tool" rss_mib "$(calc "$rss / 1024")"
}

# idle_rss SECTION TOOL PID PORT N: opens N keep-alive connections to the server, one request each, holds them
# idle and records the growth of the server's VmRSS per connection.
idle_rss() {
    local section=$1 tool=$2 pid=$3 port=$4 n=$5 before after holder i
    curl -s -o /dev/null "http://127.0.0.1:$port/"
    before=$(rss_kib "$pid")
    taskset -c "$CLIENT_CPU" python3 "$PY" hold 127.0.0.1 "$port" "$n" 300 > "$WORK/hold.txt" 2>&1 &
    holder=$!
    PIDS+=("$holder")
    for i in $(seq 1200); do
        grep -q '^ready' "$WORK/hold.txt" && break
        kill -0 "$holder" 2> /dev/null || { cat "$WORK/hold.txt" >&2; die "holding $n connections to $tool failed"; }
        sleep 0.1
    done
    grep -q '^ready' "$WORK/hold.txt" || die "holding $n connections to $tool took over 2 minutes"
    sleep 0.5 # lets the server finish any work after the last response before its memory is read
    after=$(rss_kib "$pid")
    stop_pid "$holder"
    rec m "$section" "$tool" conn_bytes "$(calc "($after - $before) * 1024 / $n")"
}

# --- the rows --------------------------------------------------------------------------------------------------

say "machine: $(nproc) cores, load $(cut -d' ' -f1-3 /proc/loadavg), R=$R, D=${D}s, fd limit $FD_LIMIT"
if awk '{ exit !($1 > 0.5) }' /proc/loadavg; then
    note "the machine is busy (load above 0.5): other work shares the cores and the figures will scatter"
fi
LOAD_BEFORE=$(cut -d' ' -f1-3 /proc/loadavg)
STARTED=$SECONDS

NGINX_PORT=$(free_port)
start_nginx nginx "$NGINX_PORT"
NGINX_PID=$SERVER_PID
NGINX_URL="http://127.0.0.1:$NGINX_PORT/"
WIRE_PORT=$(free_port)

if wants client; then
    say "client engine against nginx (64 connections, keep-alive)"
    title="client engine → nginx \`return 200\`, 64 keep-alive conns (client CPU)"
    rec title client "$title"
    rec ref client "wrk -t1 -c64"
    rec title pipeline "client, HTTP/1.1 pipelining 16 deep → nginx (client CPU)"
    rec ref pipeline "wrk -t1 -c64 + pipeline.lua"
    for rep in $(seq "$R"); do
        note "repetition $rep/$R"
        load_wrk client "wrk -t1 -c64" client "$NGINX_PID" "$CONNS" "$NGINX_URL"
        if [ "$HAVE_BENCH" = 1 ]; then
            load_json client "wire bench -c64 -t1" client "$NGINX_PID" \
                "$WIRE" bench -c "$CONNS" -d "${D}s" -t 1 --json "$NGINX_URL"
        elif [ "$rep" = 1 ]; then
            rec skip client "wire bench -c64 -t1" "skipped: wire bench not built"
        fi
        load_json client "Wire HTTPClient (ClientFigures)" client "$NGINX_PID" \
            "$BIN/ClientFigures" "$NGINX_PORT" "$CONNS" "$D"
        load_json client "AsyncHTTPClient 1.37.0" client "$NGINX_PID" "$BIN/AHCClient" "$NGINX_URL" "$CONNS" "$D"
        load_json client "URLSession (FoundationNetworking)" client "$NGINX_PID" \
            "$BIN/URLSessionClient" "$NGINX_URL" "$CONNS" "$D"
        PIPELINE=16 load_wrk pipeline "wrk -t1 -c64 + pipeline.lua" client "$NGINX_PID" "$CONNS" "$NGINX_URL" -s "$LUA"
        if [ "$HAVE_BENCH" = 1 ]; then
            load_json pipeline "wire bench -c64 -t1 --pipeline 16" client "$NGINX_PID" \
                "$WIRE" bench -c "$CONNS" -d "${D}s" -t 1 --pipeline 16 --json "$NGINX_URL"
        elif [ "$rep" = 1 ]; then
            rec skip pipeline "wire bench -c64 -t1 --pipeline 16" "skipped: wire bench not built"
        fi
    done
fi

if wants server; then
    say "servers under wrk -t1 -c64$([ "$HAVE_BENCH" = 1 ] && echo ' and wire bench')"
    start_wire wire "$WIRE_PORT" --hello
    WIRE_PID=$SERVER_PID
    HB_PORT=$(free_port)
    start_server hummingbird "$HB_PORT" "$BIN/HummingbirdHello" "$HB_PORT"
    HB_PID=$SERVER_PID
    rec title server-wrk "server ← \`wrk -t1 -c64\`, Hello, World! (server CPU)"
    rec ref server-wrk "nginx, 1 worker"
    rec title server-bench "server ← \`wire bench -c64 -t1\` (server CPU)"
    rec ref server-bench "nginx, 1 worker"
    servers=("nginx, 1 worker|$NGINX_PID|$NGINX_PORT" "wire serve --hello --loops 1|$WIRE_PID|$WIRE_PORT"
        "Hummingbird 2.28.1, 1 loop|$HB_PID|$HB_PORT")
    for entry in "${servers[@]}"; do # warm-up: one short run each, not recorded
        IFS='|' read -r name pid port <<< "$entry"
        taskset -c "$CLIENT_CPU" wrk -t1 -c"$CONNS" -d1s "http://127.0.0.1:$port/" > /dev/null 2>&1 || true
    done
    for rep in $(seq "$R"); do
        note "repetition $rep/$R"
        for entry in "${servers[@]}"; do
            IFS='|' read -r name pid port <<< "$entry"
            load_wrk server-wrk "$name" server "$pid" "$CONNS" "http://127.0.0.1:$port/"
            if [ "$HAVE_BENCH" = 1 ]; then
                load_json server-bench "$name" server "$pid" \
                    "$WIRE" bench -c "$CONNS" -d "${D}s" -t 1 --json "http://127.0.0.1:$port/"
            elif [ "$rep" = 1 ]; then
                rec skip server-bench "$name" "skipped: wire bench not built"
            fi
        done
    done
    stop_pid "$HB_PID"
    stop_pid "$WIRE_PID"
fi

if wants bulk; then
    say "bulk: $BULK_SIZE to /dev/null"
    mkdir -p "$WORK/files"
    fallocate -l "$BULK_SIZE" "$WORK/files/big" 2> /dev/null || truncate -s "$BULK_SIZE" "$WORK/files/big"
    bytes=$(stat -c %s "$WORK/files/big")
    cat "$WORK/files/big" > /dev/null # into the page cache, so no row pays for the disk
    start_wire wire-files "$WIRE_PORT" --root "$WORK/files"
    FILES_PID=$SERVER_PID
    rec title bulk "bulk: $BULK_SIZE GET to /dev/null (client CPU, client peak RSS)"
    rec ref bulk "curl ← nginx (sendfile)"
    for rep in $(seq "$R_BULK"); do
        note "repetition $rep/$R_BULK"
        download bulk "curl ← nginx (sendfile)" "$bytes" curl -s -o /dev/null "${NGINX_URL}files/big"
        download bulk "wire get ← nginx (sendfile)" "$bytes" "$WIRE" get -s -o /dev/null "${NGINX_URL}files/big"
        download bulk "AsyncHTTPClient ← nginx (sendfile)" "$bytes" "$BIN/AHCClient" --download "${NGINX_URL}files/big"
        download bulk "curl ← wire serve --root" "$bytes" curl -s -o /dev/null "http://127.0.0.1:$WIRE_PORT/big"
        download bulk "wire get ← wire serve --root" "$bytes" \
            "$WIRE" get -s -o /dev/null "http://127.0.0.1:$WIRE_PORT/big"
    done
    stop_pid "$FILES_PID"
fi

if wants scale; then
    say "scale: $SCALE keep-alive connections"
    start_wire wire "$WIRE_PORT" --hello
    WIRE_PID=$SERVER_PID
    for n in $SCALE; do
        section="scale-$n"
        rec title "$section" "scale: $n conns ← \`wrk -t1 -c$n\` (server CPU; server RSS per idle conn)"
        rec ref "$section" "nginx, 1 worker"
        if [ $((n + 100)) -gt "$FD_LIMIT" ]; then # each side is a process of its own, with this limit
            rec skip "$section" "all servers" "skipped: ulimit -n is $FD_LIMIT"
            continue
        fi
        for rep in $(seq "$R"); do
            note "$n connections, repetition $rep/$R"
            load_wrk "$section" "nginx, 1 worker" server "$NGINX_PID" "$n" "$NGINX_URL"
            load_wrk "$section" "wire serve --hello --loops 1" server "$WIRE_PID" "$n" "http://127.0.0.1:$WIRE_PORT/"
        done
        if [ "$n" -ge 1000 ]; then
            # Fresh servers, so the memory the load runs left in their allocators does not hide the cost.
            for rep in $(seq "$R"); do
                port=$(free_port)
                start_nginx nginx-idle "$port"
                idle_rss "$section" "nginx, 1 worker" "$SERVER_PID" "$port" "$n"
                stop_pid "$SERVER_PID"
                port=$(free_port)
                start_wire wire-idle "$port" --hello
                idle_rss "$section" "wire serve --hello --loops 1" "$SERVER_PID" "$port" "$n"
                stop_pid "$SERVER_PID"
            done
        fi
    done
    stop_pid "$WIRE_PID"
fi

if wants tls; then
    if [ "$HAVE_TLS" = 0 ]; then
        rec title tls "TLS: handshakes/s (new, resumed) and bulk MB/s"
        rec skip tls "all" "skipped: TLS not built (wire serve has no --tls-cert)"
    else
        say "TLS: handshakes and bulk"
        openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
            -keyout "$WORK/key.pem" -out "$WORK/cert.pem" > /dev/null 2>&1
        mkdir -p "$WORK/files"
        [ -f "$WORK/files/big" ] || truncate -s "$BULK_SIZE" "$WORK/files/big"
        bytes=$(stat -c %s "$WORK/files/big")
        NGINX_TLS_PORT=$(free_port)
        tls_nginx_port=$(free_port)
        start_nginx nginx-tls "$tls_nginx_port" "$NGINX_TLS_PORT" "$WORK/cert.pem" "$WORK/key.pem"
        NGINX_TLS_PID=$SERVER_PID
        WIRE_TLS_PORT=$(free_port)
        TLS_WAIT=1 start_wire wire-tls "$WIRE_TLS_PORT" --root "$WORK/files" \
            --tls-cert "$WORK/cert.pem" --tls-key "$WORK/key.pem"
        WIRE_TLS_PID=$SERVER_PID
        # `s_time -reuse` without -www never reads after the handshake, so it never sees TLS 1.3's tickets (sent
        # after it) and cannot resume TLS 1.3 against any server: resumption is measured over TLS 1.2. (nginx before
        # 1.23.4 speaks only up to TLS 1.2 unless told, hence ssl_protocols above.)
        declare -A tls_args=([new]="-new" [reuse]="-reuse -tls1_2")
        declare -A tls_titles=([new]="new TLS 1.3" [reuse]="resumed TLS 1.2")
        for mode in new reuse; do
            rec title "tls-$mode" "TLS handshakes, ${tls_titles[$mode]} ← \`openssl s_time ${tls_args[$mode]}\` (server CPU per handshake)"
            rec ref "tls-$mode" "nginx, 1 worker"
        done
        rec title tls-bulk "TLS bulk: $BULK_SIZE GET to /dev/null (client CPU, client peak RSS)"
        rec ref tls-bulk "curl -k ← nginx"
        for rep in $(seq "$R"); do
            note "repetition $rep/$R"
            for mode in new reuse; do
                for entry in "nginx, 1 worker|$NGINX_TLS_PID|$NGINX_TLS_PORT" \
                    "wire serve --tls-cert|$WIRE_TLS_PID|$WIRE_TLS_PORT"; do
                    IFS='|' read -r name pid port <<< "$entry"
                    before=$(ticks "$pid")
                    start=$(date +%s.%N)
                    taskset -c "$CLIENT_CPU" openssl s_time -connect "127.0.0.1:$port" ${tls_args[$mode]} -time "$D" \
                        > "$WORK/stime.txt" 2>&1 || { cat "$WORK/stime.txt" >&2; die "openssl s_time failed"; }
                    end=$(date +%s.%N)
                    after=$(ticks "$pid")
                    count=$(python3 "$PY" stime "$WORK/stime.txt")
                    rec m "tls-$mode" "$name" hps "$(calc "$count / ($end - $start)")"
                    rec m "tls-$mode" "$name" cpu_us_hs "$(calc "($after - $before) / $CLK_TCK * 1e6 / max($count, 1)")"
                done
            done
            download tls-bulk "curl -k ← nginx" "$bytes" curl -sk -o /dev/null \
                "https://127.0.0.1:$NGINX_TLS_PORT/files/big"
            download tls-bulk "wire get -k ← nginx" "$bytes" "$WIRE" get -k -s -o /dev/null \
                "https://127.0.0.1:$NGINX_TLS_PORT/files/big"
            download tls-bulk "curl -k ← wire serve --tls-cert" "$bytes" curl -sk -o /dev/null \
                "https://127.0.0.1:$WIRE_TLS_PORT/big"
        done
        stop_pid "$WIRE_TLS_PID"
        stop_pid "$NGINX_TLS_PID"
    fi
fi
stop_pid "$NGINX_PID"

if wants parser; then
    say "parser figures (ParseFigures, pinned to core $CLIENT_CPU)"
    parse_args=()
    [ "${QUICK:-0}" = 1 ] && parse_args=(--runs 3 --scale 0.2)
    taskset -c "$CLIENT_CPU" "$BIN/ParseFigures" "${parse_args[@]}" > "$WORK/parse.txt" 2> "$WORK/parse.err" ||
        { cat "$WORK/parse.err" >&2; die "ParseFigures failed"; }
    python3 "$PY" parse "$WORK/parse.txt" parser >> "$RAW"
fi

# --- the table -------------------------------------------------------------------------------------------------

LOAD_AFTER=$(cut -d' ' -f1-3 /proc/loadavg)
mkdir -p "$(dirname "$OUT")"
{
    echo "# Benchmark matrix"
    echo
    echo "\`$([ "${QUICK:-0}" = 1 ] && echo 'QUICK=1 ')Benchmarks/run.sh\` on $(date -u '+%Y-%m-%d %H:%M UTC'), Wire" \
        "$(git -C "$ROOT" rev-parse --short HEAD 2> /dev/null || echo '(not a git checkout)'):" \
        "R=$R repetitions of ${D} s each, median (min–max); servers on core $SERVER_CPU, clients on core $CLIENT_CPU" \
        "(\`taskset\`); load average $LOAD_BEFORE before, $LOAD_AFTER after; $((SECONDS - STARTED)) s."
    echo
    echo "Machine: $(nproc) cores ($(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//'))," \
        "$(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo), Linux $(uname -r)," \
        "$(swift --version 2>&1 | grep -m1 -o 'Swift version [^ ]*'), $("$NGINX" -v 2>&1 | sed 's/.*: //')," \
        "$(wrk -v 2>&1 | head -1 | cut -d' ' -f1-2), $(curl --version | head -1 | cut -d' ' -f1-2)," \
        "$(openssl version | cut -d' ' -f1-2), $(python3 --version)."
    echo
    python3 "$PY" table "$RAW"
} > "$WORK/table.md"
cp "$WORK/table.md" "$OUT"
cat "$OUT"
say "written to $OUT"
