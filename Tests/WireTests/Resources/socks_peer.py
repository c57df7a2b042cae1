#!/usr/bin/env python3
"""A scripted loopback SOCKS 4/4a/5 proxy, for the replies real proxies do not give on demand.

Usage: socks_peer.py RECORD_FILE [USER:PASSWORD]
Prints its port on the first line, then serves until stdin closes. Each request is appended to RECORD_FILE as one
line: "v4 HOST PORT USERID" (HOST a dotted quad, or the name of a 4a request) or "v5 ATYP HOST PORT".
With USER:PASSWORD, SOCKS 5 requires RFC 1929 authentication (method 02) and refuses other credentials (status 01).
A destination port of 50000 or more is refused with the reply code port - 50000 (REP for SOCKS 5, CD for SOCKS 4);
any other destination is connected to and relayed both ways.
"""
import ipaddress
import socket
import sys
import threading

record_path = sys.argv[1]
credentials = sys.argv[2].encode() if len(sys.argv) > 2 else None
record_lock = threading.Lock()


def record(line):
    with record_lock:
        with open(record_path, "a") as f:
            f.write(line + "\n")


def recv_exact(conn, count):
    data = b""
    while len(data) < count:
        chunk = conn.recv(count - len(data))
        if not chunk:
            raise EOFError
        data += chunk
    return data


def recv_until_nul(conn):
    data = b""
    while True:
        byte = recv_exact(conn, 1)
        if byte == b"\0":
            return data
        data += byte


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
        try:
            dst.shutdown(socket.SHUT_WR)
        except OSError:
            pass
    t = threading.Thread(target=pump, args=(b, a), daemon=True)
    t.start()
    pump(a, b)
    t.join()


def serve_v4(conn):
    header = recv_exact(conn, 7)
    port = int.from_bytes(header[1:3], "big")
    ip = header[3:7]
    user = recv_until_nul(conn).decode("latin-1")
    if ip[:3] == b"\0\0\0" and ip[3] != 0:
        host = recv_until_nul(conn).decode("latin-1")
    else:
        host = socket.inet_ntoa(ip)
    record("v4 %s %d %s" % (host, port, user))
    if port >= 50000:
        conn.sendall(bytes([0, port - 50000, 0, 0, 0, 0, 0, 0]))
        return
    upstream = socket.create_connection((host, port))
    conn.sendall(bytes([0, 90]) + header[1:3] + ip)
    relay(conn, upstream)


def serve_v5(conn):
    count = recv_exact(conn, 1)[0]
    methods = recv_exact(conn, count)
    if credentials is not None:
        if 2 not in methods:
            conn.sendall(b"\x05\xff")
            return
        conn.sendall(b"\x05\x02")
        recv_exact(conn, 1)
        user = recv_exact(conn, recv_exact(conn, 1)[0])
        password = recv_exact(conn, recv_exact(conn, 1)[0])
        if user + b":" + password != credentials:
            conn.sendall(b"\x01\x01")
            return
        conn.sendall(b"\x01\x00")
    else:
        conn.sendall(b"\x05\x00")
    version, command, _, atyp = recv_exact(conn, 4)
    if atyp == 1:
        host = socket.inet_ntoa(recv_exact(conn, 4))
    elif atyp == 4:
        host = str(ipaddress.IPv6Address(recv_exact(conn, 16)))
    else:
        host = recv_exact(conn, recv_exact(conn, 1)[0]).decode("latin-1")
    port = int.from_bytes(recv_exact(conn, 2), "big")
    record("v5 %d %s %d" % (atyp, host, port))
    if port >= 50000:
        conn.sendall(bytes([5, port - 50000, 0, 1, 0, 0, 0, 0, 0, 0]))
        return
    upstream = socket.create_connection((host, port))
    bound = upstream.getsockname()
    conn.sendall(bytes([5, 0, 0, 1]) + socket.inet_aton(bound[0]) + bound[1].to_bytes(2, "big"))
    relay(conn, upstream)


def serve(conn):
    try:
        version = recv_exact(conn, 1)[0]
        if version == 4:
            serve_v4(conn)
        elif version == 5:
            serve_v5(conn)
    except (OSError, EOFError):
        pass
    finally:
        conn.close()


listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(64)
print(listener.getsockname()[1], flush=True)


def accept_loop():
    while True:
        conn, _ = listener.accept()
        threading.Thread(target=serve, args=(conn,), daemon=True).start()


threading.Thread(target=accept_loop, daemon=True).start()
sys.stdin.read()
