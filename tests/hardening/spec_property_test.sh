#!/bin/sh
# dlmap hardening — runs spec_property_test.py under the generator's interpreter (Debian's python3, with python3-hypothesis).
# Usage (from Bazel): spec_property_test.sh PYTHON_WRAPPER spec_property_test.py
set -eu
case "$1" in /*) python="$1" ;; *) python="$PWD/$1" ;; esac
script="$PWD/$2"
root=$(cd "${DLMAP_ROOT:-.}" && pwd)  # dlmap's files; a consumer's `bazel test @dlmap//...` starts in its own runfiles
if ! "$python" -c "import hypothesis, yaml" 2>/dev/null; then
  # The detected interpreter lacks hypothesis (e.g. a pyenv python picked at configure time): Debian's has it.
  if /usr/bin/python3 -c "import hypothesis, yaml" 2>/dev/null; then
    python=/usr/bin/python3
  else
    echo "spec_property_test: python3-hypothesis is not installed (apt-get install python3-hypothesis)" >&2
    exit 1
  fi
fi
# hypothesis may write a .hypothesis/ cache into the working directory: keep it out of the runfiles tree.
cd "${TEST_TMPDIR:-$(mktemp -d)}"
DLMAP_ROOT="$root" exec "$python" -B "$script"
