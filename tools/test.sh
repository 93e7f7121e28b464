#!/bin/sh
# Every test: generator unit tests, C/C++ tests, export/import tables, the spec-extension build, the
# CLI, the docs staleness check, the distributable archive, README's Python commands, and the downstream example
# workspace.
# Extra arguments go to `bazel test` (e.g. --config=asan).
set -eu
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel test "$@" //...
# README's Python quick start, run as written (a plain build, so only when no flags such as --config=asan are given).
[ $# -gt 0 ] || tools/readme_python_check.sh
# The downstream example is a separate workspace that consumes dlmap through local_repository.
(cd examples/downstream && bazel test "$@" //...)
