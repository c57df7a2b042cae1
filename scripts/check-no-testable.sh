#!/usr/bin/env bash
# Tests use what a user or the package's own modules see: `public`, or `package` for what only tests need (CONTRIBUTING.md),
# never `@testable import`. Exit status 1 lists every test file that imports a module @testable.
# (The fuzz harnesses in fuzz/, a package of their own that `package` access does not reach, may.)
set -uo pipefail
cd "$(dirname "$0")/.."
if found=$(grep -rnE '^[[:space:]]*@testable[[:space:]]+import' Tests); then
    echo "@testable import in tests: make what they need \`package\` instead" >&2
    echo "$found" >&2
    exit 1
fi
echo "no @testable import under Tests/"
