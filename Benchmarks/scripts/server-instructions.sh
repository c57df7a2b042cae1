#!/usr/bin/env bash
# The server's user-space instructions per connection or per request, counted by callgrind on its loop thread:
#
#   Benchmarks/scripts/server-instructions.sh MODE BINARY [SECONDS] [PORT]
#
#   MODE close       one request per connection (wrk -c2 with `Connection: close`): per connection
#   MODE keepalive   keep-alive requests (wrk -c64): per request
#   MODE resume      resumed TLS 1.2 handshakes (openssl s_time -reuse, P-256 certificate made here): per handshake
#   MODE new         new TLS 1.3 handshakes (openssl s_time -new, the same certificate): per handshake
#   MODE tls         keep-alive requests over TLS 1.3 (wrk -c64 on https, the same certificate): per request
#   MODE nginx-close the same as `close`, against nginx with one worker and `return 200` (for the ratio)
#   MODE nginx-resume, nginx-new, nginx-tls: `resume`, `new` and `tls` against that nginx with the matrix's TLS block (run.sh: a
#                    shared session cache and tickets; NGINX_TICKETS=off turns its tickets off, so it resumes from the
#                    cache)
#
# BINARY is a `wire` built in release; valgrind 3.19 cannot read this toolchain's DWARF, so the script counts on a
# `strip --strip-debug` copy. The server runs on core 0 under `valgrind --tool=callgrind --separate-threads=yes`, the
# load on core 1; the counters are zeroed after a 2 s warm-up and dumped after SECONDS (default 8) of load, and the
# loop thread's count is divided by what the load generator reports. The dump stays in $OUT_DIR (default a temporary
# folder) for `callgrind_annotate`. SERVE_ARGS adds arguments to `wire serve` in the TLS modes (e.g. SERVE_ARGS="--tls-resumption
# tickets").
set -euo pipefail
mode=${1:?usage: server-instructions.sh close|keepalive|resume|new|tls|nginx-close|nginx-resume|nginx-new|nginx-tls BINARY [SECONDS] [PORT]}
case "$mode" in
close | keepalive | resume | new | tls | nginx-close | nginx-resume | nginx-new | nginx-tls) ;;
*) echo "server-instructions.sh: unknown mode $mode" >&2; exit 2 ;;
esac
binary=${2:-}
seconds=${3:-8}
port=${4:-18777}
out=${OUT_DIR:-$(mktemp -d)}
for tool in valgrind callgrind_control wrk; do
    command -v "$tool" > /dev/null || { echo "server-instructions.sh: needs $tool" >&2; exit 2; }
done

read -ra extra_args <<< "${SERVE_ARGS:-}"
server_args=(serve --hello --loops 1 --port "$port" "${extra_args[@]}")
url=http://127.0.0.1:$port/
probe=(curl -s -o /dev/null "$url")
case "$mode" in resume | new | tls | nginx-resume | nginx-new | nginx-tls) tls_mode=yes ;; *) tls_mode=no ;; esac
if [ "$tls_mode" = yes ]; then
    openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 2 -subj /CN=localhost \
        -keyout "$out/p256.key" -out "$out/p256.pem" > /dev/null 2>&1
    server_args+=(--tls-cert "$out/p256.pem" --tls-key "$out/p256.key")
    probe=(curl -sk -o /dev/null "https://127.0.0.1:$port/")
fi

if [ "${mode#nginx-}" != "$mode" ]; then
    mkdir -p "$out/nginx"
    tls=""
    if [ "$tls_mode" = yes ]; then
        tls="ssl; ssl_certificate $out/p256.pem; ssl_certificate_key $out/p256.key; ssl_session_cache shared:matrix:8m;
  ssl_session_tickets ${NGINX_TICKETS:-on}; ssl_protocols TLSv1.2 TLSv1.3"
    fi
    cat > "$out/nginx/nginx.conf" <<EOF
daemon off; master_process off; worker_processes 1; pid $out/nginx/nginx.pid; error_log $out/nginx/error.log warn;
events { worker_connections 4096; }
http { access_log off; client_body_temp_path $out/nginx; proxy_temp_path $out/nginx; fastcgi_temp_path $out/nginx;
  uwsgi_temp_path $out/nginx; scgi_temp_path $out/nginx;
  server { listen 127.0.0.1:$port backlog=4096 $tls; location / { return 200 "Hello, World!"; } } }
EOF
    command=(nginx -p "$out/nginx" -c "$out/nginx/nginx.conf")
    separate=no
else
    [ -x "$binary" ] || { echo "server-instructions.sh: no binary at '$binary'" >&2; exit 2; }
    cp "$binary" "$out/wire" && strip --strip-debug "$out/wire"
    command=("$out/wire" "${server_args[@]}")
    separate=yes
fi

taskset -c 0 valgrind --tool=callgrind --separate-threads=$separate --callgrind-out-file="$out/callgrind.%p" \
    "${command[@]}" > "$out/server.txt" 2>&1 &
server=$!
trap 'kill -INT $server 2> /dev/null || true' EXIT
for _ in $(seq 100); do "${probe[@]}" && break; sleep 0.3; done

load() {
    case "$mode" in
    close | nginx-close) taskset -c 1 wrk -t1 -c2 -d"$1"s -H "Connection: close" "$url" ;;
    keepalive) taskset -c 1 wrk -t1 -c64 -d"$1"s "$url" ;;
    resume | nginx-resume) taskset -c 1 openssl s_time -connect "127.0.0.1:$port" -reuse -tls1_2 -time "$1" ;;
    new | nginx-new) taskset -c 1 openssl s_time -connect "127.0.0.1:$port" -new -tls1_3 -time "$1" ;;
    tls | nginx-tls) taskset -c 1 wrk -t1 -c64 -d"$1"s "https://127.0.0.1:$port/" ;;
    *) echo "server-instructions.sh: unknown mode $mode" >&2; exit 2 ;;
    esac
}
load 2 > /dev/null 2>&1
callgrind_control -z $server > /dev/null
report=$(load "$seconds" 2>&1)
callgrind_control -d measured $server > /dev/null
kill -INT $server
wait $server 2> /dev/null || true
trap - EXIT

case "$mode" in
resume | new | nginx-resume | nginx-new) count=$(echo "$report" | awk '/connections in [0-9.]+ real/ {print $1; exit}') ;;
*) count=$(echo "$report" | awk '/requests in/ {print $1; exit}') ;;
esac
# The loop thread did the serving: the dump with the largest count (nginx has one thread).
best=0
for dump in "$out"/callgrind.*; do
    total=$(awk '/^summary:/ {print $2}' "$dump")
    if [ -n "$total" ] && [ "$total" -gt "$best" ]; then best=$total; file=$dump; fi
done
echo "$mode: $count in ${seconds}s; $best instructions on the serving thread ($file)"
[ -n "$count" ] && [ "$count" -gt 0 ] || { echo "server-instructions.sh: the load generator reported no count" >&2; exit 1; }
case "$mode" in resume | new | nginx-resume | nginx-new) unit=handshake ;; *close) unit=connection ;; *) unit=request ;; esac
python3 -c "print('%s: %.0f instructions per %s' % ('$mode', $best / $count, '$unit'))"
