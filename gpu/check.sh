#!/usr/bin/env bash
# dlmap GPU check — one command on a machine with an NVIDIA GPU and the CUDA toolkit, from a plain checkout: builds
# what it needs (the spec's tables with this machine's Python, and PyYAML or gpu/yaml_standin; the name lookups with
# re2c or gpu/re2c_standin.py; dlmap with gcc; the check program with the toolkit whose runtime this driver can start;
# the `dlmap` Python module for this interpreter), then runs the C device checks (gpu/check_main.c) and the Python
# real-client checks with JAX, PyTorch and CuPy (python/gpu_check.py), then the conformance checker on their CUDA
# arrays and from_dlpack and on dlmap's own (python/check/gpu_peers.py). One line per check ("PASS|FAIL|SKIP|INFO  …"),
# a verdict line last. Well under 5 minutes on one H200.
#
# Usage: gpu/check.sh                 build, then run every check
#        gpu/check.sh --build-only    build only (no GPU needed; CI runs this from a clean checkout)
#        gpu/check.sh --toolkit       only say which toolkit's runtime the driver can start (or why none)
# Exit: 0 pass, 1 a check failed, 2 no usable GPU (the reason is printed: no driver, no device, or a driver too old
#       for every toolkit here), 3 cannot build.
# Environment: CUDA_HOME (a toolkit to try first), NVCC_ARCH (default: device 0's, else 90), CC (default gcc),
#              PYTHON (default python3), RE2C (default re2c), DLMAP_CHECK_BUILD (default gpu/build),
#              DLMAP_CHECK_TIMEOUT (seconds per check program, default 200), DLMAP_CHECK_STANDINS=1 (use the PyYAML and
#              re2c stand-ins even where the real tools exist; CI does, to keep them honest), DLMAP_CHECK_TOOLKITS
#              (colon-separated toolkit roots to try, in order, instead of searching).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DLMAP_CHECK_BUILD:-$ROOT/gpu/build}
CC=${CC:-gcc}
PYTHON=${PYTHON:-python3}
RE2C=${RE2C:-re2c}
MODE=${1:-run}
JOBS=$(nproc 2>/dev/null || echo 2)
STARTED=$(date +%s)

line() { local status=$1; shift; printf '%-4s  %s\n' "$status" "$*"; }
fail_build() { line FAIL "gpu/check.sh cannot build: $*" >&2; exit 3; }
no_gpu() { line SKIP "gpu/check.sh: no usable NVIDIA GPU here: $*; nothing was checked" >&2; exit 2; }

case "$MODE" in
  run | --build-only | --toolkit) ;;
  *) echo "usage: gpu/check.sh [--build-only | --toolkit]" >&2; exit 3 ;;
esac
cd "$ROOT"
mkdir -p "$BUILD"
command -v "$CC" >/dev/null || fail_build "no C compiler ($CC)"
command -v "$PYTHON" >/dev/null || fail_build "no Python 3 ($PYTHON) to run the spec generator"

# Runs the given commands (one per line of stdin) JOBS at a time; fails when any fails.
parallel() {
  local pids=() cmd status=0
  while IFS= read -r cmd; do
    bash -c "$cmd" </dev/null &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return "$status"
}

# ---- the toolkit: every CUDA root with nvcc and a libcudart, the first one whose runtime the driver starts ----------
cuda_libdir() {
  local dir
  for dir in "$1/lib64" "$1/targets/x86_64-linux/lib" "$1/lib"; do
    if ls "$dir"/libcudart.so.* >/dev/null 2>&1; then echo "$dir"; return 0; fi
  done
  return 1
}
path_nvcc=$(command -v nvcc || true)
ROOTS=() seen=" "
if [ -n "${DLMAP_CHECK_TOOLKITS:-}" ]; then
  IFS=: read -r -a candidates <<<"$DLMAP_CHECK_TOOLKITS"
else
  candidates=(${CUDA_HOME:+"$CUDA_HOME"} ${path_nvcc:+"$(dirname "$(readlink -f "$path_nvcc")")/.."} /usr/local/cuda
    $(for d in /usr/local/cuda-* /opt/cuda; do if [ -d "$d" ]; then echo "$d"; fi; done | sort -V -r))
fi
for root in "${candidates[@]}"; do
  real=$(readlink -f "$root" 2>/dev/null || true)
  [ -n "$real" ] && [ -x "$real/bin/nvcc" ] && cuda_libdir "$real" >/dev/null || continue
  case "$seen" in *" $real "*) continue ;; esac
  seen="$seen$real "
  ROOTS+=("$real")
done

CUDA_ROOT="" LIBDIR="" SONAME="" ARCH=${NVCC_ARCH:-}
cuda_version() { echo "$(($1 / 1000)).$(($1 % 1000 / 10))"; }  # 12080 -> 12.8
# The runtime's soname in a toolkit's libdir (libcudart.so.12), else its plain name.
pick_soname() {
  local name
  name=$(cd "$1" && ls libcudart.so.* 2>/dev/null | grep -E '^libcudart\.so\.[0-9]+$' | sort -V | tail -1 || true)
  echo "${name:-libcudart.so}"
}
mkdir -p "$BUILD/bin"
"$CC" -std=c11 -O1 -Wall -Wextra -o "$BUILD/bin/check_probe" gpu/check_probe.c -ldl || fail_build "compiling gpu/check_probe.c failed"
if [ "$MODE" != --build-only ]; then
  [ "${#ROOTS[@]}" -gt 0 ] || fail_build "no CUDA toolkit (bin/nvcc with libcudart) in \$CUDA_HOME, on PATH or under /usr/local/cuda*"
  refused=() driver=0 too_old=0
  for root in "${ROOTS[@]}"; do
    libdir=$(cuda_libdir "$root")
    soname=$(pick_soname "$libdir")
    answer=$("$BUILD/bin/check_probe" "$libdir/$soname")
    status=$(sed -n 's/^status=\(-\{0,1\}[0-9]*\) .*/\1/p' <<<"$answer")
    devices=$(sed -n 's/.* devices=\([0-9]*\) .*/\1/p' <<<"$answer")
    runtime=$(sed -n 's/.* runtime=\([0-9]*\) .*/\1/p' <<<"$answer")
    driver=$(sed -n 's/.* driver=\([0-9]*\) .*/\1/p' <<<"$answer")
    arch=$(sed -n 's/.* arch=\([0-9]*\) .*/\1/p' <<<"$answer")
    text=$(sed -n 's/.* text=//p' <<<"$answer")
    if [ "$status" = 0 ] && [ "${devices:-0}" -gt 0 ]; then
      CUDA_ROOT=$root LIBDIR=$libdir SONAME=$soname
      [ -n "$ARCH" ] || ARCH=$arch
      line INFO "toolkit: $root (CUDA runtime $(cuda_version "$runtime"), $soname), $devices device(s), sm_$arch;" \
        "the driver supports CUDA $(cuda_version "$driver")"
      break
    fi
    [ "$status" = 35 ] && too_old=1
    refused+=("$root (CUDA runtime $(cuda_version "$runtime")): $text (error $status)")
    line INFO "toolkit refused: ${refused[-1]}"
  done
  if [ -z "$CUDA_ROOT" ]; then
    if [ "$driver" = 0 ]; then
      no_gpu "no NVIDIA driver (libcuda.so.1 cannot be loaded)"
    elif [ "$too_old" = 1 ]; then
      no_gpu "the NVIDIA driver supports CUDA up to $(cuda_version "$driver"), older than every toolkit" \
        "found (${ROOTS[*]}): install a toolkit for CUDA $((driver / 1000)).x or older (CUDA_HOME=...), or a newer driver"
    else
      no_gpu "${refused[0]}"
    fi
  fi
elif [ "${#ROOTS[@]}" -gt 0 ]; then
  CUDA_ROOT=${ROOTS[0]} LIBDIR=$(cuda_libdir "$CUDA_ROOT") SONAME=$(pick_soname "$LIBDIR")
fi
ARCH=${ARCH:-90}
[ "$ARCH" -ge 10 ] 2>/dev/null || ARCH=90
[ "$MODE" = --toolkit ] && exit 0

# ---- the spec's tables: codegen/ with PyYAML or its stand-in, the name lookups with re2c or its stand-in ----------
GEN=$BUILD/generated
rm -rf "$GEN"
mkdir -p "$GEN/include/dlmap/generated" "$GEN/src/generated"
PYPATH=${PYTHONPATH:-}
if [ "${DLMAP_CHECK_STANDINS:-0}" = 1 ] || ! "$PYTHON" -c 'import yaml' 2>/dev/null; then
  PYPATH=$ROOT/gpu/yaml_standin${PYPATH:+:$PYPATH}
  yaml_with="the PyYAML stand-in gpu/yaml_standin"
else
  yaml_with="PyYAML $("$PYTHON" -c 'import yaml; print(yaml.__version__)')"
fi
gen_args=()
for name in $(cd codegen && PYTHONPATH=$PYPATH "$PYTHON" -B -c 'import emit; print(" ".join(emit.C_OUTPUTS))'); do
  case "$name" in
    spec_h) gen_args+=(--spec_h "$GEN/include/dlmap/generated/dlmap_spec.h") ;;
    *_inc) gen_args+=("--$name" "$GEN/src/generated/${name%_inc}.inc") ;;
    *_re) gen_args+=("--$name" "$GEN/src/generated/${name%_re}.re.inc") ;;
    *) fail_build "unexpected generator output $name" ;;
  esac
done
specs=()
# The Array API profile: the device checks exchange versioned tensors with stream ordering.
for spec in spec/versions.yaml spec/platforms.yaml spec/devices.yaml spec/dtypes.yaml spec/errors.yaml \
  spec/profiles/array_api.yaml; do
  specs+=(--spec "$spec")
done
PYTHONPATH=$PYPATH "$PYTHON" -B codegen/gen_c.py "${specs[@]}" "${gen_args[@]}" || fail_build "the generator failed"
if [ "${DLMAP_CHECK_STANDINS:-0}" != 1 ] && command -v "$RE2C" >/dev/null; then
  "$RE2C" -W -Werror --no-generation-date --no-version -i -I "$GEN/src/generated" -o "$GEN/src/generated/name_lookup.c" \
    src/name_lookup.re || fail_build "re2c failed"
  re2c_with="re2c"
else
  "$PYTHON" -B gpu/re2c_standin.py -I "$GEN/src/generated" -o "$GEN/src/generated/name_lookup.c" src/name_lookup.re ||
    fail_build "gpu/re2c_standin.py failed"
  re2c_with="the re2c stand-in gpu/re2c_standin.py"
fi
line INFO "spec tables: $("$PYTHON" -c 'import sys; print(sys.executable, sys.version.split()[0])') with $yaml_with; name lookups with $re2c_with"

# ---- dlpack.h: the system's, else one a framework on this Python ships ----------------------------------------------
# The first candidate dlmap compiles with (a framework's copy may differ from the upstream header).
DLPACK="" tried_dlpack=""
mkdir -p "$BUILD/dlpack/dlpack"
while IFS= read -r candidate; do
  [ -n "$candidate" ] || continue
  ln -sf "$candidate" "$BUILD/dlpack/dlpack/dlpack.h"
  if "$CC" -std=c11 -fsyntax-only -I"$ROOT" -I"$GEN" -I"$GEN/include" -I"$ROOT/include" -I"$BUILD/dlpack" \
    src/export.c src/import.c 2>/dev/null; then
    DLPACK=$candidate
    break
  fi
  tried_dlpack="$tried_dlpack $candidate"
done < <("$PYTHON" gpu/check_env.py dlpack || true)
[ -n "$DLPACK" ] || fail_build "no <dlpack/dlpack.h> dlmap compiles with${tried_dlpack:+ (tried$tried_dlpack)}: install" \
  "libdlpack-dev, or a framework that ships one (PyTorch, CuPy) for $PYTHON, or set DLPACK_INCLUDE_DIR"

# dlmap_config.h as dlmap_configure.bzl writes it: the toolkit's runtime as one more place for the backend to look.
mkdir -p "$BUILD/config"
cat >"$BUILD/config/dlmap_config.h" <<EOF
/* Written by gpu/check.sh: what the GPU check build found. */
#ifndef DLMAP_CONFIG_H_
#define DLMAP_CONFIG_H_
#define DLMAP_HAS_CUDA $([ -n "$CUDA_ROOT" ] && echo 1 || echo 0)
#define DLMAP_HAS_ROCM 0
#define DLMAP_CUDA_LIBDIR "$LIBDIR"
#define DLMAP_CUDART_SONAME "$SONAME"
#define DLMAP_CUDA_VERSION_STR ""
#define DLMAP_ROCM_LIBDIR ""
#define DLMAP_AMDHIP_SONAME ""
#define DLMAP_ROCM_VERSION_STR ""
#define DLMAP_DLPACK_VERSION_STR ""
#define DLMAP_DLPACK_HEADER "$DLPACK"
#endif
EOF

# ---- build: dlmap (position-independent, for the program and the Python module), the module, the check program ------
INCLUDES=(-I"$ROOT" -I"$GEN" -I"$GEN/include" -I"$ROOT/include" -I"$BUILD/config" -I"$BUILD/dlpack")
CFLAGS=(-std=c11 -O2 -g -fPIC -Wall -Wextra -pedantic)
rm -rf "$BUILD/obj"
mkdir -p "$BUILD/obj/lib" "$BUILD/obj/python" "$BUILD/obj/check"
for source in src/*.c src/backends/*.c "$GEN/src/generated/name_lookup.c"; do
  printf '%q ' "$CC" "${CFLAGS[@]}" "${INCLUDES[@]}" -c "$source" -o "$BUILD/obj/lib/$(basename "$source" .c).o"
  echo
done | parallel || fail_build "compiling dlmap failed"
rm -f "$BUILD/libdlmap.a"
ar rcs "$BUILD/libdlmap.a" "$BUILD"/obj/lib/*.o
line INFO "built $BUILD/libdlmap.a against $DLPACK"

PY_INCLUDE=$("$PYTHON" gpu/check_env.py python-include || true)
PY_MODULE=""
if [ -n "$PY_INCLUDE" ]; then
  for source in python/*.c; do
    printf '%q ' "$CC" "${CFLAGS[@]}" -fvisibility=hidden "${INCLUDES[@]}" -I"$PY_INCLUDE" -c "$source" \
      -o "$BUILD/obj/python/$(basename "$source" .c).o"
    echo
  done | parallel || fail_build "compiling the Python module failed"
  mkdir -p "$BUILD/python"
  "$CC" -shared -o "$BUILD/python/dlmap.so" "$BUILD"/obj/python/*.o "$BUILD/libdlmap.a" \
    -Wl,--version-script="$ROOT/python/dlmap.lds" -ldl -pthread || fail_build "linking the Python module failed"
  PY_MODULE=$BUILD/python/dlmap.so
  line INFO "built $PY_MODULE for $("$PYTHON" -c 'import sys; print(sys.executable)')"
  # The conformance checker's package (python/check/BUILD lays it out the same way): the module as dlmap/__init__.so,
  # the checker as dlmap/check/, the spec it reads as dlmap/check/spec/.
  CHECK_PKG=$BUILD/check_pkg
  rm -rf "$CHECK_PKG"
  mkdir -p "$CHECK_PKG/dlmap/check/spec/profiles"
  cp "$PY_MODULE" "$CHECK_PKG/dlmap/__init__.so"
  for source in python/check/*.py tests/spec_facts/spec_facts.py; do
    case $source in *_test.py) ;; *) cp "$source" "$CHECK_PKG/dlmap/check/" ;; esac
  done
  cp spec/*.yaml "$CHECK_PKG/dlmap/check/spec/"
  cp spec/profiles/*.yaml "$CHECK_PKG/dlmap/check/spec/profiles/"
  line INFO "assembled the dlmap.check package in $CHECK_PKG"
else
  line SKIP "Python module: no Python.h for $PYTHON (its headers are not installed); the Python checks cannot run"
fi

CHECK=""
if [ -n "$CUDA_ROOT" ]; then
  NVCC=$CUDA_ROOT/bin/nvcc
  # The device's architecture where this nvcc knows it, else the newest it knows below it as PTX (the driver JITs).
  codes=$("$NVCC" --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9]*\)$/\1/p' | sort -n || true)
  gencode="arch=compute_$ARCH,code=[sm_$ARCH,compute_$ARCH]"
  if [ -n "$codes" ] && ! grep -qx "$ARCH" <<<"$codes"; then
    below=$(awk -v a="$ARCH" '$1 <= a' <<<"$codes" | tail -1)
    [ -n "$below" ] || below=$(head -1 <<<"$codes")
    gencode="arch=compute_$below,code=compute_$below"
    line INFO "nvcc does not know sm_$ARCH: PTX for compute_$below"
  fi
  {
    printf '%q ' "$CC" "${CFLAGS[@]}" "${INCLUDES[@]}" -c gpu/check_ordering.c -o "$BUILD/obj/check/check_ordering.o"
    echo
    printf '%q ' "$CC" "${CFLAGS[@]}" "${INCLUDES[@]}" -I"$CUDA_ROOT/include" -c gpu/check_main.c \
      -o "$BUILD/obj/check/check_main.o"
    echo
    printf '%q ' "$NVCC" -O2 -std=c++17 -Xcompiler -fPIC -gencode "$gencode" -c gpu/check_kernels.cu \
      -o "$BUILD/obj/check/check_kernels.o"
    echo
  } | parallel || fail_build "compiling the check program failed"
  # The shared runtime of the chosen toolkit, so dlmap's loader finds this very instance by its soname.
  "$NVCC" -cudart shared -o "$BUILD/bin/dlmap_gpu_check" "$BUILD"/obj/check/*.o "$BUILD/libdlmap.a" -ldl -lpthread \
    -Xlinker -rpath -Xlinker "$LIBDIR" || fail_build "linking the check program failed"
  CHECK=$BUILD/bin/dlmap_gpu_check
  line INFO "built $CHECK with $NVCC ($gencode), runtime $LIBDIR/$SONAME"
else
  line SKIP "check program: no CUDA toolkit (bin/nvcc with libcudart) here to build its kernels"
fi

if [ "$MODE" = --build-only ]; then
  line INFO "gpu/check.sh --build-only: done in $(($(date +%s) - STARTED)) s"
  exit 0
fi

# ---- run ---------------------------------------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    while IFS= read -r gpu; do line INFO "nvidia-smi: $gpu"; done || true
fi
TIMEOUT=${DLMAP_CHECK_TIMEOUT:-200}
c_status=0
timeout "$TIMEOUT" "$CHECK" || c_status=$?
case $c_status in
  0) c_verdict="PASS" ;;
  2) no_gpu "the check program found no usable device (reason above)" ;;
  124) c_verdict="FAIL"; line FAIL "C device checks: ran out of time ($TIMEOUT s)" ;;
  *) c_verdict="FAIL" ;;
esac

py_status=0
if [ -n "$PY_MODULE" ]; then
  PYTHONPATH=$BUILD/python${PYTHONPATH:+:$PYTHONPATH} PYTHONDONTWRITEBYTECODE=1 \
    timeout "$TIMEOUT" "$PYTHON" -X faulthandler python/gpu_check.py || py_status=$?
  [ "$py_status" = 124 ] && line FAIL "Python real-client checks: ran out of time ($TIMEOUT s)"
  py_verdict=$([ "$py_status" = 0 ] && echo PASS || echo FAIL)
else
  py_verdict="SKIP"
fi

# The conformance checker (python/check) on CUDA arrays of JAX, PyTorch and CuPy and on their from_dlpack (tables
# in $BUILD/conformance; a peer's rows are reported, not required) and on dlmap's own, whose rows must all pass.
conf_verdict="SKIP"
if [ -n "$PY_MODULE" ]; then
  conf_status=0
  PYTHONPATH=$CHECK_PKG${PYPATH:+:$PYPATH} PYTHONDONTWRITEBYTECODE=1 \
    timeout "$TIMEOUT" "$PYTHON" -X faulthandler -m dlmap.check.gpu_peers "$BUILD/conformance" || conf_status=$?
  [ "$conf_status" = 124 ] && line FAIL "conformance checks: ran out of time ($TIMEOUT s)"
  conf_verdict=$([ "$conf_status" = 0 ] && echo PASS || echo FAIL)
fi

status=0
[ "$c_verdict" = PASS ] || status=1
[ "$py_verdict" = FAIL ] && status=1
[ "$conf_verdict" = FAIL ] && status=1
line "$([ "$status" = 0 ] && echo PASS || echo FAIL)" \
  "gpu/check.sh: C device checks $c_verdict, Python real-client checks $py_verdict, conformance $conf_verdict" \
  "($(($(date +%s) - STARTED)) s)"
exit "$status"
