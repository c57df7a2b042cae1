#!/usr/bin/env python3
"""A slow loopback CONNECT proxy: it holds each CONNECT's answer for HOLD seconds and counts the bytes the client
sends meanwhile, which RFC 9110 section 9.3.6 says must be none (nothing of the tunnelled protocol before the 2xx).

Usage: slow_connect_proxy.py RECORD_FILE HOLD
Prints its port on the first line, then serves until stdin closes. Per CONNECT it appends "TARGET EARLY_BYTES" to
RECORD_FILE, answers "200 Connection established", and relays to 127.0.0.1 at the target's port both ways.
"""
import select
import socket
import sys
import threading
import time

record_path = sys.argv[1]
hold = float(sys.argv[2])
record_lock = threading.Lock()


def relay(a, b):
    def pump(src, dst):
        try:
            while True:
                data = src.recv(65536)
                if not data:
                    break
                dst.sendall(data)
        except OSError:
            pass
        for s in (src, dst):
            try:
                s.shutdown(socket.SHUT_RDWR)
            except OSError:
                pass
    threading.Thread(target=pump, args=(a, b), daemon=True).start()
    threading.Thread(target=pump, args=(b, a), daemon=True).start()


def serve(conn):
    pending = b""
    while b"\r\n\r\n" not in pending:
        data = conn.recv(65536)
        if not data:
            conn.close()
            return
        pending += data
    head, early = pending.split(b"\r\n\r\n", 1)
    target = head.split(b"\r\n", 1)[0].split(b" ")[1].decode()
    # The slow part: the answer waits, and whatever the client sends meanwhile is counted.
    end = time.monotonic() + hold
    while True:
        left = end - time.monotonic()
        if left <= 0:
            break
        readable, _, _ = select.select([conn], [], [], left)
        if not readable:
            break
        data = conn.recv(65536)
        if not data:
            break
        early += data
    with record_lock:
        with open(record_path, "a") as f:
            f.write("%s %d\n" % (target, len(early)))
    origin = socket.create_connection(("127.0.0.1", int(target.rsplit(":", 1)[1])))
    conn.sendall(b"HTTP/1.1 200 Connection established\r\n\r\n")
    if early:
        origin.sendall(early)
    relay(conn, origin)


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)

    def accept():
        while True:
            conn, _ = listener.accept()
            threading.Thread(target=serve, args=(conn,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


main()
