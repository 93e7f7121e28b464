#!/bin/sh
# dlmap GPU check — runs gpu/yaml_standin_test.py with the configured python3 (which has PyYAML) and the generator on
# PYTHONPATH. Usage: yaml_standin_test.sh PYTHON3 TEST_FILE YAML_FILE...; paths are runfiles paths.
set -eu
python="$1"
test_file="$2"
shift 2
# $(rootpath) of an external file is external/<repo>/…; without legacy external runfiles it lives at ../<repo>/….
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then
  python="../${python#external/}"
fi
export PYTHONPATH="$(pwd)/codegen${PYTHONPATH:+:$PYTHONPATH}"
export PYTHONDONTWRITEBYTECODE=1
exec "$python" -B "$test_file" "$@"
