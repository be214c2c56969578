#!/usr/bin/env bash
# Runs clang-tidy with .clang-tidy over the library sources, using the compile
# database of a build directory (default build/test). Usage: bash scripts/tidy.sh [BUILD_DIR]
set -euo pipefail
cd "$(dirname "$0")/.."
build=${1:-build/test}
git ls-files 'src/*.cc' | xargs clang-tidy -p "$build" --quiet
