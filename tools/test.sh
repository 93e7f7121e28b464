#!/bin/sh
# Every test: generator unit tests, C/C++ tests, the spec-extension build, the CLI and the docs
# staleness check. Extra arguments go to `bazel test` (e.g. --config=asan).
set -eu
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel test "$@" //...
