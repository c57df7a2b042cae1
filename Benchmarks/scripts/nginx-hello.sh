# Sourced by idle-rss.sh and busy-rps.sh: nginx_hello_conf DIR PORT writes DIR/nginx.conf, the matrix's nginx (one
# worker in the foreground, no access log, long keep-alive, `return 200 "Hello, World!"`) listening on 127.0.0.1:PORT.
nginx_hello_conf() {
    cat > "$1/nginx.conf" << NG
daemon off; master_process off; worker_processes 1; worker_rlimit_nofile 20000; pid $1/nginx.pid;
error_log $1/error.log warn; events { worker_connections 20000; multi_accept on; }
http { access_log off; default_type text/plain; keepalive_timeout 300s; keepalive_requests 100000000;
  client_body_temp_path $1/body; proxy_temp_path $1/proxy; fastcgi_temp_path $1/fcgi; uwsgi_temp_path $1/uwsgi;
  scgi_temp_path $1/scgi;
  server { listen 127.0.0.1:$2 backlog=4096; location = / { return 200 "Hello, World!"; } } }
NG
}
