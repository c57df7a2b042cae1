# A cookie peer for the cookie tests of WireClient and `wire get -b/-c`: Python's http.server on 127.0.0.1, port 0
# (printed as the first line). Every answer's body is "cookie:" followed by the Cookie fields the request carried
# (several joined by " | "), so a test sees exactly what a client sent.
#   /set-all    sets cookies with every attribute (some of which a client must refuse)
#   /redirect   302 to /landing, setting hop=1 on the way
#   /delete     deletes plain1 (Max-Age=0)
#   anything else only echoes
from http.server import ThreadingHTTPServer, BaseHTTPRequestHandler

SET_ALL = [
    "plain1=1",
    "deep06=2; Path=/app",
    "ipdom3=3; Domain=127.0.0.1",
    "secur4=4; Secure",                                          # kept: http to a loopback host is a secure context
    "htonl5=5; HttpOnly; SameSite=Lax",
    "expir6=6; Expires=Thu, 01 Jan 1970 00:00:00 GMT",           # refused: already expired
    "maxag7=7; Max-Age=3600; Expires=Thu, 01 Jan 1970 00:00:00 GMT",  # Max-Age wins: kept
    "futur8=8; Expires=Wed, 09 Jun 2100 10:18:14 GMT",
    "other9=9; Domain=example.com",                              # refused: not this host
    "tldom0=0; Domain=com",                                      # refused: a top-level domain
]

class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def do_GET(self):
        status, cookies, location = 200, [], None
        if self.path.startswith("/set-all"):
            cookies = SET_ALL
        elif self.path.startswith("/redirect"):
            status, cookies, location = 302, ["hop=1; Path=/"], "/landing"
        elif self.path.startswith("/delete"):
            cookies = ["plain1=; Max-Age=0"]
        body = ("cookie:" + " | ".join(self.headers.get_all("Cookie") or [])).encode()
        self.send_response(status)
        for cookie in cookies:
            self.send_header("Set-Cookie", cookie)
        if location:
            self.send_header("Location", location)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
