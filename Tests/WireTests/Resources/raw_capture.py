#!/usr/bin/env python3
"""A capture peer for `wire request --raw`: records every byte each connection sends and where each read ended.

Usage: raw_capture.py [--unix PATH] [--tls CERT KEY] [--reply HEX] [--then fin|rst|hold]

Listens on 127.0.0.1 port 0 (or the Unix socket PATH), with TLS when asked, and prints the port (or "unix") on its
first line. Each connection: after the first read it sends the reply bytes (hex), and then ends as --then says
(fin: shutdown and close; rst: SO_LINGER 0 and close; hold: keep reading, send nothing more). When the client's
bytes end (its FIN, or a reset), it prints one JSON line {"reads": [HEX, ...], "end": "fin"|"rst"}. Exits when
stdin closes.
"""
import json
import os
import socket
import ssl
import struct
import sys
import threading


def serve(connection, reply, then):
    reads = []
    end = "fin"
    replied = False
    try:
        while True:
            try:
                chunk = connection.recv(1 << 20)
            except (ConnectionResetError, ssl.SSLError):
                end = "rst"
                break
            if not chunk:
                break
            reads.append(chunk.hex())
            if not replied:
                replied = True
                if reply:
                    connection.sendall(reply)
                if then == "fin":
                    # The client sees the end after the reply; what it still sends is read on.
                    try:
                        if isinstance(connection, ssl.SSLSocket):
                            connection = connection.unwrap()
                        connection.shutdown(socket.SHUT_WR)
                    except OSError:
                        pass
                elif then == "rst":
                    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                    connection.close()
                    end = "reset-by-us"
                    break
    finally:
        # Closed before the line is printed: a long line fills the pipe until the test reads it, which it does
        # only once the client has seen this end.
        try:
            connection.close()
        except OSError:
            pass
        print(json.dumps({"reads": reads, "end": end}), flush=True)


def main():
    arguments = sys.argv[1:]
    unix = None
    tls = None
    reply = b""
    then = "hold"
    while arguments:
        word = arguments.pop(0)
        if word == "--unix":
            unix = arguments.pop(0)
        elif word == "--tls":
            tls = (arguments.pop(0), arguments.pop(0))
        elif word == "--reply":
            reply = bytes.fromhex(arguments.pop(0))
        elif word == "--then":
            then = arguments.pop(0)
    if unix:
        listener = socket.socket(socket.AF_UNIX)
        listener.bind(unix)
        print("unix", flush=True)
    else:
        listener = socket.socket()
        listener.bind(("127.0.0.1", 0))
        print(listener.getsockname()[1], flush=True)
    listener.listen(16)
    context = None
    if tls:
        context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
        context.load_cert_chain(*tls)

    def accept():
        while True:
            connection, _ = listener.accept()
            if context:
                try:
                    connection = context.wrap_socket(connection, server_side=True)
                except (ssl.SSLError, OSError) as error:
                    # Still one record per connection, so a test waiting for it learns what happened instead of
                    # waiting for ever (a client that closes as its handshake ends can cut the server's side short).
                    connection.close()
                    print(json.dumps({"reads": [], "end": "handshake failed: %s" % error}), flush=True)
                    continue
            threading.Thread(target=serve, args=(connection, reply, then), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()
    if unix:
        os.unlink(unix)


main()
