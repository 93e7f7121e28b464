#!/bin/bash
# dlmap docs — runs codegen/gen_docs.py from Bazel runfiles: --out (//docs:update) or --check (docs_fresh_test).
# Usage (arguments come from docs/BUILD): gen_docs.sh --out|--check SPEC_LIST DIR [SPEC_LIST DIR ...]
#   SPEC_LIST: runfiles path of a file naming the spec files (runfiles paths), one a line, in order;
#   DIR: where under docs/ that spec's pages live (. for the default profile).
set -euo pipefail

if [[ $# -lt 3 || $(( $# % 2 )) -ne 1 ]]; then
  echo "usage: gen_docs.sh --out|--check SPEC_LIST DIR [SPEC_LIST DIR ...]" >&2
  exit 2
fi
mode=$1
shift

# The runfiles tree: $TEST_SRCDIR under `bazel test`, $RUNFILES_DIR or <script>.runfiles under `bazel run`.
self=$0
[[ $self == /* ]] || self=$PWD/$self
if [[ -n "${TEST_SRCDIR:-}" ]]; then
  runfiles=$TEST_SRCDIR
elif [[ -n "${RUNFILES_DIR:-}" ]]; then
  runfiles=$RUNFILES_DIR
elif [[ -d "$self.runfiles" ]]; then
  runfiles=$self.runfiles
else
  echo "gen_docs.sh: cannot find the runfiles; run it with bazel run //docs:update or bazel test //docs:all" >&2
  exit 2
fi
# Bazel starts the script in the main repository's runfiles directory (runfiles/dlmap under WORKSPACE,
# runfiles/_main under bzlmod).
# dlmap's root: where Bazel starts the command, or under it when a consumer runs `bazel test @dlmap//...`.
started=$PWD
workspace=$PWD/${DLMAP_ROOT:-.}
[[ -d $workspace/codegen ]] || { echo "gen_docs.sh: run it with bazel run //docs:update or bazel test //docs:all" >&2; exit 2; }

# @dlmap_config//:tools/python3 (python3 with PyYAML), under each runfiles layout of external repositories: dlmap_config
# (WORKSPACE), _main~dlmap_config~dlmap_config (bzlmod, Bazel 7), +dlmap_config+dlmap_config (Bazel 8), or external/.
python=""
for candidate in "$runfiles"/dlmap_config "$runfiles"/*[~+]dlmap_config "$workspace"/external/dlmap_config; do
  if [[ -e $candidate/tools/python3 ]]; then python=$candidate/tools/python3; break; fi
done
[[ -n $python ]] || { echo "gen_docs.sh: @dlmap_config//:tools/python3 is not in the runfiles" >&2; exit 2; }

# Run from the workspace root of the runfiles, so spec errors name files as spec/devices.yaml.
cd "$workspace"
case $mode in
  --out)
    if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
      echo "gen_docs.sh: --out rewrites the source tree; run it with: bazel run //docs:update" >&2
      exit 2
    fi
    root=$BUILD_WORKSPACE_DIRECTORY/docs
    ;;
  --check)
    root=docs
    ;;
  *)
    echo "gen_docs.sh: unknown mode '$mode' (expected --out or --check)" >&2
    exit 2
    ;;
esac

status=0
while [[ $# -gt 0 ]]; do
  spec_list=$1 sub=$2
  shift 2
  specs=()
  [[ $spec_list == /* ]] || spec_list=$started/$spec_list
  while IFS= read -r spec; do
    # Paths from dlmap's root (a consumer's build names them external/<repo>/…).
    if [[ -n $spec ]]; then specs+=(--spec "${spec#external/*/}"); fi
  done < "$spec_list"
  "$python" codegen/gen_docs.py "${specs[@]}" "$mode" "$root/$sub" || status=1
done
exit $status
