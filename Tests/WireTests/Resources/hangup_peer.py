#!/usr/bin/env python3
"""A peer that answers one request with a body and then hangs up completely (a reset), once the client's kernel
has acknowledged every byte: the client still holds the whole body, unread, when the reset comes.

Prints its port on the first line; reads the body size (decimal) from the request path (/N); prints "hung up"
once the socket is reset. Exits when stdin closes.
"""
import fcntl
import socket
import struct
import sys
import termios
import threading
import time


def serve(listener):
    connection, _ = listener.accept()
    request = b""
    while b"\r\n\r\n" not in request:
        chunk = connection.recv(4096)
        if not chunk:
            return
        request += chunk
    size = int(request.split(b" ")[1].strip(b"/"))
    body = bytes(i % 251 for i in range(size))
    connection.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n" % size + body)
    # Wait (bounded) until nothing is left unacknowledged in the send queue: every byte is in the client's kernel.
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        unacknowledged = struct.unpack("i", fcntl.ioctl(connection, termios.TIOCOUTQ, b"\0\0\0\0"))[0]
        if unacknowledged == 0:
            break
        time.sleep(0.001)
    connection.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
    connection.close()
    print("hung up", flush=True)


listener = socket.socket()
listener.bind(("127.0.0.1", 0))
listener.listen(1)
print(listener.getsockname()[1], flush=True)
threading.Thread(target=serve, args=(listener,), daemon=True).start()
sys.stdin.read()
