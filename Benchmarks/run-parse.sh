#!/usr/bin/env bash
# Builds and runs the parser benchmark, Wire against NIO's llhttp-based decoder, and prints one Markdown table.
# Usage: Benchmarks/run-parse.sh [--runs N] [--scale X]   (defaults: 11 runs, scale 1)
# The run is pinned to core 1 (PARSE_CPU to change it) so a build or the shell on core 0 does not disturb it.
set -euo pipefail
cd "$(dirname "$0")"

lock=()
if command -v flock > /dev/null; then lock=(flock "${WIRE_BUILD_LOCK:-/tmp/wire-swift.lock}"); fi
mkdir -p .build
if ! "${lock[@]}" swift build -c release --product ParseFigures > .build/parse-figures-build.log 2>&1; then
    grep -E 'error:' .build/parse-figures-build.log | head -20 >&2
    echo "build failed; see Benchmarks/.build/parse-figures-build.log" >&2
    exit 2
fi
bin=$(swift build -c release --show-bin-path)
echo "machine: $(nproc) cores, Linux $(uname -r), $(swift --version 2>&1 | head -1)"
exec taskset -c "${PARSE_CPU:-1}" "$bin/ParseFigures" "$@"
