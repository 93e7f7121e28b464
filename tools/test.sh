#!/bin/sh
# Every test: generator unit tests, C/C++ tests, export/import tables, the spec-extension build, the
# CLI, the docs staleness check, the distributable archive, the Python sdist (//python/pip: pip install into a fresh
# venv offline, the checker and the module from outside the checkout), README's Python commands, the downstream example
# workspace, and the drill (tools/drill/drill.sh: the README's recipes applied to a scratch copy, the whole suite
# green after each).
# Extra arguments go to `bazel test` (e.g. --config=asan); the drill runs the plain build.
set -eu
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel test "$@" //...
# README's Python quick start, run as written (a plain build, so only when no flags such as --config=asan are given).
[ $# -gt 0 ] || tools/readme_python_check.sh
# dlmap as a consumer takes it: the release archive in the downstream example, and dlmap's suite from there.
tools/downstream.sh
# DLMAP_TEST_DRILL=0 leaves the drill out (.ci/run runs it in its Debian testing userland instead of twice).
[ "${DLMAP_TEST_DRILL:-1}" = 0 ] || tools/drill/drill.sh
