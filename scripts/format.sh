#!/usr/bin/env bash
# Formats the C++ sources with the repository's .clang-format (clang-format 14).
# Usage: bash scripts/format.sh [--check]
set -euo pipefail
cd "$(dirname "$0")/.."
mode=(-i)
if [ "${1:-}" = "--check" ]; then mode=(--dry-run --Werror); fi
git ls-files 'src/*.h' 'src/*.cc' 'src/*.cu' 'tests/*.h' 'tests/*.cc' | xargs clang-format "${mode[@]}"
