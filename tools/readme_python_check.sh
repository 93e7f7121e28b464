#!/bin/sh
# dlmap README check — runs README.md's Python quick start exactly as written (its `bazel build //python:…`
# command, then its `PYTHONPATH=… /usr/bin/python3 -c "…"` line) from the checkout root; fails if either fails.
# tools/test.sh runs it. Usage: tools/readme_python_check.sh [bazel flags for the build...]
set -eu
cd "$(dirname "$0")/.."
section=$(sed -n '/^## Python$/,/^## /p' README.md)
# The backquotes are literal: README marks its commands with them.
# shellcheck disable=SC2016
build=$(printf '%s\n' "$section" | grep -o '`bazel build //python:[^`]*`' | head -n 1 | tr -d '`')
# shellcheck disable=SC2016
run=$(printf '%s\n' "$section" | grep -o '`PYTHONPATH=[^`]*`' | head -n 1 | tr -d '`')
if [ -z "$build" ] || [ -z "$run" ]; then
  echo "readme_python_check: README.md's Python section lost its build or run command" >&2
  exit 1
fi
echo "readme_python_check: $build $*"
# shellcheck disable=SC2086
sh -c "$build \"\$@\"" sh "$@"
echo "readme_python_check: $run"
sh -c "$run"
