#!/usr/bin/env python3
"""A mutational soak of `wire serve`: hostile traffic from several connections at once, and the server must live.

    soak/server-soak.py [--wire PATH] [--seconds N] [--workers N] [--modes hello,echo,root] [--json FILE]

Each mode (`--hello`, `--echo`, `--root DIR`) gets its own server process on 127.0.0.1 (port 0; the port is read
from its first line). Worker threads pick a valid seed (single requests, bodies, chunked bodies, pipelined mixes),
mutate it (byte flips, inserted CR, LF, NUL, truncations, duplicated header lines, splices of two seeds), send it in
random pieces, and end the connection at a random point in one of three ways: FIN and read what comes back, a reset
(SO_LINGER 0 then close), or a plain close. Every second a health check sends a valid request on a new connection
and needs a correct answer. Every health check also samples the server's open descriptors (/proc/PID/fd) and
resident memory (VmRSS).

It fails (exit 1) when a server exits, a health check fails, the descriptors after the load ends exceed those before
it by more than the slack, or resident memory in the last quarter of the run exceeds its level after warm-up by
more than the slack: memory and descriptors must stay flat. Traffic goes to 127.0.0.1 only, and the run is bounded by
`--seconds`.
"""

import argparse
import json
import os
import random
import socket
import struct
import subprocess
import sys
import tempfile
import threading
import time

SEEDS = [
    b"GET / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET /index.html HTTP/1.1\r\nHost: a\r\nAccept: */*\r\nUser-Agent: soak\r\n\r\n",
    b"HEAD / HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET / HTTP/1.0\r\n\r\n",
    b"GET / HTTP/1.0\r\nConnection: keep-alive\r\n\r\n",
    b"POST /echo HTTP/1.1\r\nHost: a\r\nContent-Length: 11\r\n\r\nhello world",
    b"POST /echo HTTP/1.1\r\nHost: a\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n6;x=y\r\n world\r\n0\r\nT: v\r\n\r\n",
    b"PUT /x HTTP/1.1\r\nHost: a\r\nExpect: 100-continue\r\nContent-Length: 4\r\n\r\nbody",
    b"GET /missing?q=1&r=%20 HTTP/1.1\r\nHost: a\r\nRange: bytes=0-3,5-\r\nIf-None-Match: \"x\"\r\n\r\n",
    b"OPTIONS * HTTP/1.1\r\nHost: a\r\n\r\n",
    b"GET http://a/abs HTTP/1.1\r\nHost: a\r\nConnection: close\r\n\r\n",
    b"DELETE /d HTTP/1.1\r\nHost: a\r\nContent-Length: 0\r\n\r\n",
    b"GET /../../etc/passwd HTTP/1.1\r\nHost: a\r\n\r\n",
    b"POST /big HTTP/1.1\r\nHost: a\r\nContent-Length: 4096\r\n\r\n" + b"x" * 4096,
]

INSERTS = [b"\r", b"\n", b"\0", b"\r\n", b" ", b"\t", b":", b"\xff", b"\r\n\r\n", b"0\r\n\r\n"]


def mutate(rng, data):
    """One to four mutations of `data`, each of a kind the issue names."""
    data = bytearray(data)
    for _ in range(rng.randint(1, 4)):
        kind = rng.randrange(7)
        if kind == 0 and data:  # byte flip
            i = rng.randrange(len(data))
            data[i] ^= 1 << rng.randrange(8)
        elif kind == 1:  # inserted CR, LF, NUL and friends
            i = rng.randrange(len(data) + 1)
            data[i:i] = rng.choice(INSERTS)
        elif kind == 2 and data:  # truncation
            del data[rng.randrange(len(data)):]
        elif kind == 3:  # duplicated header line
            lines = bytes(data).split(b"\r\n")
            if len(lines) > 2:
                j = rng.randrange(1, len(lines) - 1)
                lines.insert(j, lines[j])
                data = bytearray(b"\r\n".join(lines))
        elif kind == 4:  # pipelined mix: another seed after this one
            data += rng.choice(SEEDS)
        elif kind == 5 and data:  # a byte replaced by a random one
            data[rng.randrange(len(data))] = rng.randrange(256)
        elif kind == 6 and len(data) > 4:  # a slice duplicated in place
            i = rng.randrange(len(data))
            j = min(len(data), i + rng.randint(1, 16))
            data[i:i] = data[i:j]
    return bytes(data)


def pick_input(rng):
    choice = rng.random()
    if choice < 0.15:  # valid pipelined mix: the crash of issue 11 was three of these and a reset
        return b"".join(rng.choice(SEEDS) for _ in range(rng.randint(2, 6)))
    if choice < 0.25:
        return rng.choice(SEEDS)
    return mutate(rng, rng.choice(SEEDS))


class Counters:
    def __init__(self):
        self.lock = threading.Lock()
        self.values = {}

    def add(self, key, amount=1):
        with self.lock:
            self.values[key] = self.values.get(key, 0) + amount


def one_connection(rng, port, counters):
    data = pick_input(rng)
    sock = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    sock.settimeout(2.0)
    try:
        sock.connect(("127.0.0.1", port))
        counters.add("connections")
        ending = rng.random()
        # Where the connection ends: somewhere inside the input, or after all of it.
        cut = len(data) if rng.random() < 0.6 else rng.randrange(len(data) + 1)
        sent = 0
        while sent < cut:
            piece = min(cut - sent, rng.choice([1, 2, 7, 64, 1500, 1 << 16]))
            sock.sendall(data[sent:sent + piece])
            sent += piece
        counters.add("bytes_sent", sent)
        if ending < 0.4:
            # A reset at once: the server may be mid-response, mid-parse or mid-handler.
            sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
            counters.add("resets")
        elif ending < 0.8:
            sock.shutdown(socket.SHUT_WR)
            counters.add("fins")
            received = 0
            while received < 1 << 20:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                received += len(chunk)
            counters.add("bytes_received", received)
            if rng.random() < 0.3:
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))
                counters.add("resets_after_fin")
        else:
            counters.add("closes")
    except (socket.timeout, ConnectionError, OSError) as error:
        counters.add("client_errors:" + type(error).__name__)
    finally:
        sock.close()


def health_check(port):
    """A valid request on a new connection; True when a complete 2xx/4xx answer comes back."""
    try:
        with socket.create_connection(("127.0.0.1", port), timeout=5) as sock:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: health\r\nConnection: close\r\n\r\n")
            answer = b""
            while True:
                chunk = sock.recv(65536)
                if not chunk:
                    break
                answer += chunk
            return answer.startswith(b"HTTP/1.1 ") and answer[9:10] in (b"2", b"4")
    except OSError:
        return False


def descriptors(pid):
    return len(os.listdir(f"/proc/{pid}/fd"))


def resident_kib(pid):
    with open(f"/proc/{pid}/status") as status:
        for line in status:
            if line.startswith("VmRSS:"):
                return int(line.split()[1])
    return 0


def start_server(wire, mode, root):
    arguments = [wire, "serve", "--port", "0", "--loops", "2"]
    arguments += ["--root", root] if mode == "root" else [f"--{mode}"]
    process = subprocess.Popen(arguments, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    line = process.stdout.readline().decode()
    if not line.startswith("listening on "):
        process.kill()
        raise SystemExit(f"{mode}: wire serve did not start: {line!r} {process.stderr.read().decode()[:500]}")
    return process, int(line.strip().rsplit(":", 1)[1])


def soak_mode(wire, mode, root, seconds, workers, seed, results):
    process, port = start_server(wire, mode, root)
    counters = Counters()
    stop = threading.Event()

    def worker(index):
        rng = random.Random(seed * 1000 + index)
        while not stop.is_set():
            one_connection(rng, port, counters)

    # Warm-up: a few seconds of valid traffic so the baseline includes the server's steady allocations.
    time.sleep(0.2)
    fds_before = descriptors(process.pid)
    threads = [threading.Thread(target=worker, args=(i,), daemon=True) for i in range(workers)]
    for thread in threads:
        thread.start()
    started = time.monotonic()
    samples = []  # (elapsed, fds, rss KiB)
    failures = []
    checks = 0
    while time.monotonic() - started < seconds:
        time.sleep(1.0)  # the sampling period, not synchronisation: each check below stands on its own
        if process.poll() is not None:
            errors = process.stderr.read().decode(errors="replace")
            fatal = [line for line in errors.splitlines() if "Fatal error" in line or "ERROR" in line]
            failures.append(f"server exited with {process.returncode}: {(fatal or [errors[-500:]])[0]}")
            break
        checks += 1
        if not health_check(port):
            failures.append(f"health check {checks} failed at {time.monotonic() - started:.0f}s")
        samples.append((time.monotonic() - started, descriptors(process.pid), resident_kib(process.pid)))
    stop.set()
    for thread in threads:
        thread.join(timeout=10)

    # After the load: lingering connections close within the server's linger and idle timeouts.
    settle_deadline = time.monotonic() + 15
    fds_after = descriptors(process.pid) if process.poll() is None else -1
    while process.poll() is None and fds_after > fds_before + 2 and time.monotonic() < settle_deadline:
        time.sleep(0.5)
        fds_after = descriptors(process.pid)
    alive_at_end = process.poll() is None and health_check(port)
    if not alive_at_end and not failures:
        failures.append("the server did not answer after the load")
    if fds_after > fds_before + 2:
        failures.append(f"descriptors {fds_before} before the load, {fds_after} after it settled")

    rss_warm = rss_last = peak_fds = 0
    if samples:
        warm = [s[2] for s in samples if s[0] >= seconds * 0.25] or [samples[-1][2]]
        last = [s[2] for s in samples if s[0] >= seconds * 0.75] or [samples[-1][2]]
        rss_warm, rss_last = warm[0], max(last)
        peak_fds = max(s[1] for s in samples)
        # Flat: the last quarter may not exceed the level after warm-up by more than 8 MiB and 25%.
        if rss_last > rss_warm * 1.25 + 8 * 1024:
            failures.append(f"resident memory grew from {rss_warm} KiB to {rss_last} KiB")
    process.terminate()
    try:
        process.wait(timeout=15)
    except subprocess.TimeoutExpired:
        process.kill()
        failures.append("the server did not stop on SIGTERM")
    results[mode] = {
        "seconds": seconds,
        "workers": workers,
        "health_checks": checks,
        "fds_before": fds_before,
        "fds_peak": peak_fds,
        "fds_after": fds_after,
        "rss_kib_after_warmup": rss_warm,
        "rss_kib_last_quarter_peak": rss_last,
        "counters": dict(sorted(counters.values.items())),
        "failures": failures,
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--wire", default=".build/debug/wire")
    parser.add_argument("--seconds", type=float, default=60)
    parser.add_argument("--workers", type=int, default=6, help="client threads per mode")
    parser.add_argument("--modes", default="hello,echo,root")
    parser.add_argument("--seed", type=int, default=int(time.time()))
    parser.add_argument("--json", help="also write the results here")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as root:
        with open(os.path.join(root, "index.html"), "wb") as file:
            file.write(b"<p>soak</p>\n" * 100)
        with open(os.path.join(root, "big.bin"), "wb") as file:
            file.write(os.urandom(256 * 1024))
        results = {}
        modes = arguments.modes.split(",")
        threads = [
            threading.Thread(
                target=soak_mode,
                args=(arguments.wire, mode, root, arguments.seconds, arguments.workers, arguments.seed, results))
            for mode in modes
        ]
        for thread in threads:
            thread.start()
        for thread in threads:
            thread.join()

    failed = False
    print(f"soak seed {arguments.seed}, {arguments.seconds:.0f} s per mode, {arguments.workers} workers per mode")
    for mode in modes:
        result = results.get(mode, {"failures": ["no result"], "counters": {}})
        counters = result["counters"]
        print(f"{mode}: {counters.get('connections', 0)} connections, {counters.get('resets', 0)} resets, "
              f"{counters.get('fins', 0)} FINs, {counters.get('bytes_sent', 0)} bytes sent, "
              f"{result.get('health_checks', 0)} health checks; descriptors {result.get('fds_before')} -> peak "
              f"{result.get('fds_peak')} -> {result.get('fds_after')}; RSS {result.get('rss_kib_after_warmup')} KiB "
              f"after warm-up, {result.get('rss_kib_last_quarter_peak')} KiB last quarter")
        for failure in result["failures"]:
            failed = True
            print(f"  FAILED: {failure}")
    if arguments.json:
        with open(arguments.json, "w") as file:
            json.dump({"seed": arguments.seed, "results": results}, file, indent=2)
    print("soak: " + ("FAILED" if failed else "passed"))
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
