#!/usr/bin/env python3
"""Captures a TLS exchange on loopback and decrypts it with a key log, for the SSLKEYLOGFILE tests.

    tls_capture.py PORT KEYLOG -- COMMAND [ARG...]

Captures tcp port PORT on lo into a file while COMMAND runs, then decrypts the file with the secrets in KEYLOG (as
Wireshark users do) and prints the target of every HTTP request found, one per line. Exits with COMMAND's status.
The command's own output goes to standard error.

Whether the capture has started, and whether it holds everything, is learned from the capture itself, not from a
clock: marker connections are made to PORT (connected and closed at once) and tshark's live listing of what it
writes is read until a marker's SYN appears, once before COMMAND and once after. tshark stops by itself after 30 s,
which bounds every wait.
"""
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile


def connect_marker(port: int) -> int:
    with socket.create_connection(("127.0.0.1", port), timeout=10) as marker:
        return marker.getsockname()[1]


def await_marker(tshark: subprocess.Popen, port: int) -> bool:
    """Makes marker connections until tshark lists the SYN of one; False when tshark ends first."""
    markers = set()
    pending = b""
    while True:
        markers.add(str(connect_marker(port)))
        # A marker made before the capture started is never listed: another follows after a quarter second.
        while True:
            ready, _, _ = select.select([tshark.stdout], [], [], 0.25)
            if not ready:
                break
            chunk = os.read(tshark.stdout.fileno(), 65536)
            if not chunk:
                return False
            pending += chunk
            *lines, pending = pending.split(b"\n")
            for line in lines:
                fields = line.decode().split()
                if len(fields) >= 3 and fields[0] in markers and fields[1:3] == ["1", "0"]:
                    return True


def main() -> int:
    port, key_log, separator, *command = sys.argv[1:]
    assert separator == "--" and command, __doc__
    # A test runner may start this with signals blocked (a Swift thread's mask is inherited through exec): tshark
    # must hear the SIGTERM that stops it, and its capture child the signals they exchange.
    signal.pthread_sigmask(signal.SIG_SETMASK, [])
    with tempfile.TemporaryDirectory() as folder:
        capture_file = os.path.join(folder, "capture.pcapng")
        # GnuTLS in tshark would follow the variable too: only the command logs keys.
        environment = {name: value for name, value in os.environ.items() if name != "SSLKEYLOGFILE"}
        tshark = subprocess.Popen(
            ["tshark", "-i", "lo", "-f", f"tcp port {port}", "-a", "duration:30", "-w", capture_file, "-P", "-l",
             "-T", "fields", "-e", "tcp.srcport", "-e", "tcp.flags.syn", "-e", "tcp.flags.ack"],
            stdin=subprocess.DEVNULL, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=environment)
        try:
            if not await_marker(tshark, int(port)):
                print("tshark ended before it captured a marker connection", file=sys.stderr)
                return 2
            status = subprocess.run(command, stdout=sys.stderr, stdin=subprocess.DEVNULL).returncode
            if not await_marker(tshark, int(port)):
                print("tshark ended before it captured the closing marker connection", file=sys.stderr)
                return 2
        finally:
            tshark.terminate()
            tshark.wait(timeout=10)
        decoded = subprocess.run(
            ["tshark", "-r", capture_file, "-d", f"tcp.port=={port},tls", "-o", f"tls.keylog_file:{key_log}",
             "-Y", "http.request", "-T", "fields", "-e", "http.request.uri"],
            stdin=subprocess.DEVNULL, capture_output=True, env=environment, timeout=60)
        sys.stdout.write(decoded.stdout.decode())
        return status


if __name__ == "__main__":
    sys.exit(main())
