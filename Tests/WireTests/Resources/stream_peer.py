#!/usr/bin/env python3
"""A peer that shows whether a client streams its standard input (`wire get -T -`, `curl -T -`) as it is written.

Usage: stream_peer.py FIFO FIRST REST. Makes the named pipe FIFO, listens on 127.0.0.1 (port 0) and prints the port.
The client under test reads its standard input from FIFO. The peer writes FIRST into FIFO and keeps it open; it writes
REST and closes FIFO only once FIRST has arrived in the body of the request it accepted (or, for a client that waits
for the end of its input, after 10 s). It answers `Expect: 100-continue` at once, then prints one JSON line: the head
and the body as received (framing included, latin-1), the decoded body, and whether FIRST arrived before REST was
written ("streamed"); then answers 200 and exits.
"""
import json
import os
import socket
import sys
import threading

fifo_path, first, rest = sys.argv[1], sys.argv[2].encode(), sys.argv[3].encode()
os.mkfifo(fifo_path)
listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
listener.bind(("127.0.0.1", 0))
listener.listen(1)
listener.settimeout(20)
print(listener.getsockname()[1], flush=True)

first_arrived = threading.Event()
state = {"streamed": False}


def feed():
    # Opening blocks until the client opens its end for reading.
    with open(fifo_path, "wb", buffering=0) as pipe:
        pipe.write(first)
        state["streamed"] = first_arrived.wait(10)
        pipe.write(rest)


threading.Thread(target=feed, daemon=True).start()
connection, _ = listener.accept()
connection.settimeout(20)
received = b""


def read_until(marker):
    global received
    while marker not in received:
        piece = connection.recv(65536)
        if not piece:
            raise SystemExit("the connection closed early")
        received += piece
    index = received.index(marker) + len(marker)
    data, received = received[:index], received[index:]
    return data


head = read_until(b"\r\n\r\n")
if b"expect: 100-continue" in head.lower():
    connection.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
raw = b""
body = b""
if b"transfer-encoding: chunked" in head.lower():
    while True:
        line = read_until(b"\r\n")
        raw += line
        size = int(line.split(b";")[0].strip(), 16)
        if size == 0:
            raw += read_until(b"\r\n")
            break
        while len(received) < size + 2:
            piece = connection.recv(65536)
            if not piece:
                raise SystemExit("the connection closed mid-chunk")
            received += piece
        body += received[:size]
        raw += received[: size + 2]
        received = received[size + 2 :]
        if body.startswith(first):
            first_arrived.set()
else:
    length = 0
    for field in head.split(b"\r\n")[1:]:
        name, _, value = field.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value.strip())
    while len(received) < length:
        piece = connection.recv(65536)
        if not piece:
            break
        received += piece
    body = raw = received[:length]
    first_arrived.set()
report = {
    "head": head.decode("latin-1"),
    "raw": raw.decode("latin-1"),
    "body": body.decode("latin-1"),
    "streamed": state["streamed"],
}
print(json.dumps(report), flush=True)
connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\nConnection: close\r\n\r\nok")
connection.close()
