#!/bin/sh
# The main job: build the dlmap CLI on the default spec (profile jax) and run it (default: `devices`,
# `explain 13` and `explain 20` — what JAX's contract does with kDLCUDAManaged and kDLTPUHost — then the
# export/import round-trip `demo`). Any arguments are passed to the CLI instead,
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
bazel-bin/tools/dlmap explain 13
echo
bazel-bin/tools/dlmap explain 20
echo
bazel-bin/tools/dlmap demo
