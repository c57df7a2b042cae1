#!/usr/bin/env python3
"""A small HTTP/1.1 peer for Wire's client tests, on Python's http.server.

Prints its port on the first line, then serves until stdin closes (so a test that dies never
leaves it running). Paths:
  /bytes/N          N bytes of a repeating pattern (Content-Length)
  /chunked/N        N bytes, chunked
  /echo             200 with the request body; headers X-Method, X-Body-Length
  /status/N         an empty response with status N
  /redirect/N/CODE  CODE redirect to /redirect/N-1/CODE, and at 0 to /echo
  /close            200, Connection: close
  /headers          200 with the request's header fields, one 'name: value' per line
  /inspect...       200 with the method, the request target, the Content-Type, Accept, Authorization and
                    Content-Length fields, and the body, one per line
"""
import http.server
import socketserver
import sys
import threading


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def body(self):
        if self.headers.get("Transfer-Encoding", "").lower() == "chunked":
            data = b""
            while True:
                size = int(self.rfile.readline().split(b";")[0], 16)
                if size == 0:
                    while self.rfile.readline() not in (b"\r\n", b"\n", b""):
                        pass
                    return data
                data += self.rfile.read(size)
                self.rfile.readline()
        length = int(self.headers.get("Content-Length", "0"))
        return self.rfile.read(length) if length else b""

    def send(self, status, payload=b"", headers=()):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        self.send_header("Content-Length", str(len(payload)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(payload)

    def handle_any(self):
        parts = self.path.split("?")[0].strip("/").split("/")
        received = self.body()
        if parts[0] == "bytes":
            n = int(parts[1])
            self.send(200, bytes(i % 251 for i in range(n)))
        elif parts[0] == "chunked":
            n = int(parts[1])
            payload = bytes(i % 251 for i in range(n))
            self.send_response(200)
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            for start in range(0, n, 16384):
                piece = payload[start:start + 16384]
                self.wfile.write(b"%x\r\n%s\r\n" % (len(piece), piece))
            self.wfile.write(b"0\r\n\r\n")
        elif parts[0] == "echo":
            self.send(200, received, [("X-Method", self.command), ("X-Body-Length", str(len(received)))])
        elif parts[0] == "status":
            self.send(int(parts[1]))
        elif parts[0] == "redirect":
            n, code = int(parts[1]), int(parts[2])
            target = "/echo" if n <= 0 else "/redirect/%d/%d" % (n - 1, code)
            self.send(code, b"moved", [("Location", target)])
        elif parts[0] == "close":
            self.send(200, b"bye", [("Connection", "close")])
            self.close_connection = True
        elif parts[0] == "obstext":
            # send_header encodes Latin-1, so each code point below 256 goes out as that one byte: 0x80, the UTF-8
            # of "é" (0xC3 0xA9) and 0xFF, as obs-text in a field value (RFC 9110 §5.5).
            self.send(200, b"ok", [("X-Obs", "a\x80b\xc3\xa9c\xff")])
        elif parts[0] == "inspect":
            fields = ["%s: %s" % (name, self.headers.get(name, "-"))
                      for name in ("Content-Type", "Accept", "Authorization", "Content-Length")]
            text = "\n".join([self.command + " " + self.path] + fields) + "\n"
            self.send(200, text.encode() + received)
        elif parts[0] == "headers":
            text = "".join("%s: %s\n" % (k, v) for k, v in self.headers.items())
            self.send(200, text.encode())
        else:
            self.send(404, b"not found")

    do_GET = do_HEAD = do_POST = do_PUT = do_DELETE = do_PATCH = handle_any


class Server(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    allow_reuse_address = True


server = Server(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
