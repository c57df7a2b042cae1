#!/usr/bin/env python3
"""An HTTP/1.1 keep-alive peer for the -Z/--parallel tests of `wire get`: it counts what a client does at once.

Prints its port on the first line, then serves on 127.0.0.1 until stdin closes. Every connection accepted is counted,
and every request is "in flight" from its head's arrival until its answer is sent; the peer keeps the highest number
in flight at one time. GET /_stats answers {"connections", "max_in_flight", "targets"} (targets in arrival order) as
JSON and starts the counts afresh. Any other target is answered 200 with the target and a line end as its body,
as its query says:
  hold=N     answer only once N requests with this query's key=K (default none) have arrived, or after wait=S
             seconds (default 2): requests held this way are all in flight together, so a client that runs N - 1
             transfers at a time keeps exactly N - 1 in flight, and one that runs more shows more
  after=S    answer no sooner than S seconds after the request arrived (after any hold)
  status=N   the status
  size=N     a body of N bytes instead: "x", or with fill=1 the last character of the path, repeated
"""
import json
import socket
import sys
import threading
import time
import urllib.parse

STATE = threading.Condition()
STATS = {"connections": 0, "in_flight": 0, "max_in_flight": 0, "targets": []}
ARRIVALS = {}


def read_head(stream, buffered):
    while b"\r\n\r\n" not in buffered:
        piece = stream.recv(4096)
        if not piece:
            return None, b""
        buffered += piece
    head, _, rest = buffered.partition(b"\r\n\r\n")
    return head, rest


def serve(stream):
    buffered = b""
    first = True
    with stream:
        while True:
            head, buffered = read_head(stream, buffered)
            if head is None:
                return
            target = head.split(b"\r\n")[0].split(b" ")[1].decode("latin-1")
            path, _, query_text = target.partition("?")
            query = urllib.parse.parse_qs(query_text)
            if path == "/_stats":
                with STATE:
                    # The asker's own connection is not the client's under test.
                    counts = dict(STATS, connections=STATS["connections"] - (1 if first else 0))
                    body = json.dumps({key: counts[key] for key in ("connections", "max_in_flight", "targets")})
                    STATS.update(connections=0, max_in_flight=0, targets=[])
                payload = body.encode()
                stream.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: %d\r\n\r\n%s" % (len(payload), payload))
                first = False
                continue
            first = False
            with STATE:
                STATS["targets"].append(target)
                STATS["in_flight"] += 1
                STATS["max_in_flight"] = max(STATS["max_in_flight"], STATS["in_flight"])
                key = query.get("key", [""])[0]
                ARRIVALS[key] = ARRIVALS.get(key, 0) + 1
                STATE.notify_all()
                if "hold" in query:
                    wanted = int(query["hold"][0])
                    deadline = time.monotonic() + float(query.get("wait", ["2"])[0])
                    while ARRIVALS[key] < wanted and time.monotonic() < deadline:
                        STATE.wait(deadline - time.monotonic())
            if "after" in query:
                time.sleep(float(query["after"][0]))
            status = int(query.get("status", ["200"])[0])
            fill = path[-1:].encode() if "fill" in query else b"x"
            payload = fill * int(query["size"][0]) if "size" in query else (target + "\n").encode()
            out = b"HTTP/1.1 %d Status\r\nContent-Length: %d\r\n\r\n%s" % (status, len(payload), payload)
            try:
                stream.sendall(out)
            finally:
                with STATE:
                    STATS["in_flight"] -= 1


def serve_safely(connection):
    try:
        serve(connection)
    except (OSError, ValueError, IndexError):
        connection.close()


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(512)
    print(listener.getsockname()[1], flush=True)

    def accept():
        while True:
            connection, _ = listener.accept()
            with STATE:
                STATS["connections"] += 1
            threading.Thread(target=serve_safely, args=(connection,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


main()
