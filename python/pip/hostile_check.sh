#!/bin/bash
# dlmap Python package — the hostile-producer property (python/tests/hostile_property_test.py) on each module a
# `pip install` of the sdist put in a virtual environment (python/pip/user_path_test.sh), one run per module: the tests
# import the module DLMAP_PY_MODULE names and take what its profile does (which capsules it imports, whether it
# publishes the C exchange table) from spec/profiles/ beside python/tests, so each module is judged by its own profile.
# Usage: hostile_check.sh VENV_PYTHON HOSTILE_PROPERTY_TEST VENV_PREFIX MODULE...
#   DLMAP_HOSTILE_EXAMPLES (the environment) sets the examples per property, as for //python:hostile_property_test.
set -euo pipefail
venv_python=$1
test_file=$2
prefix=$3
shift 3
fail() { echo "hostile_check: FAIL: $*" >&2; exit 1; }
tests=$(dirname "$test_file")

for module in "$@"; do
  # The module and profile under test, from the virtual environment and not from a checkout or build output.
  found=$(DLMAP_PY_MODULE=$module PYTHONPATH=$tests "$venv_python" -c \
    'import testing; print(testing.dlmap.__file__, testing.dlmap.profile())') || fail "$module does not import"
  case $found in "$prefix"*) ;; *) fail "$module was imported from $found, not from $prefix" ;; esac
  echo "hostile_check: $module: ${found#"$prefix"}"
  DLMAP_PY_MODULE=$module PYTHONPATH=$tests "$venv_python" -X faulthandler "$test_file" >"hostile_$module.log" 2>&1 ||
    { tail -n 60 "hostile_$module.log" >&2; fail "hostile_property_test on $module"; }
  grep '^hostile_property_test: ' "hostile_$module.log" || fail "no summary from hostile_property_test on $module"
done
