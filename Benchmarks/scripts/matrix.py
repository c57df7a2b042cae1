#!/usr/bin/env python3
"""Helpers for Benchmarks/run.sh: read each tool's output, hold idle connections, and print the matrix as one
Markdown table.

  matrix.py wrk FILE            -> "requests requests_per_second p99_ms errors" from `wrk --latency` output
  matrix.py json FILE SECONDS   -> "requests requests_per_second cpu_us_per_request p99_ms" from the last JSON
                                   object (wire bench --json, AHCClient, URLSessionClient, ClientFigures)
  matrix.py stime FILE          -> "connections" from `openssl s_time`
  matrix.py parse FILE SECTION  -> raw records (see below) for ParseFigures' Markdown table
  matrix.py hold HOST PORT N SECONDS
                                -> opens N keep-alive connections, sends one GET / on each, reads each response,
                                   prints "ready N", then holds them idle until SIGTERM or SECONDS pass
  matrix.py table RAW           -> the Markdown table, from the raw records run.sh wrote

Raw records, one per line, tab-separated, in the order the rows should appear:
  title SECTION TEXT                      the row's description (first line of the section)
  ref SECTION TOOL                        the tool every ratio of the section divides by
  m SECTION TOOL METRIC VALUE             one measurement (one repetition)
  skip SECTION TOOL MESSAGE               a tool that did not run, and why
  cells SECTION TOOL C1 C2 C3 C4          preformatted cells (throughput, CPU, latency or memory, ratio)
"""
import asyncio
import json
import re
import signal
import statistics
import sys

UNITS = {"us": 1e-3, "ms": 1.0, "s": 1e3, "m": 60e3}


def wrk(path):
    text = open(path).read()
    requests = int(re.search(r"(\d+) requests in", text).group(1))
    rate = float(re.search(r"Requests/sec:\s*([\d.]+)", text).group(1))
    p99 = "nan"
    match = re.search(r"^\s*99(?:\.0+)?%\s+([\d.]+)(us|ms|s|m)\s*$", text, re.M)
    if match:
        p99 = float(match.group(1)) * UNITS[match.group(2)]
    errors = 0
    match = re.search(r"Socket errors: connect (\d+), read (\d+), write (\d+), timeout (\d+)", text)
    if match:
        errors += sum(int(g) for g in match.groups())
    match = re.search(r"Non-2xx or 3xx responses: (\d+)", text)
    if match:
        errors += int(match.group(1))
    print(requests, rate, p99, errors)


def last_json(path):
    """The last JSON object in the file, on one line or pretty-printed over several."""
    text = open(path).read()
    decoder = json.JSONDecoder()
    starts = [m.start() for m in re.finditer(r"(?m)^\s*\{", text)]
    for start in reversed(starts):
        try:
            obj, _ = decoder.raw_decode(text, text.index("{", start))
        except ValueError:
            continue
        if isinstance(obj, dict) and "requests_per_second" in obj:
            return obj
    raise SystemExit(f"matrix.py: no JSON summary in {path}")


def json_figures(path, seconds):
    obj = last_json(path)
    rate = float(obj["requests_per_second"])
    requests = obj.get("requests") or obj.get("completed") or rate * float(seconds)
    cpu = obj.get("cpu_us_per_request", "nan")
    p99 = (obj.get("latency_ms") or {}).get("p99", "nan")
    print(int(requests), rate, cpu, p99)


def stime(path):
    text = open(path).read()
    # The first summary line counts connections over the whole run: "N connections in X.XXs; ..."
    match = re.search(r"(\d+) connections in [\d.]+s", text)
    if not match:
        raise SystemExit(f"matrix.py: no connection count in {path}")
    print(match.group(1))


def parse_records(path, prefix):
    """ParseFigures' table rows, re-cut into this table's columns."""
    section = None
    for line in open(path):
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if len(cells) != 6 or cells[0] in ("workload", "---") or cells[1].startswith("---"):
            continue
        workload, parser, median, spread, rate, ratio = cells
        if workload:
            section = f"{prefix}: {workload}"
            if parser.startswith("Wire"):
                print("\t".join(["title", section, f"parser: {workload} (one core; time per message)"]))
                print("\t".join(["ref", section, "NIO (llhttp)"]))
        if section is None:
            continue
        ratio_text = f"NIO time ÷ Wire time {ratio}" if ratio else ""
        print("\t".join(["cells", section, parser, rate, f"{median}/message ({spread})", "", ratio_text]))


async def hold(host, port, count, seconds):
    request = f"GET / HTTP/1.1\r\nHost: {host}:{port}\r\n\r\n".encode()
    connections = []
    gate = asyncio.Semaphore(256)  # connects in waves, so the listen backlog never overflows

    async def one():
        async with gate:
            reader, writer = await asyncio.open_connection(host, port)
            writer.write(request)
            head = await reader.readuntil(b"\r\n\r\n")
            length = re.search(rb"(?i)\r\ncontent-length:\s*(\d+)", head)
            if length:
                await reader.readexactly(int(length.group(1)))
            connections.append(writer)

    await asyncio.wait_for(asyncio.gather(*(one() for _ in range(count))), timeout=120)
    print("ready", len(connections), flush=True)
    stop = asyncio.Event()
    asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
    try:
        await asyncio.wait_for(stop.wait(), timeout=seconds)
    except asyncio.TimeoutError:
        pass
    for writer in connections:
        writer.close()


# --- the table -------------------------------------------------------------------------------------------------

def si(value):
    """A rate in thousands or millions, three significant figures."""
    if value >= 1e6:
        return f"{value / 1e6:.2f}M"
    if value >= 1e4:
        return f"{value / 1e3:.1f}k"
    if value >= 1e3:
        return f"{value / 1e3:.2f}k"
    return f"{value:.0f}"


def plain(digits):
    return lambda v: f"{v:,.{digits}f}"


# metric: (column, label in the ratio cell, formatter, unit)
METRICS = {
    "rps": (0, "req/s", si, " req/s"),
    "hps": (0, "handshakes/s", plain(0), " /s"),
    "mbps": (0, "MB/s", plain(0), " MB/s"),
    "cpu_us": (1, "CPU", plain(1), " µs/req"),
    "cpu_us_hs": (1, "CPU", plain(0), " µs/handshake"),
    "cpu_s": (1, "CPU", plain(2), " s"),
    "p99_ms": (2, "p99", plain(2), " ms p99"),
    "rss_mib": (2, "RSS", plain(1), " MiB peak RSS"),
    "conn_bytes": (2, "RSS/conn", plain(0), " B/idle conn"),
}


def table(path):
    titles, refs, order = {}, {}, []
    values, skips, cells = {}, {}, {}
    for line in open(path):
        fields = line.rstrip("\n").split("\t")
        kind, section = fields[0], fields[1]
        if section not in titles:
            titles[section] = section
            order.append(section)
        if kind == "title":
            titles[section] = fields[2]
            continue
        if kind == "ref":
            refs[section] = fields[2]
            continue
        tool = fields[2]
        key = (section, tool)
        tools = values.setdefault(section, {})
        tools.setdefault(tool, {})
        if kind == "m":
            value = float(fields[4])
            if value == value:  # not NaN
                tools[tool].setdefault(fields[3], []).append(value)
        elif kind == "skip":
            skips[key] = fields[3]
        elif kind == "cells":
            cells[key] = fields[3:7]

    out = [
        "| row | tool | throughput: median (min–max) | CPU: median (min–max) | latency or memory | ÷ reference |",
        "|---|---|---:|---:|---:|---|",
    ]
    for section in order:
        first = True
        ref_figures = values.get(section, {}).get(refs.get(section), {})
        for tool, figures in values.get(section, {}).items():
            row = [titles[section] if first else "", tool, "", "", "", ""]
            first = False
            key = (section, tool)
            if key in skips:
                row[2] = skips[key]
            elif key in cells:
                row[2:6] = cells[key]
            else:
                ratios = []
                for metric, samples in figures.items():
                    column, label, fmt, unit = METRICS[metric]
                    median = statistics.median(samples)
                    text = f"{fmt(median)}{unit}"
                    if len(samples) > 1:
                        text += f" ({fmt(min(samples))}–{fmt(max(samples))})"
                    row[2 + column] = (row[2 + column] + "; " if row[2 + column] else "") + text
                    ref = ref_figures.get(metric)
                    if tool == refs.get(section):
                        continue
                    if ref and statistics.median(ref) > 0:
                        ratios.append(f"{label} {median / statistics.median(ref):.2f}×")
                row[5] = "reference" if tool == refs.get(section) else ", ".join(ratios)
            out.append("| " + " | ".join(row) + " |")
    print("\n".join(out))


def main():
    command, args = sys.argv[1], sys.argv[2:]
    if command == "wrk":
        wrk(args[0])
    elif command == "json":
        json_figures(args[0], args[1])
    elif command == "stime":
        stime(args[0])
    elif command == "parse":
        parse_records(args[0], args[1])
    elif command == "hold":
        asyncio.run(hold(args[0], int(args[1]), int(args[2]), float(args[3])))
    elif command == "table":
        table(args[0])
    else:
        raise SystemExit(f"matrix.py: unknown command {command}")


if __name__ == "__main__":
    main()
