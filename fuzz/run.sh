#!/usr/bin/env bash
# Builds the libFuzzer targets and runs each for a while: fuzz/run.sh [seconds-per-target] [target...]
#
# Defaults: 60 seconds, every target. Each target starts from its seed corpus (Corpus/<target>/) plus what earlier
# runs here found (artifacts/corpus/<target>/); crashers land in artifacts/<target>/. Prints the executions per
# target and exits 1 if any target found a failure (a crash, a sanitizer report or a broken property), 2 if the
# build failed. Targets run one per core at once (FUZZ_PARALLEL=N to change); FUZZ_JOBS_CPU=C pins the fuzzing (not
# the build) to core C with taskset, one target at a time. FUZZ_CONFIGURATION=debug builds faster and fuzzes slower
# (CI's brief run). FUZZ_BUILD_ONLY=1 builds and stops: CI builds while other work runs, then fuzzes alone.
set -uo pipefail
cd "$(dirname "$0")"

seconds=${1:-60}
shift || true
targets=("$@")
if [ ${#targets[@]} -eq 0 ]; then
    targets=(FuzzHTTP1Request FuzzHTTP1Response FuzzChunked FuzzRoundTrip FuzzServerConnection FuzzClientConnection FuzzConnectionPool FuzzRouteNetlink FuzzProxyRules FuzzSOCKS)
fi

# Swift builds share the machine's cores with anything else building Wire: take the same lock when there is one.
lock=()
if command -v flock > /dev/null; then lock=(flock "${WIRE_BUILD_LOCK:-/tmp/wire-swift.lock}"); fi
pin=()
if [ -n "${FUZZ_JOBS_CPU:-}" ]; then pin=(taskset -c "$FUZZ_JOBS_CPU"); fi

# -enable-testing: the state-machine targets import Wire @testable. FUZZ_CONFIGURATION=debug builds in a third of the
# time and runs about a fifth as many inputs a second: CI's brief run takes it, a real campaign keeps release.
build_flags=(-c "${FUZZ_CONFIGURATION:-release}" -Xswiftc -sanitize=fuzzer,address -Xswiftc -parse-as-library -Xswiftc -enable-testing)
mkdir -p artifacts
if [ $# -eq 0 ]; then
    # Every target: one build of the whole package, which plans and links once rather than once per product.
    if ! "${lock[@]}" swift build "${build_flags[@]}" > "artifacts/build.log" 2>&1; then
        echo "build of the fuzz targets failed; see fuzz/artifacts/build.log" >&2
        grep -E 'error:' "artifacts/build.log" | head -20 >&2
        exit 2
    fi
fi
for target in "${targets[@]}"; do
    [ $# -eq 0 ] && break
    if ! "${lock[@]}" swift build "${build_flags[@]}" --product "$target" > "artifacts/build-$target.log" 2>&1; then
        echo "build of $target failed; see fuzz/artifacts/build-$target.log" >&2
        grep -E 'error:' "artifacts/build-$target.log" | head -20 >&2
        exit 2
    fi
done
if [ "${FUZZ_BUILD_ONLY:-0}" = 1 ]; then exit 0; fi
bin=$(swift build "${build_flags[@]}" --show-bin-path)

# The Swift runtime's backtracer would run inside ASan's crash handling and add a second, misleading report.
export SWIFT_BACKTRACE=enable=no
# One target per core at a time (FUZZ_PARALLEL overrides; FUZZ_JOBS_CPU pins them all to one core, so it means one).
parallel=${FUZZ_PARALLEL:-$(nproc 2>/dev/null || echo 1)}
if [ -n "${FUZZ_JOBS_CPU:-}" ]; then parallel=1; fi
fuzz_one() {
    local target=$1
    mkdir -p "artifacts/corpus/$target" "artifacts/$target"
    local log="artifacts/$target.log"
    "${pin[@]}" "$bin/$target" "artifacts/corpus/$target" "Corpus/$target" \
        -max_total_time="$seconds" -print_final_stats=1 -max_len=4096 -timeout=10 -rss_limit_mb=2048 \
        -artifact_prefix="artifacts/$target/" > "$log" 2>&1
    echo $? > "artifacts/$target.rc"
}
running=0
for target in "${targets[@]}"; do
    if [ "$running" -ge "$parallel" ]; then
        wait -n
        running=$((running - 1))
    fi
    fuzz_one "$target" &
    running=$((running + 1))
done
wait

status=0
summary=()
for target in "${targets[@]}"; do
    log="artifacts/$target.log"
    rc=$(cat "artifacts/$target.rc" 2>/dev/null || echo 99)
    executions=$(grep -E '^stat::number_of_executed_units:' "$log" | awk '{print $2}')
    if [ "$rc" -ne 0 ]; then
        status=1
        summary+=("$target: FAILED after ${executions:-?} executions (exit $rc); log fuzz/$log")
        grep -E -A20 'PROPERTY FAILED|ERROR: (AddressSanitizer|libFuzzer)' "$log" | head -40 >&2
        ls "artifacts/$target/" >&2
    else
        summary+=("$target: ${executions:-?} executions in ${seconds}s, no failure")
    fi
done
printf '%s\n' "${summary[@]}"
exit $status
