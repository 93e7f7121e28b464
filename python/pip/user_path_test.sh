#!/bin/bash
# dlmap Python package — the user's path from the sdist alone (//python/pip:user_path_test; the steps README's Python
# section gives): a copy of the sdist in a scratch directory, a fresh `python3 -m venv --system-site-packages` (it sees
# Debian's setuptools, wheel, NumPy and PyYAML), `pip install --no-index --no-build-isolation --no-cache-dir` with no
# pip configuration (offline: nothing may come from an index), then from another scratch directory, with no PYTHONPATH:
#   python -m dlmap.check producer 'numpy:arange(6.0)'   and   ... consumer numpy:from_dlpack
#   import dlmap; dlmap.from_dlpack(numpy.arange(3))     (the jax profile) and dlmap_array_api (the array_api profile)
#   dlmap-check --help (the console script), and the installed metadata.
# The build is warning-clean under the Bazel build's -Wall -Wextra, with -fno-wrapv after Python's own -fwrapv (issue
# 56), and the hostile-producer property (python/tests/hostile_property_test.py, hostile=PATH) holds for both
# installed modules, each judged by its own profile (DLMAP_PY_MODULE picks the module; the tests read its profile).
# pip unpacks the sdist into a directory of its own and builds there, so a file the build needs and the sdist lacks
# fails this test (missing=PATH: the same with PATH removed from a copy of the sdist, which must then fail to install,
# naming PATH).
# Usage: user_path_test.sh PYTHON SDIST [missing=PATH | hostile=PATH]
set -euo pipefail
python=$1
sdist=$(cd "$(dirname "$2")" && pwd)/$(basename "$2")
here=$(cd "$(dirname "$0")" && pwd)  # beside this script: compile_flags_check.sh, hostile_check.sh
missing='' hostile=''
case ${3:-} in missing=*) missing=${3#missing=} ;; hostile=*) hostile=$PWD/${3#hostile=} ;; esac
fail() { echo "user_path_test: FAIL: $*" >&2; exit 1; }

scratch=$(mktemp -d "${TEST_TMPDIR:-/tmp}/dlmap_pip.XXXXXX")
trap 'rm -rf "$scratch"' EXIT
# Nothing of the caller's pip or Python configuration (an index, find-links, a PYTHONPATH into a checkout) applies.
unset PYTHONPATH PYTHONHOME PYTHONSTARTUP VIRTUAL_ENV
for variable in $(env | sed -n 's/^\(PIP_[A-Z_]*\)=.*/\1/p'); do unset "$variable"; done
export PIP_CONFIG_FILE=/dev/null PIP_DISABLE_PIP_VERSION_CHECK=1 HOME=$scratch/home PYTHONDONTWRITEBYTECODE=1
mkdir -p "$HOME"

# The version the sdist says (PKG-INFO), and its file name as a release names it.
top=$(tar -tzf "$sdist" | sed -n 1p | cut -d/ -f1)
version=$(tar -xzOf "$sdist" "$top/PKG-INFO" | sed -n 's/^Version: //p')
[ "$top" = "dlmap-$version" ] || fail "the sdist's top directory is $top, not dlmap-$version"
name=dlmap-$version.tar.gz
if [ -n "$missing" ]; then
  mkdir "$scratch/edit"
  tar -xzf "$sdist" -C "$scratch/edit"
  [ -e "$scratch/edit/$top/$missing" ] || fail "the sdist has no $missing to leave out"
  rm -r "${scratch:?}/edit/$top/$missing"
  tar -czf "$scratch/$name" -C "$scratch/edit" "$top"
else
  cp "$sdist" "$scratch/$name"
fi

"$python" -m venv --system-site-packages "$scratch/venv" ||
  fail "python3 -m venv failed (Debian: apt-get install python3-venv; tools/install_deps.sh does)"
venv_python=$scratch/venv/bin/python
cd "$scratch"
begin=$(date +%s)
status=0
# -v: the compiler's command lines and diagnostics go to install.log, where the flags are checked below.
"$venv_python" -m pip install -v --no-index --no-build-isolation --no-cache-dir "$name" >"$scratch/install.log" 2>&1 ||
  status=$?
if [ -n "$missing" ]; then
  [ "$status" -ne 0 ] || fail "the sdist without $missing installed: nothing checks that the build has its files"
  grep -q "$(basename "$missing")" "$scratch/install.log" || {
    tail -n 30 "$scratch/install.log" >&2
    fail "the install without $missing failed without naming it"
  }
  echo "user_path_test: without $missing, pip install fails and names it:"
  grep -m 3 "$(basename "$missing")" "$scratch/install.log"
  exit 0
fi
[ "$status" -eq 0 ] || { tail -n 60 "$scratch/install.log" >&2; fail "pip install $name failed (exit $status)"; }
echo "user_path_test: pip install $name: $(($(date +%s) - begin)) s"
"$here/compile_flags_check.sh" "$scratch/install.log" || fail "the module's compile flags or warnings"

# Outside the checkout and outside the unpacked sdist.
mkdir "$scratch/elsewhere"
cd "$scratch/elsewhere"
where=$("$venv_python" -c 'import dlmap, dlmap_array_api; print(dlmap.__file__); print(dlmap_array_api.__file__)')
case $where in "$scratch/venv/"*) ;; *) fail "dlmap was imported from $where, not from the virtual environment" ;; esac

"$venv_python" -m dlmap.check producer 'numpy:arange(6.0)' >producer.md || fail "dlmap.check producer exited $?"
grep -q '^### producer: `numpy:arange(6.0)`$' producer.md || fail "no producer report: $(head -c 400 producer.md)"
grep -qE '^standard: [0-9]+ rows pass, [0-9]+ fail' producer.md || fail "the producer report has no counts"
sed -n 5p producer.md

"$venv_python" -m dlmap.check consumer numpy:from_dlpack >consumer.md || fail "dlmap.check consumer exited $?"
grep -q '^### consumer: `numpy:from_dlpack`$' consumer.md || fail "no consumer report: $(head -c 400 consumer.md)"
# NumPy never crashes on a crafted producer: a crashed row here is the installed module or checker misbehaving.
! grep -q 'crashed' consumer.md || fail "a crafted producer crashed numpy.from_dlpack: $(grep -m 1 crashed consumer.md)"
sed -n 5p consumer.md

"$venv_python" - <<'EOF' || fail "dlmap.from_dlpack(numpy.arange(3)) or the Array API module failed"
import numpy
import dlmap
import dlmap_array_api

a = dlmap.from_dlpack(numpy.arange(3))
print("dlmap.from_dlpack(numpy.arange(3)) ->", a)
assert dlmap.profile() == "jax", dlmap.profile()
assert numpy.from_dlpack(a).tolist() == [0, 1, 2]
b = dlmap_array_api.from_dlpack(numpy.arange(3))
assert dlmap_array_api.profile() == "array_api", dlmap_array_api.profile()
assert numpy.from_dlpack(b).tolist() == [0, 1, 2]
# Both modules in one interpreter, each over its own library and tables, each naming itself.
assert (type(a).__module__, type(b).__module__) == ("dlmap", "dlmap_array_api"), (type(a), type(b))
print("dlmap_array_api.from_dlpack(numpy.arange(3)) ->", b)
EOF

# The array_api module judged by its own profile: every row passes (as //python/check:checker_array_api_test has it).
"$venv_python" -m dlmap.check producer 'dlmap_array_api:empty((2, 3))' --profile array_api --strict >array_api.md ||
  fail "dlmap_array_api's producer rows fail under its array_api profile: $(grep -m 3 FAIL array_api.md)"
# Its C exchange API table judged function by function, its deleters called every way (issue 67).
grep -qE '^\| E7 \| current_work_stream' array_api.md || fail "no C exchange API rows in: $(head -c 400 array_api.md)"
[ "$(grep -cE '^\| L[1-8] \| .* \| returned \|' array_api.md)" -eq 8 ] ||
  fail "deleter rows: $(grep '^| L' array_api.md)"
# Every pair of the installed libraries: NumPy and dlmap as producers and consumers.
"$venv_python" -m dlmap.check matrix numpy dlmap >matrix.md || fail "dlmap.check matrix exited $?"
grep -qE '^\| dlmap \| [0-9]+ ok' matrix.md || fail "no matrix summary: $(head -c 600 matrix.md)"
sed -n 1p matrix.md

# The console script and a help that stands alone: the commands, the options, the output, the exit statuses.
"$scratch/venv/bin/dlmap-check" --help >help.txt || fail "dlmap-check --help exited $?"
for word in "usage: dlmap-check" "producer TARGET" "consumer TARGET" "matrix LIB" "--profile" "--strict" "--timeout" \
  "exit status" "array_api"; do
  grep -qF -- "$word" help.txt || fail "dlmap-check --help does not mention '$word'"
done
"$venv_python" -m dlmap.check --help | grep -qF "usage: python3 -m dlmap.check" || fail "python -m dlmap.check --help"

# The metadata an index shows.
"$venv_python" - "$version" <<'EOF' || fail "the installed metadata"
import importlib.metadata as metadata
import sys

md = metadata.metadata("dlmap")
assert md["Name"] == "dlmap" and md["Version"] == sys.argv[1], (md["Name"], md["Version"])
licence = md.get("License-Expression") or md.get("License")
assert licence == "Apache-2.0", licence
assert md["Requires-Python"] == ">=3.11", md["Requires-Python"]
assert any(c.startswith("Programming Language :: Python :: 3") for c in md.get_all("Classifier")), "classifiers"
assert any(r.startswith("PyYAML") for r in md.get_all("Requires-Dist") or []), "Requires-Dist: PyYAML"
description = md.get_payload() or md.get("Description") or ""
assert "## Python" in description and "pip install" in description, "the long description is README's Python part"
sdist = "dlmap-%s.tar.gz" % sys.argv[1]
assert "pip install " + sdist in description, "README's Python section does not install %s" % sdist
scripts = [e for e in metadata.entry_points(group="console_scripts") if e.name == "dlmap-check"]
assert scripts and scripts[0].value == "dlmap.check.__main__:console", scripts
print("metadata: dlmap %s, %s, Python %s, %d classifiers, dlmap-check" % (
    md["Version"], licence, md["Requires-Python"], len(md.get_all("Classifier"))))
EOF
if [ -n "$hostile" ]; then
  "$here/hostile_check.sh" "$venv_python" "$hostile" "$scratch/venv/" dlmap dlmap_array_api ||
    fail "the hostile-producer property on an installed module"
fi
echo "user_path_test: PASS"
