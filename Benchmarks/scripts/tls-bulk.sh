#!/bin/bash
# tls-bulk.sh OLD_WIRE NEW_WIRE ROUNDS [SIZE]: TLS bulk downloads as run.sh's tls-bulk rows measure them, with two
# builds of the tool side by side. nginx (one worker, core 0, TLS 1.2-1.3, a self-signed P-256 certificate, sendfile)
# serves a sparse file of SIZE (default 1G); each round runs `curl -sk`, `OLD get -sk` and `NEW get -sk` in turn on
# core 1 under /usr/bin/time (wall-clock MB/s, user+system CPU seconds, peak RSS). Then the server side: `OLD serve
# --tls-cert` and `NEW serve --tls-cert` (one loop, core 0) each serve the file to `curl -sk` on core 1, in turn, with
# the server's CPU per download read from /proc/PID/stat. The first round of each part is a warm-up and not counted.
# Prints, per tool, the median (min-max) of each figure, and the median of the per-round ratios to the reference.
# SERVE=0 skips the server side. Needs nginx-light, curl, openssl, python3, time. Example (under the build lock, with no
# build running):
#   flock /tmp/wire-swift.lock Benchmarks/scripts/tls-bulk.sh /tmp/wire-old .build/release/wire 8
set -euo pipefail
OLD=$(readlink -f "$1"); NEW=$(readlink -f "$2"); ROUNDS=$3; SIZE=${4:-1G}
SERVER_CPU=${SERVER_CPU:-0}; CLIENT_CPU=${CLIENT_CPU:-1}
. "$(dirname "$0")/processes.sh"
NGINX=$(command -v nginx || echo /usr/sbin/nginx)
TICK=$(getconf CLK_TCK)
wait_https() { # wait_https PID URL
    for _ in $(seq 200); do
        curl -sk -o /dev/null -m 1 "$2" && return 0
        kill -0 "$1" 2> /dev/null || { echo "the server for $2 exited" >&2; exit 1; }
        sleep 0.05
    done
    echo "no answer from $2" >&2; exit 1
}

openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
    -keyout "$W/key.pem" -out "$W/cert.pem" > /dev/null 2>&1
mkdir -p "$W/files" "$W/nginx"
truncate -s "$SIZE" "$W/files/big"
BYTES=$(stat -c %s "$W/files/big")
NP=$(free_port)
cat > "$W/nginx/nginx.conf" << EOF
daemon off; master_process off; worker_processes 1; pid $W/nginx/nginx.pid; error_log $W/nginx/error.log warn;
events { worker_connections 1024; }
http { access_log off; default_type application/octet-stream; sendfile on; tcp_nopush on;
  client_body_temp_path $W/nginx/body; proxy_temp_path $W/nginx/proxy; fastcgi_temp_path $W/nginx/fcgi;
  uwsgi_temp_path $W/nginx/uwsgi; scgi_temp_path $W/nginx/scgi;
  server { listen 127.0.0.1:$NP ssl; ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem;
    ssl_protocols TLSv1.2 TLSv1.3; location /files/ { alias $W/files/; } } }
EOF
taskset -c "$SERVER_CPU" "$NGINX" -p "$W/nginx" -e "$W/nginx/error.log" -c "$W/nginx/nginx.conf" &
PIDS+=($!)
wait_https "${PIDS[-1]}" "https://127.0.0.1:$NP/files/"

RAW="$W/raw.tsv"
: > "$RAW"
# get ROUND PART TOOL COMMAND...: one download on CLIENT_CPU; records MB/s, CPU s and peak RSS MiB.
get() {
    local round=$1 part=$2 tool=$3 start end e u s m
    shift 3
    start=$(date +%s.%N)
    /usr/bin/time -f '%e %U %S %M' -o "$W/time.txt" taskset -c "$CLIENT_CPU" "$@" > /dev/null
    end=$(date +%s.%N)
    read -r e u s m < <(tail -1 "$W/time.txt")
    printf '%s\t%s\t%s\t%s\t%s\t%s\n' "$round" "$part" "$tool" \
        "$(python3 -c "print($BYTES / 1e6 / ($end - $start))")" "$(python3 -c "print($u + $s)")" \
        "$(python3 -c "print($m / 1024)")" >> "$RAW"
}
URL="https://127.0.0.1:$NP/files/big"
for r in $(seq 0 "$ROUNDS"); do
    get "$r" client "curl -k <- nginx" curl -sk -o /dev/null "$URL"
    get "$r" client "old wire get -k <- nginx" "$OLD" get -sk -o /dev/null "$URL"
    get "$r" client "new wire get -k <- nginx" "$NEW" get -sk -o /dev/null "$URL"
done

# The server side: both builds serve, one download each in turn; the server's CPU per download.
if [ "${SERVE:-1}" != 0 ]; then
OP=$(free_port); NWP=$(free_port)
taskset -c "$SERVER_CPU" "$OLD" serve --loops 1 --port "$OP" --root "$W/files" --tls-cert "$W/cert.pem" \
    --tls-key "$W/key.pem" > "$W/old.log" 2>&1 &
OLDPID=$!; PIDS+=("$OLDPID")
taskset -c "$SERVER_CPU" "$NEW" serve --loops 1 --port "$NWP" --root "$W/files" --tls-cert "$W/cert.pem" \
    --tls-key "$W/key.pem" > "$W/new.log" 2>&1 &
NEWPID=$!; PIDS+=("$NEWPID")
wait_https "$OLDPID" "https://127.0.0.1:$OP/"
wait_https "$NEWPID" "https://127.0.0.1:$NWP/"
serve() { # serve ROUND TOOL PID PORT
    local before after
    before=$(ticks "$3")
    get "$1" server "curl -k <- $2" curl -sk -o /dev/null "https://127.0.0.1:$4/big"
    after=$(ticks "$3")
    printf '%s\tserver-cpu\t%s\t%s\n' "$1" "$2" "$(python3 -c "print(($after - $before) / $TICK)")" >> "$RAW"
}
for r in $(seq 0 "$ROUNDS"); do
    serve "$r" "old wire serve --tls-cert" "$OLDPID" "$OP"
    serve "$r" "new wire serve --tls-cert" "$NEWPID" "$NWP"
done
fi

python3 - "$RAW" << 'PY'
import statistics, sys
rows = [line.rstrip("\n").split("\t") for line in open(sys.argv[1])]
counted = [r for r in rows if r[0] != "0"]
def spread(values, fmt):
    return f"{fmt(statistics.median(values))} ({fmt(min(values))}-{fmt(max(values))})"
def table(part, reference):
    tools = list(dict.fromkeys(r[2] for r in counted if r[1] == part))
    figures = {t: [r for r in counted if r[1] == part and r[2] == t] for t in tools}
    print(f"{'':40} {'MB/s':>22} {'CPU s':>20} {'peak RSS MiB':>20}")
    for t in tools:
        mbps = [float(r[3]) for r in figures[t]]; cpu = [float(r[4]) for r in figures[t]]
        rss = [float(r[5]) for r in figures[t]]
        print(f"{t:40} {spread(mbps, lambda v: f'{v:,.0f}'):>22} {spread(cpu, lambda v: f'{v:.2f}'):>20} "
              f"{spread(rss, lambda v: f'{v:.1f}'):>20}")
    if reference is None: return
    print(f"per-round ratios to {reference}, median (min-max):")
    ref = {r[0]: r for r in figures[reference]}
    for t in tools:
        if t == reference: continue
        pairs = [(r, ref[r[0]]) for r in figures[t] if r[0] in ref]
        ratio = lambda i: spread([float(a[i]) / float(b[i]) for a, b in pairs], lambda v: f"{v:.2f}x")
        print(f"  {t:38} MB/s {ratio(3)}  CPU {ratio(4)}  RSS {ratio(5)}")
print(f"rounds counted: {len(set(r[0] for r in counted))}")
print("client side: 1 file GET over TLS to /dev/null, client on its own core")
table("client", "curl -k <- nginx")
old = {r[0]: r for r in counted if r[1] == "client" and r[2].startswith("old")}
new = {r[0]: r for r in counted if r[1] == "client" and r[2].startswith("new")}
pairs = [(new[k], old[k]) for k in new if k in old]
if pairs:
    ratio = lambda i: spread([float(a[i]) / float(b[i]) for a, b in pairs], lambda v: f"{v:.2f}x")
    print(f"  {'new / old wire get -k, per round':38} MB/s {ratio(3)}  CPU {ratio(4)}  RSS {ratio(5)}")
if not any(r[1] == "server" for r in counted): sys.exit(0)
print("server side: curl -k downloads from wire serve --tls-cert (client figures: curl's)")
table("server", None)
for t in dict.fromkeys(r[2] for r in counted if r[1] == "server-cpu"):
    print(f"  {t:38} server CPU s per download {spread([float(r[3]) for r in counted if r[1] == 'server-cpu' and r[2] == t], lambda v: f'{v:.2f}')}")
old = {r[0]: float(r[3]) for r in counted if r[1] == "server-cpu" and r[2].startswith("old")}
new = {r[0]: float(r[3]) for r in counted if r[1] == "server-cpu" and r[2].startswith("new")}
if old and new:
    print("  new / old server CPU per round: " + spread([new[k] / old[k] for k in new if k in old and old[k] > 0], lambda v: f"{v:.2f}x"))
PY
