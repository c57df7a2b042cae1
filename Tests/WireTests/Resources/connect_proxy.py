#!/usr/bin/env python3
"""A loopback HTTP proxy that answers CONNECT, for Wire's tunnel tests.

Prints its port on the first line, then serves until stdin closes. Per connection, per request head:
  CONNECT deny.example:PORT  407 with a Content-Length body; the connection stays open for more requests
  CONNECT anything else      "200 Connection established", then, in the same write, a greeting line;
                             after that every byte received is echoed back until the client ends its side,
                             then the proxy ends its side too
Every answer carries X-Request-Line and X-Host: what the proxy received.
"""
import socket
import sys
import threading


def read_head(conn, pending):
    while b"\r\n\r\n" not in pending:
        data = conn.recv(65536)
        if not data:
            return None, pending
        pending += data
    head, rest = pending.split(b"\r\n\r\n", 1)
    return head.decode("latin-1"), rest


def serve(conn):
    pending = b""
    try:
        while True:
            head, pending = read_head(conn, pending)
            if head is None:
                return
            lines = head.split("\r\n")
            host = next((l.split(":", 1)[1].strip() for l in lines[1:] if l.lower().startswith("host:")), "")
            echo = "X-Request-Line: %s\r\nX-Host: %s\r\n" % (lines[0], host)
            target = lines[0].split(" ")[1] if len(lines[0].split(" ")) > 1 else ""
            if target.startswith("deny.example:"):
                body = b"proxy authentication required\n"
                conn.sendall(("HTTP/1.1 407 Proxy Authentication Required\r\n%sProxy-Authenticate: Basic realm=\"tests\"\r\n"
                              "Content-Length: %d\r\n\r\n" % (echo, len(body))).encode() + body)
                continue
            conn.sendall(("HTTP/1.1 200 Connection established\r\n%s\r\n" % echo).encode() + b"hello from the tunnel\n")
            if pending:
                conn.sendall(pending)
            while True:
                data = conn.recv(65536)
                if not data:
                    conn.shutdown(socket.SHUT_WR)
                    return
                conn.sendall(data)
    except OSError:
        pass
    finally:
        conn.close()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(16)
print(listener.getsockname()[1], flush=True)


def accept_loop():
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


threading.Thread(target=accept_loop, daemon=True).start()
sys.stdin.read()
