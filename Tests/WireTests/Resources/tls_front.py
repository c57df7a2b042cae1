#!/usr/bin/env python3
"""A TLS front for a plain proxy, making it an https:// proxy for the tests.

Usage: tls_front.py CERT_CHAIN KEY TARGET_PORT
Prints its port on the first line, then serves until stdin closes: each connection's TLS is terminated with the
given certificate and its plaintext relayed both ways to 127.0.0.1:TARGET_PORT.
"""
import socket
import ssl
import sys
import threading

context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
context.load_cert_chain(sys.argv[1], sys.argv[2])
target = int(sys.argv[3])


def pump(src, dst):
    try:
        while True:
            data = src.recv(65536)
            if not data:
                break
            dst.sendall(data)
    except OSError:
        pass
    try:
        dst.shutdown(socket.SHUT_WR)
    except OSError:
        pass


def serve(raw):
    try:
        conn = context.wrap_socket(raw, server_side=True)
    except (OSError, ssl.SSLError):
        raw.close()
        return
    try:
        upstream = socket.create_connection(("127.0.0.1", target))
    except OSError:
        conn.close()
        return
    t = threading.Thread(target=pump, args=(upstream, conn), daemon=True)
    t.start()
    pump(conn, upstream)
    t.join()
    conn.close()
    upstream.close()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)


def accept_loop():
    while True:
        raw, _ = listener.accept()
        threading.Thread(target=serve, args=(raw,), daemon=True).start()


threading.Thread(target=accept_loop, daemon=True).start()
sys.stdin.read()
