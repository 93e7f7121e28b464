#!/bin/sh
# The main job: build the dlmap CLI on the embedded default spec and run it (default: `devices`, then
# `explain 4`). Any arguments are passed to the CLI instead, e.g. `tools/run.sh explain kDLCUDAHost`.
set -eu
cd "$(dirname "$0")/.."
tools/install_deps.sh
bazel build //tools:dlmap
if [ "$#" -gt 0 ]; then
  exec bazel-bin/tools/dlmap "$@"
fi
bazel-bin/tools/dlmap devices
echo
bazel-bin/tools/dlmap explain 4
