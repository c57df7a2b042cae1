#!/usr/bin/env python3
"""A loopback HTTP/1.1 server that checks HTTP Digest authentication (RFC 7616) with Python's standard library.

Usage: digest_peer.py [USER PASSWORD]   (alice and s3cret by default)
Prints its port on the first line, then serves until killed. The first path segment chooses the challenge:
  /digest/ALG/...  one Digest challenge, algorithm ALG (MD5, MD5-sess, SHA-256, SHA-256-sess, SHA-512-256), qop auth
  /both/...        three challenges in three fields: Basic, Digest MD5, Digest SHA-256
  /basic/...       Basic only
  /noqop/...       Digest MD5 without qop (RFC 2069's form)
  /stale/...       Digest SHA-256; the first correct answer gets 401 stale=true with a new nonce, the next passes
A request whose Authorization answers the challenge correctly (the response hash recomputed here from the password,
the method, the uri parameter, which must be the request target, and the nonce this server issued) gets 200 and a
body "ok SCHEME ALGORITHM nc=NC uri=URI"; any other gets 401 with the challenge and "denied: REASON".
"""
import hashlib
import os
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

USER, PASSWORD = (sys.argv[1], sys.argv[2]) if len(sys.argv) > 2 else ("alice", "s3cret")
REALM = "wire-tests@127.0.0.1"
issued = set()
stale_used = set()
lock = threading.Lock()


def hash_function(algorithm):
    base = algorithm.upper().removesuffix("-SESS")
    name = {"MD5": "md5", "SHA-256": "sha256", "SHA-512-256": "sha512_256"}[base]
    return lambda text: hashlib.new(name, text.encode()).hexdigest()


def new_nonce():
    nonce = os.urandom(16).hex()
    with lock:
        issued.add(nonce)
    return nonce


def digest_challenge(algorithm, qop=True, stale=False):
    parts = ['realm="%s"' % REALM, 'nonce="%s"' % new_nonce(), 'opaque="opaque-%s"' % algorithm, "algorithm=%s" % algorithm]
    if qop:
        parts.append('qop="auth"')
    if stale:
        parts.append("stale=true")
    return "Digest " + ", ".join(parts)


def parse_params(text):
    """auth-params: name=token or name="quoted", comma-separated."""
    params, i = {}, 0
    while i < len(text):
        while i < len(text) and text[i] in " ,\t":
            i += 1
        start = i
        while i < len(text) and text[i] not in "= ":
            i += 1
        name = text[start:i].lower()
        while i < len(text) and text[i] in " =":
            i += 1
        if i < len(text) and text[i] == '"':
            i += 1
            value = ""
            while i < len(text) and text[i] != '"':
                if text[i] == "\\":
                    i += 1
                value += text[i]
                i += 1
            i += 1
        else:
            start = i
            while i < len(text) and text[i] != ",":
                i += 1
            value = text[start:i].strip()
        if name:
            params[name] = value
    return params


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *args):
        pass

    def reply(self, status, body, challenges=()):
        data = body.encode()
        self.send_response(status)
        for challenge in challenges:
            self.send_header("WWW-Authenticate", challenge)
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    def check_digest(self, header, algorithm, qop):
        if not header.startswith("Digest "):
            return None, "not digest"
        p = parse_params(header[7:])
        if p.get("username") != USER or p.get("realm") != REALM:
            return None, "user or realm"
        if p.get("uri") != self.path:
            return None, "uri %s is not the target %s" % (p.get("uri"), self.path)
        if p.get("nonce") not in issued:
            return None, "unknown nonce"
        if algorithm is not None and p.get("algorithm", "MD5").upper() != algorithm.upper():
            return None, "algorithm"
        used = p.get("algorithm", "MD5")
        H = hash_function(used)
        a1 = H("%s:%s:%s" % (USER, REALM, PASSWORD))
        if used.upper().endswith("-SESS"):
            a1 = H("%s:%s:%s" % (a1, p["nonce"], p.get("cnonce", "")))
        a2 = H("%s:%s" % (self.command, p["uri"]))
        if qop:
            if p.get("qop") != "auth" or len(p.get("nc", "")) != 8 or not p.get("cnonce"):
                return None, "qop, nc or cnonce"
            expected = H("%s:%s:%s:%s:auth:%s" % (a1, p["nonce"], p["nc"], p["cnonce"], a2))
        else:
            if "qop" in p or "cnonce" in p:
                return None, "qop sent to a server that offered none"
            expected = H("%s:%s:%s" % (a1, p["nonce"], a2))
        if p.get("response") != expected:
            return None, "wrong response"
        if p.get("opaque") != "opaque-%s" % used:
            return None, "opaque"
        return p, None

    def handle_request(self):
        parts = self.path.split("/")
        mode = parts[1] if len(parts) > 1 else ""
        header = self.headers.get("Authorization", "")
        if mode == "basic" or mode == "both":
            import base64
            expected = "Basic " + base64.b64encode(("%s:%s" % (USER, PASSWORD)).encode()).decode()
            if header == expected:
                return self.reply(200, "ok basic")
        if mode == "digest" and len(parts) > 2:
            algorithm, qop, challenges = parts[2], True, lambda: [digest_challenge(parts[2])]
        elif mode == "noqop":
            algorithm, qop, challenges = "MD5", False, lambda: [digest_challenge("MD5", qop=False)]
        elif mode == "stale":
            algorithm, qop, challenges = "SHA-256", True, lambda: [digest_challenge("SHA-256")]
        elif mode == "both":
            algorithm, qop = None, True
            challenges = lambda: ['Basic realm="%s"' % REALM, digest_challenge("MD5"), digest_challenge("SHA-256")]
        elif mode == "basic":
            return self.reply(401, "denied: basic", ['Basic realm="%s"' % REALM])
        else:
            return self.reply(404, "unknown mode")
        if not header:
            return self.reply(401, "denied: no credentials", challenges())
        p, reason = self.check_digest(header, algorithm, qop)
        if p is None:
            return self.reply(401, "denied: " + reason, challenges())
        if mode == "stale":
            with lock:
                first = p["nonce"] not in stale_used and not stale_used
                stale_used.add(p["nonce"])
            if first:
                return self.reply(401, "denied: stale", [digest_challenge("SHA-256", stale=True)])
        self.reply(200, "ok digest %s nc=%s uri=%s" % (p.get("algorithm", "MD5"), p.get("nc", "-"), p["uri"]))

    do_GET = handle_request

    def do_POST(self):
        length = int(self.headers.get("Content-Length", "0"))
        self.rfile.read(length)
        self.handle_request()


server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
print(server.server_address[1], flush=True)
server.serve_forever()
