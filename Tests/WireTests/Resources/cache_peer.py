# An HTTP/1.1 peer whose answers carry caching headers, for `wire get --cache-dir` tests.
# Prints its port on the first line, then serves until stdin closes or it is terminated.
import http.server
import sys
import threading
import time

BIG = bytes((i * 7 + 3) % 256 for i in range(4 << 20))


class Handler(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def answer(self, status, body, headers):
        self.send_response(status)
        for name, value in headers:
            self.send_header(name, value)
        if status != 304:
            self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        if status != 304:
            self.wfile.write(body)

    def do_GET(self):
        path = self.path
        if path == "/fresh":
            self.answer(200, b"fresh body", [("Cache-Control", "max-age=600")])
        elif path == "/etag":
            if self.headers.get("If-None-Match") == '"v1"':
                self.answer(304, b"", [("ETag", '"v1"'), ("Cache-Control", "max-age=0"), ("X-Revalidated", "yes")])
            else:
                self.answer(200, b"etag body", [("ETag", '"v1"'), ("Cache-Control", "max-age=0")])
        elif path == "/no-store":
            self.answer(200, b"secret", [("Cache-Control", "no-store")])
        elif path.startswith("/big/"):
            # Paced (64 pieces, 5 ms apart, about a third of a second), so that a client killed at a random moment
            # is often still receiving, or writing its cache entry, when it dies.
            self.send_response(200)
            self.send_header("Cache-Control", "max-age=600")
            self.send_header("Content-Length", str(len(BIG)))
            self.end_headers()
            for start in range(0, len(BIG), 65536):
                self.wfile.write(BIG[start:start + 65536])
                self.wfile.flush()
                time.sleep(0.005)
        else:
            self.answer(404, b"no such path", [])


server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
server.daemon_threads = True
print(server.server_address[1], flush=True)
threading.Thread(target=server.serve_forever, daemon=True).start()
sys.stdin.read()
