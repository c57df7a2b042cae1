#!/usr/bin/env python3
"""A raw HTTP/1.1 peer for the curl-compatibility tests of `wire get`: what a client sends arrives here byte for byte.

Prints its port on the first line, then serves on 127.0.0.1 until stdin closes. Every request (head and body as
received) is recorded; GET /_log answers with the records so far as JSON (a list of latin-1 strings) and clears them.
Any other target is answered as its query says:
  status=N           the status (default 200)
  h=Name:value       a response field (repeatable)
  body=TEXT          the body; size=N a pattern of N bytes (i % 251); neither: the request as received (head + body)
  chunked=1          send the body chunked
  drip=N&every=MS    with chunked=1: send the body in N chunks, MS milliseconds apart (default 150), the first after
                     that wait too
  close=1            close the connection after the answer
  lm=HTTP-DATE       send Last-Modified and answer If-Modified-Since / If-Unmodified-Since with 304 / 412
  etag=TAG           send ETag: TAG and answer a matching If-None-Match with 304
  ranges=1           answer a Range of bytes=A-B or bytes=A- with 206 and Content-Range
  expect=417         answer Expect: 100-continue with 417 instead of 100
  expect=none        answer Expect: 100-continue with nothing: the body must come after the client's own wait
  fail=N&key=K       answer the first N requests with key K with 503 and the body "fail I" (I counting from 1)
  peer=1             the body is the client's address and port, "ADDRESS PORT"
  socket=1           the body is `ss -tnoeH` about the client's end of the connection (its keep-alive timer, a
                     bound device as ADDRESS%DEVICE), taken while the client waits for this answer
  pace=1             record how long sending the answer took and how many of its bytes the client's kernel still
                     held unread just after (a client that reads slowly holds the sender back)
GET /_sendtimes answers with [seconds, unread bytes] for each pace=1 answer, as JSON, and clears them.
With --abstract NAME the peer also listens on the abstract Unix socket NAME.
"""
import email.utils
import json
import socket
import subprocess
import sys
import threading
import time
import urllib.parse

LOG = []
LOG_LOCK = threading.Lock()
SEND_TIMES = []
FAILURES = {}


def read_head(stream):
    data = b""
    while b"\r\n\r\n" not in data:
        piece = stream.recv(1)
        if not piece:
            return None
        data += piece
    return data


def read_exact(stream, count):
    data = b""
    while len(data) < count:
        piece = stream.recv(count - len(data))
        if not piece:
            break
        data += piece
    return data


def read_line(stream):
    data = b""
    while not data.endswith(b"\r\n"):
        piece = stream.recv(1)
        if not piece:
            break
        data += piece
    return data


def read_body(stream, fields):
    if fields.get("transfer-encoding", "").lower() == "chunked":
        body = b""
        raw = b""
        while True:
            line = read_line(stream)
            raw += line
            size = int(line.split(b";")[0].strip() or b"0", 16)
            if size == 0:
                while True:
                    trailer = read_line(stream)
                    raw += trailer
                    if trailer in (b"\r\n", b""):
                        return body, raw
            piece = read_exact(stream, size)
            body += piece
            raw += piece + read_line(stream)
    length = int(fields.get("content-length", "0") or "0")
    body = read_exact(stream, length)
    return body, body


def parse_date(text):
    try:
        return email.utils.parsedate_to_datetime(text)
    except (TypeError, ValueError):
        return None


def client_socket_report(stream):
    try:
        address, port = stream.getpeername()[:2]
    except (OSError, TypeError, ValueError):
        return b""
    return subprocess.run(["ss", "-tnoeH", "src", "%s:%d" % (address, port)], capture_output=True).stdout


def answer(stream, method, target, fields, received):
    path, _, query_text = target.partition("?")
    query = urllib.parse.parse_qs(query_text, keep_blank_values=True)
    first = lambda name, default=None: query.get(name, [default])[0]
    if path == "/_log":
        with LOG_LOCK:
            records = list(LOG)
            LOG.clear()
        return 200, [("Content-Type", "application/json")], json.dumps(records).encode(), False, False
    if path == "/_sendtimes":
        with LOG_LOCK:
            times = list(SEND_TIMES)
            SEND_TIMES.clear()
        return 200, [("Content-Type", "application/json")], json.dumps(times).encode(), False, False
    status = int(first("status", "200"))
    headers = []
    if first("fail") is not None:
        key = first("key", "")
        with LOG_LOCK:
            FAILURES[key] = FAILURES.get(key, 0) + 1
            count = FAILURES[key]
        if count <= int(first("fail")):
            return 503, [], b"fail %d\n" % count, False, False
    for field in query.get("h", []):
        name, _, value = field.partition(":")
        headers.append((name, value.strip()))
    if first("peer") is not None:
        peer = stream.getpeername()
        payload = ("%s %d" % (peer[0], peer[1])).encode() if isinstance(peer, tuple) else b"unix"
    elif first("socket") is not None:
        payload = client_socket_report(stream)
    elif first("body") is not None:
        payload = first("body").encode()
    elif first("size") is not None:
        payload = bytes(i % 251 for i in range(int(first("size"))))
    else:
        payload = received
    lm = first("lm")
    if lm:
        headers.append(("Last-Modified", lm))
        modified = parse_date(lm)
        since = parse_date(fields.get("if-modified-since", ""))
        unmodified = parse_date(fields.get("if-unmodified-since", ""))
        if since and modified and modified <= since:
            status, payload = 304, b""
        elif unmodified and modified and modified > unmodified:
            status, payload = 412, b""
    etag = first("etag")
    if etag:
        headers.append(("ETag", etag))
        if etag in [t.strip() for t in fields.get("if-none-match", "").split(",")]:
            status, payload = 304, b""
    if first("ranges") and status == 200 and fields.get("range", "").startswith("bytes="):
        start_text, _, end_text = fields["range"][len("bytes="):].partition("-")
        start = int(start_text)
        end = int(end_text) if end_text else len(payload) - 1
        if start >= len(payload):
            status, headers, payload = 416, headers + [("Content-Range", "bytes */%d" % len(payload))], b""
        else:
            end = min(end, len(payload) - 1)
            headers.append(("Content-Range", "bytes %d-%d/%d" % (start, end, len(payload))))
            status, payload = 206, payload[start:end + 1]
    if first("ranges"):
        headers.append(("Accept-Ranges", "bytes"))
    return status, headers, payload, first("chunked") == "1", first("close") == "1"


REASONS = {200: "OK", 206: "Partial Content", 301: "Moved Permanently", 302: "Found", 303: "See Other",
           304: "Not Modified", 307: "Temporary Redirect", 308: "Permanent Redirect", 401: "Unauthorized",
           404: "Not Found", 412: "Precondition Failed", 416: "Range Not Satisfiable", 417: "Expectation Failed",
           500: "Internal Server Error", 503: "Service Unavailable"}


def serve(stream):
    with stream:
        while True:
            head = read_head(stream)
            if head is None:
                return
            lines = head.decode("latin-1").split("\r\n")
            method, target = lines[0].split(" ")[0], lines[0].split(" ")[1]
            fields = {}
            for line in lines[1:]:
                if ":" in line:
                    name, _, value = line.partition(":")
                    fields[name.strip().lower()] = value.strip()
            if fields.get("expect", "").lower() == "100-continue":
                if "expect=none" in target:
                    pass
                elif "expect=417" in target:
                    stream.sendall(b"HTTP/1.1 417 Expectation Failed\r\nContent-Length: 0\r\n\r\n")
                    with LOG_LOCK:
                        LOG.append(head.decode("latin-1"))
                    continue
                else:
                    stream.sendall(b"HTTP/1.1 100 Continue\r\n\r\n")
            body, raw_body = read_body(stream, fields)
            received = head + raw_body
            if not target.startswith("/_log"):
                with LOG_LOCK:
                    LOG.append(received.decode("latin-1"))
            status, headers, payload, chunked, close = answer(stream, method, target, fields, received)
            out = ("HTTP/1.1 %d %s\r\n" % (status, REASONS.get(status, "Status"))).encode()
            for name, value in headers:
                out += ("%s: %s\r\n" % (name, value)).encode("latin-1")
            no_body = method == "HEAD" or status == 304 or status < 200
            if chunked:
                out += b"Transfer-Encoding: chunked\r\n"
            else:
                out += b"Content-Length: %d\r\n" % len(payload)
            if close:
                out += b"Connection: close\r\n"
            out += b"\r\n"
            if not no_body:
                if chunked:
                    out += b"%x\r\n%s\r\n0\r\n\r\n" % (len(payload), payload) if payload else b"0\r\n\r\n"
                else:
                    out += payload
            drip = urllib.parse.parse_qs(target.partition("?")[2]).get("drip")
            if chunked and drip and not no_body and payload:
                pieces = int(drip[0])
                every = int(urllib.parse.parse_qs(target.partition("?")[2]).get("every", ["150"])[0]) / 1000
                stream.sendall(out[:out.index(b"\r\n\r\n") + 4])
                step = max(1, -(-len(payload) // pieces))
                for start in range(0, len(payload), step):
                    time.sleep(every)
                    piece = payload[start:start + step]
                    stream.sendall(b"%x\r\n%s\r\n" % (len(piece), piece))
                stream.sendall(b"0\r\n\r\n")
                if close:
                    return
                continue
            started = time.monotonic()
            stream.sendall(out)
            if "pace=1" in target:
                took = time.monotonic() - started
                report = client_socket_report(stream).split()
                unread = int(report[1]) if len(report) > 1 and report[1].isdigit() else 0
                with LOG_LOCK:
                    SEND_TIMES.append([took, unread])
            if close:
                return


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    # A small send buffer, so a client that reads slowly holds the sender back soon (pace=1).
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_SNDBUF, 64 * 1024)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    listeners = [listener]
    if len(sys.argv) == 3 and sys.argv[1] == "--abstract":
        local = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        local.bind("\0" + sys.argv[2])
        local.listen(64)
        listeners.append(local)
    print(listener.getsockname()[1], flush=True)

    def accept(server):
        while True:
            connection, _ = server.accept()
            threading.Thread(target=serve_safely, args=(connection,), daemon=True).start()

    for server in listeners:
        threading.Thread(target=accept, args=(server,), daemon=True).start()
    sys.stdin.read()


def serve_safely(connection):
    try:
        serve(connection)
    except (OSError, ValueError, IndexError):
        connection.close()


main()
