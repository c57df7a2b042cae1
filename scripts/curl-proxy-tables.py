#!/usr/bin/env python3
"""Regenerates the tables of Tests/WireTests/Proxy/CurlProxyTableTests.swift from curl 7.88.1 itself.

Each case is run through `curl -v`; its answer is what curl connected to (a direct connection or a proxy), or the
error it gave for a proxy URL. Nothing leaves loopback: `--connect-to` sends every direct connection to
127.0.0.3:9 and every proxy is a loopback address on port 9, where nothing listens, so each run ends at once.

Usage: python3 scripts/curl-proxy-tables.py > /tmp/tables.swift, then paste the three tables over the test file's
(`routes`, `matches`, `proxyURLs`). Run it with the curl the tables were made with (7.88.1, Debian 12).
"""
import json
import os
import re
import subprocess
import sys


PROXIES = {"http_proxy": "127.0.0.11:9", "HTTP_PROXY": "127.0.0.12:9", "https_proxy": "127.0.0.13:9",
           "HTTPS_PROXY": "127.0.0.14:9", "all_proxy": "127.0.0.15:9", "ALL_PROXY": "127.0.0.16:9"}

def run(url, env, noproxy=None, proxy=None, extra=()):
    args = ["curl", "-sv", "--connect-timeout", "1", "--connect-to", "::127.0.0.3:9", url]
    if noproxy is not None: args += ["--noproxy", noproxy]
    if proxy is not None: args += ["-x", proxy]
    args += list(extra)
    p = subprocess.run(args, env={"PATH": os.environ["PATH"], **env}, capture_output=True, text=True, timeout=10)
    err = p.stderr
    m = re.search(r"Trying (\S+?)\.\.\.", err)
    if "Unsupported proxy scheme" in err: return "scheme"
    if "Unsupported proxy syntax" in err: return "syntax"
    m2 = re.search(r"Could not resolve proxy: (\S+)", err)
    if m2: return "resolve " + m2.group(1)
    if not m: return "other rc=%d %s" % (p.returncode, err.strip().splitlines()[-1:] )
    where = m.group(1)
    return "direct" if where == "127.0.0.3:9" else "proxy " + where


P = PROXIES
route = [
 ("http://example.com/", {}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"]}, None, None),
 ("http://example.com/", {"HTTP_PROXY": P["HTTP_PROXY"]}, None, None),
 ("http://example.com/", {"HTTP_PROXY": P["HTTP_PROXY"], "all_proxy": P["all_proxy"]}, None, None),
 ("http://example.com/", {"http_proxy": "", "all_proxy": P["all_proxy"]}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "all_proxy": P["all_proxy"]}, None, None),
 ("http://example.com/", {"https_proxy": P["https_proxy"]}, None, None),
 ("https://example.com/", {"https_proxy": P["https_proxy"]}, None, None),
 ("https://example.com/", {"HTTPS_PROXY": P["HTTPS_PROXY"]}, None, None),
 ("https://example.com/", {"https_proxy": P["https_proxy"], "HTTPS_PROXY": P["HTTPS_PROXY"]}, None, None),
 ("https://example.com/", {"https_proxy": "", "HTTPS_PROXY": P["HTTPS_PROXY"]}, None, None),
 ("https://example.com/", {"http_proxy": P["http_proxy"]}, None, None),
 ("https://example.com/", {"all_proxy": P["all_proxy"]}, None, None),
 ("https://example.com/", {"ALL_PROXY": P["ALL_PROXY"]}, None, None),
 ("https://example.com/", {"all_proxy": P["all_proxy"], "ALL_PROXY": P["ALL_PROXY"]}, None, None),
 ("https://example.com/", {"all_proxy": "", "ALL_PROXY": P["ALL_PROXY"]}, None, None),
 ("https://example.com/", {"HTTPS_PROXY": P["HTTPS_PROXY"], "all_proxy": P["all_proxy"]}, None, None),
 ("HTTP://example.com/", {"http_proxy": P["http_proxy"]}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "example.com"}, None, None),
 ("http://www.example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "example.com"}, None, None),
 ("http://notexample.com/", {"http_proxy": P["http_proxy"], "no_proxy": "example.com"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "NO_PROXY": "example.com"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "other.com", "NO_PROXY": "example.com"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "", "NO_PROXY": "example.com"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "*"}, None, None),
 ("https://example.com/", {"ALL_PROXY": P["ALL_PROXY"], "NO_PROXY": "*"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": " *"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "*,example.org"}, None, None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "example.com"}, "", None),
 ("http://example.com/", {"http_proxy": P["http_proxy"], "no_proxy": "example.com"}, "other.org", None),
 ("http://example.com/", {"no_proxy": "example.com"}, None, "127.0.0.17:9"),
 ("http://example.com/", {"no_proxy": "other.com"}, None, "127.0.0.17:9"),
 ("http://example.com/", {"http_proxy": P["http_proxy"]}, None, ""),
 ("http://example.com/", {"http_proxy": P["http_proxy"]}, None, "127.0.0.17:9"),
 ("http://example.com/", {}, "*", "127.0.0.17:9"),
 ("http://10.1.2.3/", {"http_proxy": P["http_proxy"], "no_proxy": "10.0.0.0/8"}, None, None),
 ("http://[::1]:8080/", {"http_proxy": P["http_proxy"], "no_proxy": "::1"}, None, None),
 ("http://localhost/", {"http_proxy": P["http_proxy"], "no_proxy": "localhost,127.0.0.1"}, None, None),
 ("http://127.0.0.1/", {"http_proxy": P["http_proxy"], "no_proxy": "localhost,127.0.0.1"}, None, None),
 ("http://example.com/", {"http_proxy": "socks5h://127.0.0.18:9"}, None, None),
]
matcher = [
 ("example.com", "example.com"), ("www.example.com", "example.com"), ("notexample.com", "example.com"),
 ("example.com", ".example.com"), ("www.example.com", ".example.com"), ("a.b.example.com", "example.com"),
 ("example.com", "www.example.com"), ("EXAMPLE.COM", "example.com"), ("example.com", "EXAMPLE.com"),
 ("example.com.", "example.com"), ("example.com", "example.com."), ("example.com", ".example.com."),
 ("example.com.", ".example.com."), ("www.example.com.", "example.com"),
 ("example.com", "other.com, example.com"), ("example.com", "other.com,,  ,example.com"),
 ("example.com", "other.com example.com"), ("example.com", "other.com\texample.com"), ("example.com", " example.com "),
 ("example.com", "\texample.com\t,"), ("example.com", "example.com:80"), ("example.com", "example.co"),
 ("example.com", "xample.com"), ("example.com", "com"), ("example.com", "."), ("example.com", ".com"),
 ("example.com", "*.example.com"), ("www.example.com", "*.example.com"), ("example.com", "example.com,*"),
 ("example.com", "*"), ("example.com", "**"), ("example.com", ",,,,"), ("example.com", "example.com/24"),
 ("a.example.com", "b.example.com"), ("example.com", "ample.com"), ("example.com", "e.com"),
 ("localhost", "localhost"), ("localhost", "LOCALHOST"), ("localhost", "localhost.localdomain"),
 ("10.1.2.3", "10.1.2.3"), ("10.1.2.3", "10.0.0.0/8"), ("10.1.2.3", "10.0.0.0/16"), ("10.1.2.3", "10.1.2.0/24"),
 ("10.1.2.3", "10.1.2.3/32"), ("10.1.2.3", "10.0.0.0/0"), ("10.1.2.3", "0.0.0.0/0"), ("10.1.2.3", "10.1.2.3/33"),
 ("10.1.2.3", "10.1.2.3:80"), ("10.1.2.3", "10.1.2"), ("10.1.2.3", "10"), ("10.1.2.3", "10.1.2.3/"),
 ("10.1.2.3", "10.1.2.0/24x"), ("10.1.2.3", "10.1.2.0/-8"), ("10.1.2.3", ".2.3"), ("10.1.2.3", "1.2.3"),
 ("10.1.2.3", "010.1.2.3"), ("10.1.2.3", "10.1.2.3."), ("10.1.2.3", "10.1.2.0/ 24"), ("10.1.2.3", "10.1.2.0/+24"),
 ("10.255.255.255", "10.0.0.0/8"), ("11.0.0.0", "10.0.0.0/8"), ("10.1.2.3", "10.1.2.2/31"), ("10.1.2.3", "10.1.2.2/32"),
 ("10.1.2.3", "10.1.2.3/1"), ("200.1.2.3", "128.0.0.0/1"), ("100.1.2.3", "128.0.0.0/1"),
 ("127.1", "127.0.0.1"), ("0x7f000001", "127.0.0.1"), ("127.0.0.1", "127.1"), ("0177.0.0.1", "127.0.0.1"),
 ("192.168.1.1", "192.168.0.0/16"), ("192.168.1.1", "foo, bar, 192.168.0.0/24"),
 ("[::1]", "::1"), ("[::1]", "[::1]"), ("[::1]", "::1/128"), ("[::1]", "0:0::1"), ("[0:0::1]", "::1"),
 ("[2001:db8::1]", "2001:db8::1"), ("[2001:DB8::1]", "2001:db8::1"), ("[2001:db8::1]", "2001:db8::/32"),
 ("[2001:db8::1]", "db8::1"), ("[2001:db8::1]", "::1"), ("[::ffff:10.1.2.3]", "10.1.2.3"),
 ("[::ffff:10.1.2.3]", "::ffff:10.1.2.3"), ("[::1]", "::1,localhost"),
 ("xn--nxasmq6b.com", "xn--nxasmq6b.com"), ("under_score.example", "example"),
]
proxies = [
 "127.0.0.2", "127.0.0.2:3128", "http://127.0.0.2", "https://127.0.0.2", "HTTPS://127.0.0.2:8443",
 "socks4://127.0.0.2", "socks4a://127.0.0.2", "socks5://127.0.0.2", "socks5h://127.0.0.2", "socks://127.0.0.2",
 "SOCKS5H://127.0.0.2:9050", "ftp://127.0.0.2", "foo://127.0.0.2", "socks6://127.0.0.2", "ftp.example.com:3128",
 "FTP.example.com", "dict.example", "ldap.example", "imap.example", "smtp.example", "pop3.example",
 "http://127.0.0.2:", "127.0.0.2:", "127.0.0.2:abc", "127.0.0.2:65536", "127.0.0.2:65535", "127.0.0.2:0080",
 "127.0.0.2:99999999999999999999", "127.0.0.2:+80", "127.0.0.2:8 0",
 "http:/127.0.0.2", "http:///127.0.0.2", "http:////127.0.0.2", "http:127.0.0.2", "http://", "socks5h://",
 "user:pw@127.0.0.2:3128", "http://us%40er:p%3Aw@127.0.0.2", "http://@127.0.0.2", "http://user@127.0.0.2",
 "http://:pw@127.0.0.2", "http://user@host@127.0.0.2",
 "127.1", "0x7f.1:3128", "2130706433", "0177.0.0.02", "127.0.0.256", "127.0.0.1.", "[::1]:3128", "http://[::1]",
 "[0:0::1]", "[::1", "[::1]x", "[zz::1]", "[::1]:", "http://[::1]:", "[]", "http://127.0.0.2/path?q#f",
 "http://127.0.0.2?x", "http://127.0.0.2#x", "http://exa mple", "http://a{b", "http://a\tb", "file:///tmp/x",
 "http://127.0.0.2:3128:80", "http://127%2e0.0.2", "http://%31%32%37.0.0.2", "socks5h://127.0.0.2/",
 "https://127.0.0.2:443", "[::ffff:127.0.0.2]:3128",
]


def go(kind, items):
    out = []
    for it in items:
        if kind == "route":
            url, env, nop, px = it
            out.append(run(url, env, nop, px))
        elif kind == "matcher":
            host, lst = it
            out.append(run("http://%s/" % host, {}, lst, "127.0.0.17:9"))
        else:
            out.append(run("http://127.0.0.3:9/", {}, None, it))
    return out


results = {k: go(k, v) for k, v in [("route", route), ("matcher", matcher), ("proxies", proxies)]}
def s(x):
    return json.dumps(x, ensure_ascii=False).replace("\\t", "\\t")
def swift_str(x):
    if x is None: return "nil"
    return '"' + x.replace("\\", "\\\\").replace('"', '\\"').replace("\t", "\\t") + '"'
def env(d):
    if not d: return "[:]"
    return "[" + ", ".join("%s: %s" % (swift_str(k), swift_str(v)) for k, v in d.items()) + "]"
lines = []
lines.append("    /// (URL, environment, --noproxy, -x) → the proxy's address, or nil for direct: each row as curl 7.88.1 took it.")
lines.append("    static let routes: [RouteCase] = [")
for (url, e, nop, px), res in zip(route, results["route"]):
    exp = "nil" if res == "direct" else swift_str(res.split(" ", 1)[1])
    lines.append("        RouteCase(%s, %s, noProxy: %s, proxy: %s, expected: %s)," % (swift_str(url), env(e), swift_str(nop), swift_str(px), exp))
lines.append("    ]")
lines.append("")
lines.append("    /// (URL host, no_proxy list) → whether curl 7.88.1 went direct.")
lines.append("    static let matches: [MatchCase] = [")
for (host, lst), res in zip(matcher, results["matcher"]):
    lines.append("        MatchCase(%s, %s, %s)," % (swift_str(host), swift_str(lst), "true" if res == "direct" else "false"))
lines.append("    ]")
lines.append("")
lines.append("    /// A proxy URL → the address curl 7.88.1 connected to (or tried to resolve), or the error it gave.")
lines.append("    static let proxyURLs: [ProxyURLCase] = [")
for text, res in zip(proxies, results["proxies"]):
    if res.startswith("proxy "): exp = ".authority(%s)" % swift_str(res.split(" ", 1)[1])
    elif res.startswith("resolve "): exp = ".authority(%s)" % swift_str(res.split(" ", 1)[1] + ":1080")
    elif res == "scheme": exp = ".unsupportedScheme"
    elif res == "syntax": exp = ".malformed"
    else: raise SystemExit(res)
    lines.append("        ProxyURLCase(%s, %s)," % (swift_str(text), exp))
lines.append("    ]")
sys.stdout.write("\n".join(lines) + "\n")
