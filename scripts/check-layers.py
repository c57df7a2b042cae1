#!/usr/bin/env python3
"""Checks that data flows one way through Wire's rooms and modules (ARCHITECTURE.md, "Who may use whom").

Each room (a folder of Sources/Wire or Sources/WireClient) and each other module has a rank; a source file may name a type
declared in its own room or in a lower one, never in a higher one. Names are found by declarations at the
start of a line (`struct`, `class`, `enum`, `protocol`, `actor`, `typealias`, after any modifiers); uses are
whole identifiers outside comments and string literals. Exit status 1 lists every file that reaches up.

Usage: python3 scripts/check-layers.py [REPOSITORY]
"""

import pathlib
import re
import sys

# Lowest first. Rooms of the same rank may not name each other either (they are independent).
RANKS = [
    ("Wire/Buffer",),
    ("Wire/System",),
    ("Wire/EventLoop",),
    ("Wire/Socket",),
    ("Wire/Resolver",),
    ("Wire/HTTP1", "Wire/URL"),
    ("Wire/Body", "Wire/Proxy"),
    ("Wire/Connection",),
    ("Wire/Pool",),
    ("Wire/Client", "Wire/Server"),
    ("WireTLS", "WireLoad", "WireFaults"),
    # WireClient's folders: the vocabulary, then what builds requests and reads responses, the chain's contract,
    # the features (each a stage of the chain, independent of one another), the session that assembles them, and
    # what is built on the session.
    ("WireClient/Core",),
    ("WireClient/Values", "WireClient/URL"),
    ("WireClient/Multipart",),
    ("WireClient/Serialization",),
    ("WireClient/Chain",),
    ("WireClient/Cache", "WireClient/Cookies", "WireClient/Decoding", "WireClient/Interception", "WireClient/Redirects",
     "WireClient/Resumption", "WireClient/Security", "WireClient/Reachability"),
    ("WireClient/Session",),
    ("WireClient/HTTPSession",),
    ("WireClient/Resources", "WireClient/Activity"),
    # The bridge to swift-log, swift-metrics, swift-distributed-tracing and swift-service-lifecycle.
    ("WireEcosystem",),
    ("WireTool", "wire-profile"),
]

DECLARATION = re.compile(
    r"^\s*(?:@\w+(?:\([^)]*\))?\s+)*(?:(?:public|package|internal|fileprivate|private|final|open|indirect|"
    r"nonisolated|(?:public|package|internal|fileprivate|private)\(set\))\s+)*"
    r"(?:struct|class|enum|protocol|actor|typealias)\s+([A-Z][A-Za-z0-9_]*)",
    re.MULTILINE,
)
IDENTIFIER = re.compile(r"\b[A-Z][A-Za-z0-9_]*\b")
EXTENSION = re.compile(r"^\s*(?:(?:public|package|internal|fileprivate|private)\s+)?extension\s+([A-Z][A-Za-z0-9_]*)", re.MULTILINE)


def strip_comments_and_strings(text: str) -> str:
    """Blanks out comments and string literals, so prose that names a higher room's type is not a use."""
    text = re.sub(r'"""[\s\S]*?"""', '""', text)
    text = re.sub(r"/\*[\s\S]*?\*/", " ", text)
    text = re.sub(r"//[^\n]*", " ", text)
    text = re.sub(r'"(?:\\.|[^"\\\n])*"', '""', text)
    return text


def room_of(path: pathlib.Path, sources: pathlib.Path) -> str | None:
    parts = path.relative_to(sources).parts
    candidates = ["/".join(parts[:2]), parts[0]]
    for candidate in candidates:
        for rank, rooms in enumerate(RANKS):
            if candidate in rooms:
                return candidate
    return None


def main() -> int:
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else pathlib.Path(__file__).resolve().parent.parent)
    sources = root / "Sources"
    rank_of = {room: rank for rank, rooms in enumerate(RANKS) for room in rooms}
    files: dict[pathlib.Path, tuple[str, str]] = {}
    declared_in: dict[str, set[str]] = {}
    for path in sorted(sources.rglob("*.swift")):
        room = room_of(path, sources)
        if room is None:
            continue
        text = strip_comments_and_strings(path.read_text(encoding="utf-8"))
        files[path] = (room, text)
        for name in DECLARATION.findall(text):
            declared_in.setdefault(name, set()).add(room)
    # A name declared in several rooms (a nested `State`, `Key`, `Event`) is ambiguous: only names with one home count.
    home = {name: next(iter(rooms)) for name, rooms in declared_in.items() if len(rooms) == 1}
    failures = []
    extensions = 0
    for path, (room, text) in files.items():
        # An extension adds to its type's room from another: allowed only from above (the type's room never sees it).
        for name in EXTENSION.findall(text):
            if name in home and home[name] != room:
                extensions += 1
                if rank_of[home[name]] >= rank_of[room]:
                    failures.append(f"{path.relative_to(root)} [{room}] extends {name} of {home[name]}, a room not below it")
        reached = sorted({
            f"{name} ({home[name]})"
            for name in set(IDENTIFIER.findall(text))
            if name in home and home[name] != room and rank_of[home[name]] >= rank_of[room]
        })
        if reached:
            failures.append(f"{path.relative_to(root)} [{room}] names {', '.join(reached)}")
    if failures:
        print("Rooms that reach up or sideways (ARCHITECTURE.md, \"Who may use whom\"):")
        for failure in failures:
            print("  " + failure)
        return 1
    print(f"layers: {len(files)} files in {len(set(r for r, _ in files.values()))} rooms, every use points down; "
          f"{extensions} extensions of another room's types, each from above it; no cycles (the ranks order them)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
