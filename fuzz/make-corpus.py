#!/usr/bin/env python3
"""Writes the seed corpora in fuzz/Corpus/<target>/: four option bytes (see FuzzSupport/FuzzCase.swift) + payload.

Byte 0 flags: 1 lenient, 2 accept upgrades, 4 response TE+CL allowed, 8 tight limits, 16 alternate kind,
32 serializer-first round trip, 64 chunked (serializer-first). Byte 1: methods of four pipelined requests, two bits each (0 GET, 1 HEAD, 2 CONNECT, 3 POST).
Bytes 2-3 seed the split points. Run again after editing; file names are stable.
"""
import os

HERE = os.path.dirname(os.path.abspath(__file__))

BROWSER_GET = (
    "GET /search?q=http%2F1.1+parser&lang=en HTTP/1.1\r\n"
    "Host: www.example.com\r\n"
    "User-Agent: Mozilla/5.0 (X11; Linux x86_64; rv:128.0) Gecko/20100101 Firefox/128.0\r\n"
    "Accept: text/html,application/xhtml+xml,application/xml;q=0.9,*/*;q=0.8\r\n"
    "Accept-Language: en-US,en;q=0.5\r\n"
    "Accept-Encoding: gzip, deflate, br\r\n"
    "Connection: keep-alive\r\n"
    "Cookie: session=abc123; theme=dark\r\n"
    "Upgrade-Insecure-Requests: 1\r\n"
    "\r\n"
)

REQUESTS = {
    "get": "GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "browser": BROWSER_GET,
    "post-cl": "POST /form HTTP/1.1\r\nHost: a\r\nContent-Length: 5\r\n\r\nhello",
    "post-chunked": "POST /u HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5;x=\"y\"\r\nhello\r\n0\r\nT: 1\r\n\r\n",
    "pipelined": "GET /1 HTTP/1.1\r\nHost: a\r\n\r\nGET /2 HTTP/1.1\r\nHost: a\r\n\r\nPUT /3 HTTP/1.1\r\nHost: a\r\nContent-Length: 2\r\n\r\nok",
    "http10": "GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    "options-star": "OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    "connect": "CONNECT example.com:443 HTTP/1.1\r\nHost: example.com:443\r\n\r\n\x16\x03\x01",
    "upgrade": "GET /ws HTTP/1.1\r\nHost: a\r\nConnection: Upgrade\r\nUpgrade: websocket\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "absolute": "GET http://example.com/x?y HTTP/1.1\r\nHost: example.com\r\n\r\n",
    "te-cl": "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nContent-Length: 3\r\n\r\n0\r\n\r\n",
    "dup-cl": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3\r\nContent-Length: 3\r\n\r\nabc",
    "cl-list": "POST / HTTP/1.1\r\nHost: a\r\nContent-Length: 3, 3\r\n\r\nabc",
    "te-list": "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: gzip, chunked\r\n\r\n1\r\nz\r\n0\r\n\r\n",
    "te-twice": "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n0\r\n\r\n",
    "obs-fold": "GET / HTTP/1.1\r\nHost: a\r\nX-Folded: one\r\n two\r\n\r\n",
    "bare-lf": "GET / HTTP/1.1\nHost: a\nX: y\n\n",
    "leading-crlf": "\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "obs-text": "GET / HTTP/1.1\r\nHost: a\r\nX-Latin: caf\xe9\r\n\r\n",
    "space-colon": "GET / HTTP/1.1\r\nHost : a\r\n\r\n",
    "no-host": "GET / HTTP/1.1\r\n\r\n",
    "bad-version": "GET / HTTP/1.2\r\nHost: a\r\n\r\n",
    "chunk-ext": "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n3 ; a = b ; c=\"d\\\"e\"\r\nabc\r\n0\r\n\r\n",
    "trailers": "POST / HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n2\r\nhi\r\n0\r\nExpires: never\r\nX-Sum: 12\r\n\r\n",
    "empty-value": "GET / HTTP/1.1\r\nHost: a\r\nX-Empty:\r\nX-Tab:\tv\t\r\n\r\n",
    "ipv6-host": "GET / HTTP/1.1\r\nHost: [::1]:8080\r\n\r\n",
}

RESPONSES = {
    "ok-cl": "HTTP/1.1 200 OK\r\nContent-Length: 5\r\nContent-Type: text/plain\r\n\r\nhello",
    "chunked": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n4\r\nWiki\r\n5\r\npedia\r\n0\r\n\r\n",
    "chunked-trailers": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nTrailer: X-Sum\r\n\r\n1\r\na\r\n0\r\nX-Sum: 1\r\n\r\n",
    "close-delimited": "HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\n\r\nuntil the end",
    "http10": "HTTP/1.0 200 OK\r\n\r\nbody",
    "no-content": "HTTP/1.1 204 No Content\r\nContent-Length: 10\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "not-modified": "HTTP/1.1 304 Not Modified\r\nETag: \"x\"\r\n\r\n",
    "continue": "HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok",
    "early-hints": "HTTP/1.1 103 Early Hints\r\nLink: </s.css>; rel=preload\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "switching": "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\r\n\x81\x05hello",
    "pipelined": "HTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\naHTTP/1.1 404 Not Found\r\nContent-Length: 2\r\n\r\nnoHTTP/1.1 200 OK\r\nContent-Length: 0\r\n\r\n",
    "te-cl": "HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n0\r\n\r\n",
    "te-gzip": "HTTP/1.1 200 OK\r\nTransfer-Encoding: gzip\r\n\r\n\x1f\x8b\x08",
    "empty-reason": "HTTP/1.1 200 \r\nContent-Length: 0\r\n\r\n",
    "no-reason-space": "HTTP/1.1 200\r\nContent-Length: 0\r\n\r\n",
    "latin1-reason": "HTTP/1.1 200 Tr\xe8s bien\r\nContent-Length: 0\r\n\r\n",
    "many-fields": "HTTP/1.1 200 OK\r\n" + "".join(f"X-Field-{i}: value {i}\r\n" for i in range(20)) + "Content-Length: 0\r\n\r\n",
    "bare-lf": "HTTP/1.1 200 OK\nContent-Length: 1\n\nz",
    "obs-fold": "HTTP/1.1 200 OK\r\nX: a\r\n\tb\r\nContent-Length: 0\r\n\r\n",
    "dup-cl": "HTTP/1.1 200 OK\r\nContent-Length: 2\r\nContent-Length: 2\r\n\r\nok",
    "bad-status": "HTTP/1.1 2000 OK\r\n\r\n",
    "connect-ok": "HTTP/1.1 200 Connection Established\r\n\r\n\x16\x03\x03",
}

CHUNKED = {
    "simple": "5\r\nhello\r\n0\r\n\r\n",
    "multi": "1\r\na\r\n2\r\nbc\r\n10\r\n0123456789abcdef\r\n0\r\n\r\n",
    "ext": "3;name=value\r\nabc\r\n0;last\r\n\r\n",
    "ext-quoted": "3;n=\"q \\\" s\"\r\nabc\r\n0\r\n\r\n",
    "ext-bws": "3 ; n = v\r\nabc\r\n0\r\n\r\n",
    "trailers": "1\r\nz\r\n0\r\nA: 1\r\nB: 2\r\n\r\n",
    "upper-hex": "A\r\n0123456789\r\n0\r\n\r\n",
    "leading-zeros": "0005\r\nhello\r\n000\r\n\r\n",
    "then-next": "1\r\nz\r\n0\r\n\r\nGET / HTTP/1.1\r\nHost: a\r\n\r\n",
    "bad-size": "g\r\n\r\n",
    "bare-lf": "1\nz\n0\n\n",
    "missing-crlf": "3\r\nabcd\r\n0\r\n\r\n",
    "overflow": "ffffffffffffffffff\r\n",
    "negative": "-1\r\nz\r\n",
    "space-size": " 1\r\nz\r\n0\r\n\r\n",
    "ext-no-name": "1;\r\nz\r\n0\r\n\r\n",
    "ext-trailing-space": "1;a \r\nz\r\n0\r\n\r\n",
    "binary": "4\r\n\x00\xff\r\n\r\n0\r\n\r\n",
}

# Serializer-first round trips: NUL-separated method/status, target/reason, name/value pairs, body.
STRUCTURED = {
    "req-basic": "GET\0/\0Host\0a\0Accept\0*/*",
    "req-body": "POST\0/upload\0Host\0a\0X\0 padded \0body bytes",
    "req-latin1": "GET\0/\0Host\0a\0X\0caf\xe9",
    "resp-basic": "\0OK\0Server\0wire\0hello",
    "resp-empty-reason": "\0\0X\0y\0",
}


def write(target, name, options, payload):
    folder = os.path.join(HERE, "Corpus", target)
    os.makedirs(folder, exist_ok=True)
    data = bytes(options) + payload.encode("latin-1")
    with open(os.path.join(folder, name), "wb") as f:
        f.write(data)


for name, text in REQUESTS.items():
    write("FuzzHTTP1Request", name, [0, 0, 0x12, 0x34], text)
    write("FuzzHTTP1Request", name + "-lenient", [1 | 2, 0, 0x56, 0x78], text)
    write("FuzzRoundTrip", "req-" + name, [1 if name in ("obs-fold", "bare-lf", "dup-cl", "cl-list") else 0, 0, 7, 9], text)
for name, text in RESPONSES.items():
    write("FuzzHTTP1Response", name, [0, 0, 0x21, 0x43], text)
    write("FuzzHTTP1Response", name + "-lenient", [1 | 4, 0, 0x65, 0x87], text)
    write("FuzzRoundTrip", "resp-" + name, [16 | (1 if name in ("obs-fold", "bare-lf", "dup-cl") else 0), 0, 3, 5], text)
write("FuzzHTTP1Response", "head-response", [0, 1, 1, 2], "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\n")
write("FuzzHTTP1Response", "head-then-get", [0, 1 | (0 << 2), 9, 9], "HTTP/1.1 200 OK\r\nContent-Length: 5\r\n\r\nHTTP/1.1 200 OK\r\nContent-Length: 1\r\n\r\nx")
write("FuzzHTTP1Response", "connect-200", [0, 2, 4, 4], RESPONSES["connect-ok"])
write("FuzzHTTP1Response", "tight", [8, 0, 1, 1], RESPONSES["many-fields"])
write("FuzzHTTP1Request", "tight", [8, 0, 1, 1], BROWSER_GET)
for name, text in CHUNKED.items():
    write("FuzzChunked", name, [0, 0, 0, 7], text)
    write("FuzzChunked", name + "-response", [16, 0, 0, 3], text)
write("FuzzChunked", "tight-ext", [8, 0, 0, 1], "1;abcdefgh\r\nz\r\n0\r\n\r\n")
write("FuzzChunked", "tight-body", [8, 0, 0, 1], "20\r\n" + "x" * 32 + "\r\n1\r\ny\r\n0\r\n\r\n")
for name, text in STRUCTURED.items():
    write("FuzzRoundTrip", name, [32 | (16 if name.startswith("resp") else 0), 0, 0, 0], text)
    write("FuzzRoundTrip", name + "-chunked", [32 | 64 | (16 if name.startswith("resp") else 0), 0, 0, 0], text)

# FuzzProxyRules: host NUL no_proxy-list NUL proxy-URL (no option bytes).
PROXY_RULES = {
    "subdomain": ("www.example.com", "localhost, .example.com", "http://user:p%40ss@proxy.internal:3128"),
    "star": ("example.com", "*", "socks5h://proxy"),
    "cidr": ("10.1.2.3", "192.168.0.0/16,10.0.0.0/8", "10.0.0.1:8080"),
    "ipv6": ("[2001:db8::1]", "::1 2001:db8::/32\t[::1]", "https://[::1]:8443/"),
    "trailing-dots": ("example.com.", ".example.com.,,", "socks4a://0x7f.1"),
    "ports": ("example.com", "example.com:80,10.1.2.3:443", "[fe80::1%25eth0]:1080"),
    "guessed-scheme": ("127.1", "127.0.0.1", "ftp.example.com:21"),
}
for name, (host, rules, proxy) in PROXY_RULES.items():
    write("FuzzProxyRules", name, [], host + "\0" + rules + "\0" + proxy)

# FuzzSOCKS: byte 0 handshake (0 SOCKS4, 1 SOCKS4a, 2 SOCKS5 name, 3 SOCKS5 IPv6; +4 credentials), byte 1 read size.
SUCCESS_V4 = "\x05\x00\x00\x01\x0a\x00\x00\x01\x1f\x90"
SOCKS = {
    "socks4-granted": (0, 3, "\x00\x5a\x01\xbb\xc0\x00\x02\x01tunnel"),
    "socks4a-rejected": (1, 1, "\x00\x5b\x00\x00\x00\x00\x00\x00"),
    "socks5-no-auth": (2, 4, "\x05\x00" + SUCCESS_V4),
    "socks5-auth": (2 | 4, 2, "\x05\x02\x01\x00" + SUCCESS_V4 + "GET"),
    "socks5-auth-refused": (3 | 4, 5, "\x05\x02\x01\x01"),
    "socks5-bound-name": (3, 7, "\x05\x00\x05\x00\x00\x03\x04host\x00\x50"),
    "socks5-bound-ipv6": (2, 16, "\x05\x00\x05\x00\x00\x04" + "\x00" * 15 + "\x01\x01\xbb"),
    "socks5-refused": (2, 1, "\x05\x00\x05\x05\x00\x01\x00\x00\x00\x00\x00\x00"),
    "socks5-no-method": (2 | 4, 1, "\x05\xff"),
}
for name, (handshake, piece, replies) in SOCKS.items():
    write("FuzzSOCKS", name, [handshake, piece], replies)
