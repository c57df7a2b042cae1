#!/bin/bash
# tls-handshakes.sh REPS SECONDS NAME=WIRE...: server CPU per TLS handshake, nginx (one worker) against each named
# `wire` binary (`wire serve --loops 1 --hello`), the same certificate for both, for each key type in KEYS (rsa: RSA-2048,
# p256: ECDSA P-256) and each mode in MODES (new: `openssl s_time -new`, a full TLS 1.3 handshake per connection;
# reuse: `openssl s_time -reuse -tls1_2`, resumed TLS 1.2: s_time never reads a TLS 1.3 ticket, see BENCHMARKS.md).
# Servers on core 0, s_time on core 1; server CPU from /proc/PID/stat (utime+stime) over each s_time run, divided by
# the connections s_time counted. The servers run through all repetitions; each repetition runs every server once
# per (key, mode), the order reversed on every other repetition. Prints one line per run, then per (key, mode) each
# server's median (min–max) of µs per handshake and handshakes/s, and the median (min–max) of the per-repetition
# ratio to nginx.
#   Example: flock /tmp/wire-swift.lock Benchmarks/scripts/tls-handshakes.sh 5 5 main=/work/main/.build/release/wire \
#                new=.build/release/wire
# Environment: KEYS (default "rsa p256"), MODES (default "new reuse").
set -euo pipefail
REPS=$1; D=$2; shift 2
KEYS=${KEYS:-rsa p256}
MODES=${MODES:-new reuse}
. "$(dirname "$0")/processes.sh"
wait_tls() { # wait_tls PORT: until a TLS handshake succeeds there
    for _ in $(seq 100); do
        openssl s_client -connect "127.0.0.1:$1" < /dev/null > /dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "tls-handshakes.sh: nothing answers TLS on port $1" >&2; exit 1
}

declare -A PID PORT
SERVERS=(nginx)
for key in $KEYS; do
    case $key in
        rsa) openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -keyout "$W/$key.key" \
            -out "$W/$key.pem" > /dev/null 2>&1 ;;
        p256) openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
            -keyout "$W/$key.key" -out "$W/$key.pem" > /dev/null 2>&1 ;;
        *) echo "tls-handshakes.sh: unknown key type $key" >&2; exit 2 ;;
    esac
    # run.sh's TLS server block: a shared session cache, tickets, TLS 1.2 and 1.3.
    mkdir -p "$W/nginx-$key"
    PORT[nginx-$key]=$(free_port)
    cat > "$W/nginx-$key/nginx.conf" << NG
daemon off; master_process off; worker_processes 1; pid $W/nginx-$key/nginx.pid;
error_log $W/nginx-$key/error.log warn; events { worker_connections 4096; }
http { access_log off; default_type text/plain; client_body_temp_path $W/nginx-$key/body;
  proxy_temp_path $W/nginx-$key/proxy; fastcgi_temp_path $W/nginx-$key/fcgi; uwsgi_temp_path $W/nginx-$key/uwsgi;
  scgi_temp_path $W/nginx-$key/scgi;
  server { listen 127.0.0.1:${PORT[nginx-$key]} ssl backlog=4096; ssl_certificate $W/$key.pem;
    ssl_certificate_key $W/$key.key; ssl_session_cache shared:matrix:8m; ssl_session_tickets on;
    ssl_protocols TLSv1.2 TLSv1.3; location = / { return 200 "Hello, World!"; } } }
NG
    taskset -c 0 nginx -p "$W/nginx-$key" -e "$W/nginx-$key/error.log" -c "$W/nginx-$key/nginx.conf" &
    PID[nginx-$key]=$!; PIDS+=($!)
    for nb in "$@"; do
        name=${nb%%=*}; bin=${nb#*=}
        PORT[$name-$key]=$(free_port)
        taskset -c 0 "$bin" serve --loops 1 --hello --port "${PORT[$name-$key]}" --tls-cert "$W/$key.pem" \
            --tls-key "$W/$key.key" > "$W/$name-$key.log" 2>&1 &
        PID[$name-$key]=$!; PIDS+=($!)
    done
done
for nb in "$@"; do SERVERS+=("${nb%%=*}"); done
for key in $KEYS; do
    for s in "${SERVERS[@]}"; do
        wait_tls "${PORT[$s-$key]}"
        # What each side negotiates, once: the same version, cipher and group make the comparison fair.
        echo "# $s $key: $(openssl s_client -connect "127.0.0.1:${PORT[$s-$key]}" < /dev/null 2>&1 |
            grep -E '^(New,|Server Temp Key)' | tr '\n' ' ')"
    done
done

declare -A ARGS=([new]="-new" [reuse]="-reuse -tls1_2")
RAW="$W/raw.txt"
for rep in $(seq "$REPS"); do
    order=("${SERVERS[@]}")
    if [ $((rep % 2)) = 0 ]; then order=(); for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[$i]}"); done; fi
    for key in $KEYS; do for mode in $MODES; do for s in "${order[@]}"; do
        pid=${PID[$s-$key]}
        b=$(ticks "$pid"); t0=$(date +%s.%N)
        # shellcheck disable=SC2086
        taskset -c 1 openssl s_time -connect "127.0.0.1:${PORT[$s-$key]}" ${ARGS[$mode]} -time "$D" > "$W/st.txt" 2>&1
        t1=$(date +%s.%N); a=$(ticks "$pid")
        n=$(grep -oE '^[0-9]+ connections in' "$W/st.txt" | head -1 | cut -d' ' -f1)
        line="rep=$rep key=$key mode=$mode server=$s count=$n hps=$(python3 -c "print(round($n/($t1-$t0)))")"
        line="$line cpu_us=$(python3 -c "print(round(($a-$b)*1e6/$(getconf CLK_TCK)/max($n,1),1))")"
        echo "$line" | tee -a "$RAW"
    done; done; done
done

python3 - "$RAW" << 'PY'
import collections, statistics, sys
runs = [dict(f.split("=", 1) for f in line.split()) for line in open(sys.argv[1])]
cell = collections.defaultdict(list)
for r in runs:
    cell[(r["key"], r["mode"], r["server"])].append(r)
def fmt(values, digits=0):
    f = lambda v: f"{v:,.{digits}f}"
    return f"{f(statistics.median(values))} ({f(min(values))}–{f(max(values))})"
keys = list(dict.fromkeys(r["key"] for r in runs)); modes = list(dict.fromkeys(r["mode"] for r in runs))
servers = list(dict.fromkeys(r["server"] for r in runs))
print("| key | handshake | server | µs CPU/handshake | handshakes/s | CPU ratio to nginx (per repetition) |")
print("|---|---|---|---|---|---|")
for k in keys:
    for m in modes:
        ref = {r["rep"]: float(r["cpu_us"]) for r in cell[(k, m, "nginx")]}
        for s in servers:
            rs = cell[(k, m, s)]
            cpu = [float(r["cpu_us"]) for r in rs]; hps = [float(r["hps"]) for r in rs]
            ratio = "reference" if s == "nginx" else fmt([float(r["cpu_us"]) / ref[r["rep"]] for r in rs], 2) + "×"
            label = {"new": "new TLS 1.3", "reuse": "resumed TLS 1.2"}[m]
            print(f"| {k} | {label} | {s} | {fmt(cpu)} | {fmt(hps)} | {ratio} |")
PY
