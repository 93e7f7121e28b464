#!/bin/sh
# dlmap raise sites — the spec types them (issue 28): an error's `args:` that loses an argument (and its {name} in the
# message) must fail the build of the sites that raise it, not show a {name} in a message at run time.
# Generates the C outputs from a copy of the default spec, and from the same copy with {extent} dropped from
# dim_negative (raised by src/layout.c), then compiles every core source against each: the first must compile, the
# second must fail, naming dlmap_raise_dim_negative.
# Usage (from the BUILD file): spec_drop_arg_test.sh PYTHON3 GEN_C CONFIG_H SPEC_FILE... -- CORE_SOURCE...
#   CONFIG_H: @dlmap_config's dlmap_config.h (the GPU backend includes it).
set -eu

fail() { echo "FAIL: $*" >&2; exit 1; }
python="$1"; gen_c="$2"; config_h="$3"; shift 3
if [ ! -f "$config_h" ] && [ -f "../${config_h#external/}" ]; then config_h="../${config_h#external/}"; fi
case "$config_h" in /*) ;; *) config_h="$PWD/$config_h" ;; esac
# $(rootpath) of an external file is external/<repo>/…; without legacy external runfiles it lives at ../<repo>/….
if [ ! -x "$python" ] && [ -x "../${python#external/}" ]; then python="../${python#external/}"; fi
case "$python" in /*) ;; *) python="$PWD/$python" ;; esac
# The file arguments as absolute paths, taken where Bazel started the test: they must still name their files after
# the cd to dlmap's root below (in a consumer's `bazel test @dlmap//...` they start external/dlmap/).
absolute() { case "$1" in /*) echo "$1" ;; *) echo "$PWD/$1" ;; esac; }
gen_c=$(absolute "$gen_c")
specs=""
while [ "$1" != -- ]; do specs="$specs $(absolute "$1")"; shift; done
shift
sources=""
for src in "$@"; do case "$src" in *.c) sources="$sources $(absolute "$src")" ;; esac; done
[ -n "$sources" ] || fail "no C sources given"
cd "${DLMAP_ROOT:-.}"
root=$(pwd)
work="${TEST_TMPDIR:-$(mktemp -d)}/spec_drop_arg"
rm -rf "$work"
mkdir -p "$work/spec"

# The copy: same files, same order; errors.yaml is the one edited below.
edited=""
for f in $specs; do
  cp "$f" "$work/spec/$(basename "$f")"
  edited="$edited $work/spec/$(basename "$f")"
done
[ -f "$work/spec/errors.yaml" ] || fail "no errors.yaml among the spec files:$specs"

# The C outputs of one spec into $1: every output gen_c.py offers (emit.C_OUTPUT_PATHS), so every .inc is there.
generate() {
  args=$(PYTHONDONTWRITEBYTECODE=1 "$python" -c '
import sys
sys.path.insert(0, sys.argv[1])
import emit
print(" ".join("--%s %s/%s" % (flag, sys.argv[2], path) for flag, path in emit.C_OUTPUT_PATHS.items()))
' "$(dirname "$gen_c")" "$1")
  for path in $args; do case "$path" in --*) ;; *) mkdir -p "$(dirname "$path")" ;; esac; done
  spec_args=""
  for f in $edited; do spec_args="$spec_args --spec $f"; done
  # shellcheck disable=SC2086
  PYTHONDONTWRITEBYTECODE=1 "$python" "$gen_c" $spec_args $args &&
    # The kernels' C image, made beside the spec's outputs as dlmap_library's <name>_gen_kernels rule makes it.
    kernels="$root/src/backends/kernels" &&
    PYTHONDONTWRITEBYTECODE=1 "$python" "$(dirname "$gen_c")/kernel_image.py" --ptx "$kernels/strided_copy.ptx" \
      --source "$kernels/strided_copy.cu" --header "$kernels/strided_copy_params.h" \
      --out "$1/src/generated/strided_copy_image.inc"
}

# Compiles (syntax only) every core .c against the outputs in $1; the compiler's messages go to $2. 0: all compile.
build() {
  out="$1"; log="$2"; shift 2
  : >"$log"
  status=0
  for src in $sources; do
    ${CC:-cc} -std=c11 -fsyntax-only -I "$root" -I "$root/include" -I "$out/include" -I "$out" \
      -I "$(dirname "$config_h")" "$src" >>"$log" 2>&1 ||
      status=1
  done
  return $status
}

generate "$work/before" || fail "the generator refused the unedited spec copy"
build "$work/before" "$work/before.log" || { cat "$work/before.log" >&2; fail "the core does not compile against the unedited spec"; }

# Drop {extent} from dim_negative's args and message (the spec loader requires both to agree).
"$python" - "$work/spec/errors.yaml" <<'PY'
import re, sys
path = sys.argv[1]
text = open(path, encoding="utf-8").read()
start = text.index("  - id: dim_negative\n")
end = text.index("\n  - id: ", start + 1)
entry = text[start:end]
edited = entry.replace(" {extent}", "").replace("[dim, extent]", "[dim]")
if edited == entry or "{extent}" in edited or "extent]" in edited:
    sys.exit("spec_drop_arg_test: dim_negative's entry does not have the expected args/message:\n" + entry)
open(path, "w", encoding="utf-8").write(text[:start] + edited + text[end:])
PY
generate "$work/after" || fail "the generator refused the edited spec (the test should fail at compile time, not here)"
grep -q 'dlmap_raise_dim_negative(dlmap_error \*err, int64_t dim)' "$work/after/include/dlmap/generated/dlmap_raise.h" ||
  fail "the edited spec's dlmap_raise_dim_negative does not take (err, dim)"
if build "$work/after" "$work/after.log"; then
  fail "the core still compiles after dim_negative lost {extent}: a raise site is not typed by the spec"
fi
grep -q dlmap_raise_dim_negative "$work/after.log" || {
  cat "$work/after.log" >&2
  fail "the build failed, but not at a dlmap_raise_dim_negative site"
}
echo "PASS: dropping {extent} from dim_negative's args fails the build:"
grep -m 3 -E 'error:' "$work/after.log" || true
