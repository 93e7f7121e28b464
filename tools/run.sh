#!/bin/sh
# The main job: build the dlmap CLI on the embedded default spec and run it (default: `devices`,
# `explain 4`, then the export/import round-trip `demo`). Any arguments are passed to the CLI instead,
# e.g. `tools/run.sh explain kDLCUDAHost`.
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
echo
bazel-bin/tools/dlmap demo
