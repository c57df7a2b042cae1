#!/usr/bin/env python3
"""link-order.py: writes the release tool's text-ordering linker script from callgrind profiles.

    scripts/link-order.py --map wire.map --binary wire --out LinkOrder/wire-text.ld \
        --toolchain "Swift version 6.3.1" PROFILE...

MAP is GNU ld's map of a release link of `wire` (`-Xlinker -Map=FILE`), BINARY the executable it describes, and
each PROFILE a callgrind output (`valgrind --tool=callgrind --demangle=no`) of one run of that binary. The script
lists every function the runs executed that the linker can move on its own: one in an input section of its own
(`.text.NAME`: Swift gives public functions one, C code built with -ffunction-sections every function), or one in
the shared `.text` of a small object (an OpenSSL or libdispatch object file, a Swift file's private functions),
which moves as a whole. Functions in the large shared `.text` of a one-object module (the standard library,
Concurrency, string processing) cannot move and are left out.

The result is a script GNU ld reads beside its default one (`INSERT BEFORE .text`): one output section that
gathers those input sections, what the first profile ran first, then what each next profile added, each group
in the link's default order (which keeps a file's functions together). The kernel maps up to
64 KiB of the executable around each page fault (fault-around), so code a run touches scattered over 16 MiB of
text makes most of the process's resident set; gathered, the same code is a few hundred pages. A name the
script lists that a later build no longer has matches nothing and costs nothing: a stale script only loses
resident pages, never breaks a link.
"""

import argparse
import bisect
import re
import os
import subprocess
import sys
from collections import Counter, defaultdict

# Whole objects larger than this stay where they are: moving them would bring more cold code than hot.
WHOLE_OBJECT_LIMIT = 64 * 1024

INPUT_ONE_LINE = re.compile(r"^ (\.text\S*)\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
INPUT_NAME_ONLY = re.compile(r"^ (\.text\S*)\s*$")
INPUT_CONTINUED = re.compile(r"^\s+0x([0-9a-f]+)\s+0x([0-9a-f]+)\s+(\S.*)$")
OBJECT = re.compile(r"^(c?)ob=\((\d+)\)(.*)$")
FUNCTION = re.compile(r"^(c?)fn=\((\d+)\)(.*)$")
ARCHIVE_MEMBER = re.compile(r"^(.*)\((.*)\)$")


def symbol_addresses(binary):
    """Address of every defined text symbol of the executable, local ones included."""
    listing = subprocess.run(["nm", "--defined-only", binary], capture_output=True, text=True, check=True).stdout
    addresses = {}
    for line in listing.split("\n"):
        fields = line.split()
        if len(fields) == 3 and fields[1] in "tTwW":
            addresses.setdefault(fields[2], int(fields[0], 16))
    return addresses


def executed_addresses(profiles, binary, symbols):
    """Link-time addresses of the instructions the profiles saw run in the executable, each with the index of the
    first profile that ran it.

    With `--dump-instr=yes --compress-pos=no`, callgrind writes a line per instruction of each function it saw run,
    the address first. For the executable it names, the address is relative to the executable; for code it could
    not place (an object named `???`: valgrind does that for part of a large static PIE) it is where valgrind
    loaded it. So each object's offset is found from the functions it names: the first instruction listed after a
    function's name lies a few bytes past that symbol's link-time address. An object is the executable's when its
    named functions agree on one offset. Code without a symbol (LLVM's private functions) is found too, which
    names alone would miss.
    """
    seen, ordered = set(), []
    for group, path in enumerate(profiles):
        objects, functions, current, named = {}, {}, None, None
        addresses, offsets = defaultdict(list), defaultdict(Counter)
        with open(path, errors="replace") as profile:
            for line in profile:
                match = OBJECT.match(line)
                if match:  # `ob=(N) name` or `cob=(N) name` names object N once; a bare `ob=(N)` switches to it
                    if match.group(3).strip():
                        objects[match.group(2)] = match.group(3).strip()
                    if not match.group(1):
                        current = match.group(2)
                    continue
                match = FUNCTION.match(line)
                if match:  # functions are named as objects are, by `cfn=` as often as by `fn=`
                    if match.group(3).strip():
                        functions[match.group(2)] = match.group(3).strip()
                    if not match.group(1):
                        named = symbols.get(functions.get(match.group(2), ""))
                    continue
                if current is None or objects.get(current, "???") not in (binary, "???"):
                    continue
                if line.startswith("0x"):
                    address = int(line.split(" ", 1)[0], 16)
                    addresses[current].append(address)
                    if named is not None:
                        offsets[current][(address - named) & ~0xFFF] += 1
                        named = None
                elif not line.startswith(("calls=", "cfn=", "cob=", "cfi=", "cfl=")):
                    named = None
        found = False
        for object_id, counts in offsets.items():
            offset, agreeing = counts.most_common(1)[0]
            if agreeing < 20 or agreeing < 0.8 * sum(counts.values()):
                continue  # not the executable's code, or too little of it to tell
            found = True
            for address in addresses[object_id]:
                if address - offset not in seen:
                    seen.add(address - offset)
                    ordered.append((group, address - offset))
        if not found:
            sys.exit(f"{path}: no code of {binary} found")
    return ordered


def text_input_sections(map_path):
    """(address, size, section name, file) of every non-empty input section of the map's text."""
    with open(map_path, errors="replace") as file:
        lines = file.read().split("\n")
    try:
        start = next(i for i, line in enumerate(lines) if line.startswith("Linker script and memory map"))
    except StopIteration:
        sys.exit(f"{map_path}: not a GNU ld map (no memory map)")
    sections, pending = [], None
    for line in lines[start:]:
        match = INPUT_ONE_LINE.match(line)
        if match:
            sections.append((int(match.group(2), 16), int(match.group(3), 16), match.group(1), match.group(4)))
            pending = None
            continue
        match = INPUT_NAME_ONLY.match(line)
        if match:
            pending = match.group(1)
            continue
        if pending:
            match = INPUT_CONTINUED.match(line)
            if match:
                sections.append((int(match.group(1), 16), int(match.group(2), 16), pending, match.group(3)))
            pending = None
    return sorted(section for section in sections if section[1] > 0)


def file_pattern(path):
    """A pattern for one input file that does not depend on where the build or the toolchain lives."""
    member = ARCHIVE_MEMBER.match(path)
    if member:
        return "*" + member.group(1).rsplit("/", 1)[-1] + ":" + member.group(2)
    return "*/" + "/".join(path.split("/")[-2:])


def rules_for(profiles, sections):
    """One rule per input section that holds executed code.

    Sections first met by the first profile come first, then those the second one added, and so on; within each
    group they keep the order the map gives them (the link's default order, which keeps a file's functions
    together: the hot loop of a server spans fewer pages than in the order callgrind happens to list them).
    """
    starts = [section[0] for section in sections]
    chosen, seen, moved, whole, fixed = [], set(), 0, 0, set()
    for group, address in profiles:
        index = bisect.bisect_right(starts, address) - 1
        if index < 0:
            continue
        start, size, section, path = sections[index]
        if not start <= address < start + size or (start, path) in seen:
            continue
        seen.add((start, path))
        if section != ".text":
            moved += 1
        elif size <= WHOLE_OBJECT_LIMIT:
            whole += 1
        else:
            fixed.add(path)
            continue
        chosen.append((group, start, f"{file_pattern(path)}({section})"))
    # Each rule names its file: LLVM names some sections alike in every object (`.text..L__unnamed_1`).
    rules = [rule for _, _, rule in sorted(chosen)]
    return rules, moved, whole, len(fixed)


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--map", required=True)
    parser.add_argument("--binary", required=True)
    parser.add_argument("--out", required=True)
    parser.add_argument("--toolchain", required=True, help="the Swift toolchain's version line, for the header")
    parser.add_argument("--runs", default="", help="what the profiles ran, for the header")
    parser.add_argument("profiles", nargs="+")
    arguments = parser.parse_args()

    binary = os.path.abspath(arguments.binary)
    addresses = executed_addresses(arguments.profiles, binary, symbol_addresses(binary))
    rules, moved, whole, fixed = rules_for(addresses, text_input_sections(arguments.map))
    with open(arguments.out, "w") as out:
        out.write(
            "/* Generated by scripts/update-link-order.sh; do not edit. The release `wire` tool's hot text: what the\n"
            "   first callgrind profile of its commands ran, then what each next one added, each group in the link's\n"
            "   default order (LinkOrder/README.md says why and how).\n"
            f"   Toolchain: {arguments.toolchain}\n"
            f"   Runs: {arguments.runs}\n"
            f"   {len(rules)} rules: {moved} functions in sections of their own, {whole} small objects' shared text\n"
            f"   moved whole; the shared text of {fixed} large objects stays where it is. */\n"
        )
        out.write("SECTIONS\n{\n  .text.wire_hot :\n  {\n")
        for rule in rules:
            out.write(f"    {rule}\n")
        out.write("  }\n}\nINSERT BEFORE .text;\n")
    print(f"{arguments.out}: {len(rules)} rules ({moved} own sections, {whole} whole objects, {fixed} large left)")


if __name__ == "__main__":
    main()
