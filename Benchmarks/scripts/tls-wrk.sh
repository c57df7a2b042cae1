#!/bin/bash
# tls-wrk.sh REPS SECONDS NAME=WIRE...: requests/s and server CPU per request under `wrk -t1 -c64` over HTTPS (keep-alive)
# for nginx (one worker, `return 200 "Hello, World!"`, run.sh's TLS settings) and each named `wire` binary
# (`wire serve --hello --loops 1 --tls-cert … --tls-key …`), the same ECDSA P-256 certificate (KEY=rsa: RSA-2048),
# alternated per repetition (servers on core 0, wrk on core 1; a 1 s warm-up run before each measured one). One line
# per run, then each server's median (min–max) and the median (min–max) of the per-repetition ratio to nginx.
#   Example: flock /tmp/wire-swift.lock Benchmarks/scripts/tls-wrk.sh 5 5 main=/work/main/.build/release/wire \
#                new=.build/release/wire
set -euo pipefail
REPS=$1; D=$2; shift 2
KEY=${KEY:-p256}
. "$(dirname "$0")/processes.sh"
if [ "$KEY" = rsa ]; then
    openssl req -x509 -newkey rsa:2048 -nodes -days 2 -subj /CN=localhost -keyout "$W/key.pem" -out "$W/cert.pem" \
        > /dev/null 2>&1
else
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
        -keyout "$W/key.pem" -out "$W/cert.pem" > /dev/null 2>&1
fi
declare -A PID PORT
PORT[nginx]=$(free_port)
cat > "$W/nginx.conf" << NG
daemon off; master_process off; worker_processes 1; pid $W/nginx.pid; worker_rlimit_nofile 4096;
error_log $W/error.log warn; events { worker_connections 4096; }
http { access_log off; default_type text/plain; keepalive_timeout 300s; keepalive_requests 100000000;
  client_body_temp_path $W/body; proxy_temp_path $W/proxy; fastcgi_temp_path $W/fcgi; uwsgi_temp_path $W/uwsgi;
  scgi_temp_path $W/scgi;
  server { listen 127.0.0.1:${PORT[nginx]} ssl backlog=4096; ssl_certificate $W/cert.pem; ssl_certificate_key $W/key.pem;
    ssl_session_cache shared:matrix:8m; ssl_session_tickets on; ssl_protocols TLSv1.2 TLSv1.3;
    location = / { return 200 "Hello, World!"; } } }
NG
taskset -c 0 nginx -p "$W" -e "$W/error.log" -c "$W/nginx.conf" &
PID[nginx]=$!; PIDS+=($!)
SERVERS=(nginx)
for nb in "$@"; do
    name=${nb%%=*}; bin=${nb#*=}; SERVERS+=("$name")
    PORT[$name]=$(free_port)
    taskset -c 0 "$bin" serve --loops 1 --hello --port "${PORT[$name]}" --tls-cert "$W/cert.pem" --tls-key "$W/key.pem" \
        > "$W/$name.log" 2>&1 &
    PID[$name]=$!; PIDS+=($!)
done
for s in "${SERVERS[@]}"; do
    for _ in $(seq 100); do curl -skf "https://127.0.0.1:${PORT[$s]}/" > /dev/null && break; sleep 0.1; done
    echo "# $s: $(curl -sk "https://127.0.0.1:${PORT[$s]}/")"
done
RAW="$W/raw.txt"
for rep in $(seq "$REPS"); do
    order=("${SERVERS[@]}")
    if [ $((rep % 2)) = 0 ]; then order=(); for ((i = ${#SERVERS[@]} - 1; i >= 0; i--)); do order+=("${SERVERS[$i]}"); done; fi
    for s in "${order[@]}"; do
        url="https://127.0.0.1:${PORT[$s]}/"
        taskset -c 1 wrk -t1 -c64 -d1s "$url" > /dev/null 2>&1
        b=$(ticks "${PID[$s]}")
        taskset -c 1 wrk -t1 -c64 -d"${D}s" "$url" > "$W/wrk.txt" 2>&1
        a=$(ticks "${PID[$s]}")
        req=$(awk '/requests in/ {print $1}' "$W/wrk.txt"); rps=$(awk '/Requests\/sec/ {print $2}' "$W/wrk.txt")
        errs=$(grep -c "Socket errors\|Non-2xx" "$W/wrk.txt" || true)
        echo "rep=$rep server=$s rps=$rps cpu_us=$(python3 -c "print(round(($a-$b)*1e6/$(getconf CLK_TCK)/$req,2))") errlines=$errs" |
            tee -a "$RAW"
    done
done
python3 - "$RAW" << 'PY'
import collections, statistics, sys
runs = [dict(f.split("=", 1) for f in line.split()) for line in open(sys.argv[1])]
by = collections.defaultdict(list)
for r in runs: by[r["server"]].append(r)
fmt = lambda v, d: f"{statistics.median(v):,.{d}f} ({min(v):,.{d}f}–{max(v):,.{d}f})"
ref = {r["rep"]: r for r in by["nginx"]}
print("| server | requests/s | µs server CPU/request | ratio to nginx: requests/s, CPU (per repetition) |")
print("|---|---|---|---|")
for s, rs in by.items():
    rps = [float(r["rps"]) for r in rs]; cpu = [float(r["cpu_us"]) for r in rs]
    if s == "nginx": ratio = "reference"
    else:
        ratio = fmt([float(r["rps"]) / float(ref[r["rep"]]["rps"]) for r in rs], 2) + "×, " + \
            fmt([float(r["cpu_us"]) / float(ref[r["rep"]]["cpu_us"]) for r in rs], 2) + "×"
    print(f"| {s} | {fmt(rps, 0)} | {fmt(cpu, 2)} | {ratio} |")
PY
