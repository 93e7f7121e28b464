#!/usr/bin/env bash
# dlmap GPU check — one command on a machine with an NVIDIA GPU, from a plain checkout and the bundle of generated
# sources `bazel build //gpu:bundle` wrote on a machine with Bazel (bazel-bin/gpu/bundle.tar.gz): builds dlmap with the
# C compiler, the check program with the toolkit whose runtime this driver can start, the `dlmap` module for the Python
# that has the frameworks; then runs, most valuable first, the C device checks (gpu/check_main.c), the Python
# real-client checks with JAX, PyTorch and CuPy (python/gpu_check.py) and the conformance checker on their CUDA arrays,
# from_dlpack and dlmap's own (python/check/gpu_peers.py), and, where the Python has JAX, the JAX differential: every
# row of python/differential/jax_rows.py against the running JAX (CPU and CUDA arrays) and against a second `dlmap`
# module built from the bundle's jax-profile sources (profiles/jax/), same outcome required. One line per check
# ("PASS|FAIL|SKIP|INFO  …"), the verdict last, also when a step ran out of time. The whole run, build included, fits
# one budget (480 s).
#
# Usage: gpu/check.sh [--bundle FILE]               build, then run every check
#        gpu/check.sh [--bundle FILE] --build-only  build only (no GPU needed; builds what needs no toolkit without one)
#        gpu/check.sh --toolkit                     only say which CUDA runtime, toolkit and Python it would use
# FILE defaults to $DLMAP_CHECK_BUNDLE, else bazel-bin/gpu/bundle.tar.gz of this checkout.
# Exit (gpu/check_steps.sh): 0 PASS: the C device checks ran and passed, and at least one framework's rows ran on the
#       GPU and passed; 1 FAIL: a check failed, crashed or ran out of time; 2 nothing checked (the reason is printed:
#       no driver, no device, no CUDA runtime, a driver too old for every runtime here; or every step skipped, each
#       saying why); 3 cannot build; 4 incomplete: one half ran, the other was skipped (it says why).
#       The Python checks it runs exit 0 (their rows passed), 1 (one failed) or 3 (nothing checked, with the reason).
#       The JAX differential counts with the conformance checks (both check dlmap's profiles against the peers): a
#       DIFF row makes "conformance" FAIL; without JAX it is a SKIP line and leaves the conformance verdict alone.
# Environment: PYTHON (an interpreter to try first), CUDA_HOME (a toolkit to try first), NVCC_ARCH (default: device
#              0's, else 90), CC (default gcc), DLMAP_CHECK_BUILD (default gpu/build), DLMAP_CHECK_BUDGET (seconds for
#              the whole run, default 480), DLMAP_CHECK_TOOLKITS (colon-separated toolkit roots to try, in order,
#              instead of searching), DLMAP_CHECK_BUNDLE (the bundle, as --bundle).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CALLER_DIR=$PWD
BUILD=${DLMAP_CHECK_BUILD:-$ROOT/gpu/build}
CC=${CC:-gcc}
JOBS=$(nproc 2>/dev/null || echo 2)
STARTED=$(date +%s)
BUDGET=${DLMAP_CHECK_BUDGET:-480}

line() { local status=$1; shift; printf '%-4s  %s\n' "$status" "$*"; }
# shellcheck source=gpu/check_steps.sh
. "$ROOT/gpu/check_steps.sh"  # the exit statuses, limited (a step until its deadline), run_step, summary
usage() { echo "usage: gpu/check.sh [--bundle FILE] [--build-only | --toolkit]" >&2; exit "$EXIT_CANNOT_BUILD"; }

MODE=run BUNDLE=${DLMAP_CHECK_BUNDLE:-}
while [ $# -gt 0 ]; do
  case $1 in
    --build-only | --toolkit) MODE=$1 ;;
    --bundle) [ $# -ge 2 ] || usage; BUNDLE=$2; shift ;;
    --bundle=*) BUNDLE=${1#--bundle=} ;;
    *) usage ;;
  esac
  shift
done
if [ -n "$BUNDLE" ]; then
  case $BUNDLE in /*) ;; *) BUNDLE=$CALLER_DIR/$BUNDLE ;; esac
elif [ -f "$ROOT/bazel-bin/gpu/bundle.tar.gz" ]; then
  BUNDLE=$ROOT/bazel-bin/gpu/bundle.tar.gz
fi

# ---- one budget: each step ends by its deadline; a step that finishes early leaves its time to the next ------------
# Shares of 480 s: build 120, C device checks 90, Python real-client checks 120, JAX differential 30 (it takes a few
# seconds: JAX's start and about 130 in-process rows), conformance the rest, 120 (scaled to BUDGET).
# --build-only has the whole budget for the build.
[ "$BUDGET" -ge 60 ] 2>/dev/null || { echo "DLMAP_CHECK_BUDGET must be at least 60 (seconds)" >&2; exit "$EXIT_CANNOT_BUILD"; }
share_end() { echo "$((STARTED + BUDGET * $1 / 480))"; }
if [ "$MODE" = run ]; then BUILD_END=$(share_end 120); else BUILD_END=$((STARTED + BUDGET)); fi
C_END=$(share_end 210) PY_END=$(share_end 330) JAX_END=$(share_end 360) CONF_END=$(share_end 480)
fail_build() {
  local why="$*"
  [ "$(date +%s)" -lt "$BUILD_END" ] || why="$why (the build ran out of its $((BUILD_END - STARTED)) s)"
  line FAIL "gpu/check.sh cannot build: $why ($(elapsed) s)" >&2
  exit "$EXIT_CANNOT_BUILD"
}
nothing_checked() { line SKIP "gpu/check.sh: nothing checked: $* ($(elapsed) s)" >&2; exit "$EXIT_NOTHING_CHECKED"; }
# Stopped from outside (the device machine's own limit, ^C): the verdict line still comes, FAIL, with what was reached.
C_VERDICT=SKIP C_WHY="" PY_VERDICT=SKIP PY_WHY="" CONF_VERDICT=SKIP CONF_WHY=""
on_signal() {
  trap - TERM INT
  [ "$MODE" = run ] || { line FAIL "gpu/check.sh: stopped by $1 after $(elapsed) s"; exit "$EXIT_CANNOT_BUILD"; }
  C_WHY=${C_WHY:-${NO_CHECK_PROGRAM:-stopped by $1}} PY_WHY=${PY_WHY:-stopped by $1} CONF_WHY=${CONF_WHY:-stopped by $1}
  summary || true
  line FAIL "gpu/check.sh: stopped by $1 after $(elapsed) s"
  exit "$EXIT_FAIL"
}
trap 'on_signal SIGTERM' TERM
trap 'on_signal SIGINT' INT

case "$(uname -s)" in Linux) ;; *) fail_build "Linux only (the CUDA runtime is loaded with dlopen by soname)" ;; esac
cd "$ROOT"
mkdir -p "$BUILD"
command -v "$CC" >/dev/null || fail_build "no C compiler ($CC)"

# Runs the given commands (one per line of stdin) JOBS at a time, each until the build's deadline; fails when any fails.
parallel() {
  local pids=() cmd status=0
  while IFS= read -r cmd; do
    limited "$BUILD_END" bash -c "$cmd" </dev/null &
    pids+=($!)
    if [ "${#pids[@]}" -ge "$JOBS" ]; then wait "${pids[0]}" || status=1; pids=("${pids[@]:1}"); fi
  done
  for pid in "${pids[@]}"; do wait "$pid" || status=1; done
  return "$status"
}

# ---- the generated sources: the bundle, checked against this checkout first (a wrong one fails in a second) ---------
if [ "$MODE" != --toolkit ]; then
  [ -n "$BUNDLE" ] || fail_build "no bundle of generated sources: build it where Bazel runs (bazel build //gpu:bundle)" \
    "and pass it: gpu/check.sh --bundle bundle.tar.gz (README, \"GPUs\")"
  [ -f "$BUNDLE" ] || fail_build "no bundle at $BUNDLE (bazel build //gpu:bundle writes bazel-bin/gpu/bundle.tar.gz)"
  GEN=$BUILD/generated
  rm -rf "$GEN"
  mkdir -p "$GEN"
  tar -xzf "$BUNDLE" -C "$GEN" --no-same-owner --no-same-permissions 2>"$BUILD/bundle.err" ||
    fail_build "$BUNDLE is not a readable tar.gz: $(head -c 300 "$BUILD/bundle.err" | tr -s '\n' ' ')"
  for file in MANIFEST include/dlmap/generated/dlmap_spec.h src/generated/name_lookup.c; do
    [ -f "$GEN/$file" ] || fail_build "$BUNDLE lacks $file: not a bundle of //gpu:bundle"
  done
  PROFILE=$(sed -n 's/^profile //p' "$GEN/MANIFEST")
  # The bundle must come from this checkout's spec and generator: the C sources here expand its tables.
  checked=$(grep -cE '^[0-9a-f]{64}  ' "$GEN/MANIFEST" || true)
  [ "$checked" -gt 0 ] || fail_build "$BUNDLE lacks the record of its inputs (MANIFEST): not a bundle of //gpu:bundle"
  stale=$(grep -E '^[0-9a-f]{64}  ' "$GEN/MANIFEST" | sha256sum -c --quiet 2>&1 | sed -n 's/: FAILED.*//p' |
    tr '\n' ' ' || true)
  [ -z "$stale" ] || fail_build "the bundle was generated from other sources than this checkout's (${stale% }" \
    "differ): build it again from this checkout (bazel build //gpu:bundle)"
  line INFO "generated sources: $BUNDLE (profile ${PROFILE:-?}; its $checked inputs match this checkout)"
  # The jax profile's generated sources, for the JAX differential's module: in profiles/jax/ of a bundle of
  # //gpu:bundle (make_bundle.py --also jax); a bundle without them builds and checks everything else.
  JAX_GEN="" NO_JAX_MODULE=""
  if grep -qx 'also jax' "$GEN/MANIFEST"; then
    JAX_GEN=$GEN/profiles/jax
    for file in include/dlmap/generated/dlmap_spec.h src/generated/name_lookup.c; do
      [ -f "$JAX_GEN/$file" ] || fail_build "$BUNDLE lacks profiles/jax/$file, which its MANIFEST promises"
    done
  else
    NO_JAX_MODULE="the bundle carries no jax-profile sources (profiles/jax/)"
  fi
fi

# ---- Python: the first of $PYTHON, the active virtual environment's, PATH's python3 and /usr/bin/python3 that has a
# framework the checks exercise (PyTorch, JAX, CuPy), else the first that runs ----------------------------------------
PY_TRIED=() PYTHON_CHOSEN="" PY_FRAMEWORKS="" py_first=""
for candidate in ${PYTHON:+"$PYTHON"} ${VIRTUAL_ENV:+"$VIRTUAL_ENV/bin/python3"} python3 /usr/bin/python3; do
  path=$(command -v "$candidate" 2>/dev/null || true)
  [ -n "$path" ] || continue
  case " ${PY_TRIED[*]-} " in *" $path "*) continue ;; esac
  PY_TRIED+=("$path")
  has=$("$path" "$ROOT/gpu/check_env.py" frameworks 2>/dev/null) || continue
  [ -n "$py_first" ] || py_first=$path
  if [ -n "$has" ]; then PYTHON_CHOSEN=$path PY_FRAMEWORKS=$has; break; fi
done
if [ -n "$PYTHON_CHOSEN" ]; then
  py_why="has ${PY_FRAMEWORKS// /, }"
else
  PYTHON_CHOSEN=$py_first
  py_why="none of ${PY_TRIED[*]-python3} has PyTorch, JAX or CuPy"
fi
[ -n "$PYTHON_CHOSEN" ] || fail_build "no Python 3 (tried \$PYTHON, \$VIRTUAL_ENV/bin/python3, python3, /usr/bin/python3)"
PYTHON=$PYTHON_CHOSEN
line INFO "python: $PYTHON ($("$PYTHON" -c 'import sys; print(sys.version.split()[0])')): $py_why" \
  "(tried in order: ${PY_TRIED[*]})"

# ---- the CUDA runtime: toolkits (bin/nvcc with libcudart.so.N), then the frameworks' pip wheels' (no nvcc) ----------
cuda_libdir() {
  local dir
  for dir in "$1/lib64" "$1/targets/x86_64-linux/lib" "$1/lib"; do
    if [ -n "$(pick_soname "$dir")" ]; then echo "$dir"; return 0; fi
  done
  return 1
}
# The newest versioned runtime in a directory (libcudart.so.13): what the check program links and dlmap loads, so no
# unversioned libcudart.so is needed.
pick_soname() {
  (cd "$1" 2>/dev/null && ls libcudart.so.* 2>/dev/null) | grep -E '^libcudart\.so\.[0-9]+$' | sort -V | tail -1 || true
}
path_nvcc=$(command -v nvcc || true)
TOOLKITS=() seen=" "
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
  TOOLKITS+=("$real")
done
WHEELS=()
while IFS= read -r dir; do [ -n "$dir" ] && WHEELS+=("$dir"); done < <("$PYTHON" gpu/check_env.py cudart 2>/dev/null || true)

CUDA_ROOT="" LIBDIR="" SONAME="" ARCH=${NVCC_ARCH:-} NO_CHECK_PROGRAM=""
cuda_version() { echo "$(($1 / 1000)).$(($1 % 1000 / 10))"; }  # 12080 -> 12.8
mkdir -p "$BUILD/bin"
"$CC" -std=c11 -O1 -Wall -Wextra -o "$BUILD/bin/check_probe" gpu/check_probe.c -ldl || fail_build "compiling gpu/check_probe.c failed"
if [ "$MODE" != --build-only ]; then
  refused=() driver=0 too_old=0
  for runtime_dir in "${TOOLKITS[@]/%/:toolkit}" "${WHEELS[@]/%/:wheel}"; do
    [ -n "$runtime_dir" ] || continue
    kind=${runtime_dir##*:} where=${runtime_dir%:*}
    if [ "$kind" = toolkit ]; then libdir=$(cuda_libdir "$where"); else libdir=$where; fi
    soname=$(pick_soname "$libdir")
    answer=$("$BUILD/bin/check_probe" "$libdir/$soname")
    status=$(sed -n 's/^status=\(-\{0,1\}[0-9]*\) .*/\1/p' <<<"$answer")
    devices=$(sed -n 's/.* devices=\([0-9]*\) .*/\1/p' <<<"$answer")
    runtime=$(sed -n 's/.* runtime=\([0-9]*\) .*/\1/p' <<<"$answer")
    driver=$(sed -n 's/.* driver=\([0-9]*\) .*/\1/p' <<<"$answer")
    arch=$(sed -n 's/.* arch=\([0-9]*\) .*/\1/p' <<<"$answer")
    text=$(sed -n 's/.* text=//p' <<<"$answer")
    if [ "$status" = 0 ] && [ "${devices:-0}" -gt 0 ]; then
      LIBDIR=$libdir SONAME=$soname
      [ -n "$ARCH" ] || ARCH=$arch
      supports="$devices device(s), sm_$arch; the driver supports CUDA $(cuda_version "$driver")"
      if [ "$kind" = toolkit ]; then
        CUDA_ROOT=$where
        line INFO "toolkit: $where (CUDA runtime $(cuda_version "$runtime"), $soname), $supports"
      else
        NO_CHECK_PROGRAM="the CUDA runtime that starts here is a pip wheel's ($libdir/$soname), without nvcc to"
        NO_CHECK_PROGRAM="$NO_CHECK_PROGRAM build the check program's kernels"
        [ "${#refused[@]}" = 0 ] || NO_CHECK_PROGRAM="$NO_CHECK_PROGRAM; no toolkit runtime starts: ${refused[*]}"
        line INFO "runtime: $libdir/$soname (a pip wheel's, CUDA runtime $(cuda_version "$runtime")), $supports;" \
          "no toolkit: the C device checks cannot be built, the Python checks can"
      fi
      break
    fi
    [ "$status" = 35 ] && too_old=1
    refused+=("$where (CUDA runtime $(cuda_version "$runtime")): $text (error $status)")
    line INFO "$kind refused: ${refused[-1]}"
  done
  if [ -z "$LIBDIR" ]; then
    if [ "${#refused[@]}" = 0 ]; then
      nothing_checked "no CUDA runtime: no toolkit (bin/nvcc with libcudart.so.N) in \$CUDA_HOME, on PATH or under" \
        "/usr/local/cuda*, and no pip wheel's (site-packages/nvidia/*/lib) for $PYTHON"
    elif [ "$driver" = 0 ]; then
      nothing_checked "no usable NVIDIA GPU here: no NVIDIA driver (libcuda.so.1 cannot be loaded)"
    elif [ "$too_old" = 1 ]; then
      nothing_checked "no usable NVIDIA GPU here: the NVIDIA driver supports CUDA up to $(cuda_version "$driver")," \
        "older than every runtime found ($(printf '%s\n' "${TOOLKITS[@]}" "${WHEELS[@]}" | paste -sd ' ')):" \
        "install a toolkit for CUDA" \
        "$((driver / 1000)).x or older (CUDA_HOME=...), or a newer driver"
    else
      nothing_checked "no usable NVIDIA GPU here: ${refused[0]}"
    fi
  fi
elif [ "${#TOOLKITS[@]}" -gt 0 ]; then
  CUDA_ROOT=${TOOLKITS[0]} LIBDIR=$(cuda_libdir "$CUDA_ROOT") SONAME=$(pick_soname "$LIBDIR")
elif [ "${#WHEELS[@]}" -gt 0 ]; then
  LIBDIR=${WHEELS[0]} SONAME=$(pick_soname "$LIBDIR")
  NO_CHECK_PROGRAM="no CUDA toolkit (bin/nvcc) here to build its kernels; the runtime is a pip wheel's ($LIBDIR)"
fi
[ -n "$CUDA_ROOT" ] || [ -n "$NO_CHECK_PROGRAM" ] ||
  NO_CHECK_PROGRAM="no CUDA toolkit (bin/nvcc with libcudart.so.N) here to build its kernels"
ARCH=${ARCH:-90}
[ "$ARCH" -ge 10 ] 2>/dev/null || ARCH=90
[ "$MODE" = --toolkit ] && exit 0

# ---- dlpack.h: the system's, else one a framework on this Python ships ----------------------------------------------
# The first candidate every dlmap source compiles with (a framework's copy may differ from the upstream header).
INCLUDES=(-I"$ROOT" -I"$GEN" -I"$GEN/include" -I"$ROOT/include" -I"$BUILD/config" -I"$BUILD/dlpack")
mkdir -p "$BUILD/config"
# dlmap_config.h from the template dlmap_configure.bzl fills (third_party/toolchains/dlmap_config.h.tpl, the one list
# of its macros), with what this build found: the runtime as one more place for the backend to look, the DLPack header
# tried ($1). A placeholder this script does not fill stops the build, naming it.
CONFIG_TEMPLATE=third_party/toolchains/dlmap_config.h.tpl
write_config() {
  local has_cuda=0 line name value text="" unfilled
  [ -n "$LIBDIR" ] && has_cuda=1
  local -A values=([WRITER]="gpu/check.sh's build" [DLMAP_HAS_CUDA]=$has_cuda [DLMAP_HAS_ROCM]=0
    [DLMAP_CUDA_LIBDIR]=$LIBDIR [DLMAP_CUDART_SONAME]=$SONAME [DLMAP_CUDA_VERSION_STR]="" [DLMAP_ROCM_LIBDIR]=""
    [DLMAP_AMDHIP_SONAME]="" [DLMAP_ROCM_VERSION_STR]="" [DLMAP_DLPACK_VERSION_STR]="" [DLMAP_DLPACK_HEADER]=$1)
  [ -f "$CONFIG_TEMPLATE" ] || fail_build "no $CONFIG_TEMPLATE in this checkout"
  while IFS= read -r line || [ -n "$line" ]; do
    for name in "${!values[@]}"; do
      value=${values[$name]}
      line=${line//"%{$name}"/"$value"}
    done
    text+=$line$'\n'
  done <"$CONFIG_TEMPLATE"
  unfilled=$(grep -o '%{[A-Za-z0-9_]*}' <<<"$text" | head -1 || true)
  [ -z "$unfilled" ] || fail_build "$CONFIG_TEMPLATE has $unfilled, which gpu/check.sh's write_config does not fill"
  printf '%s' "$text" >"$BUILD/config/dlmap_config.h"
}
DLPACK="" tried_dlpack=""
mkdir -p "$BUILD/dlpack/dlpack"
while IFS= read -r candidate; do
  [ -n "$candidate" ] || continue
  ln -sf "$candidate" "$BUILD/dlpack/dlpack/dlpack.h"
  write_config "$candidate"
  if limited "$BUILD_END" "$CC" -std=c11 -fsyntax-only "${INCLUDES[@]}" src/*.c src/backends/*.c 2>/dev/null; then
    DLPACK=$candidate
    break
  fi
  tried_dlpack="$tried_dlpack $candidate"
done < <("$PYTHON" gpu/check_env.py dlpack || true)
[ -n "$DLPACK" ] || fail_build "no <dlpack/dlpack.h> dlmap compiles with${tried_dlpack:+ (tried$tried_dlpack)}: install" \
  "libdlpack-dev, or a framework that ships one (PyTorch, CuPy) for $PYTHON, or set DLPACK_INCLUDE_DIR"

# ---- build: dlmap (position-independent, for the program and the Python module), the check program, the module ------
CFLAGS=(-std=c11 -O2 -g -fPIC -Wall -Wextra -pedantic)
rm -rf "$BUILD/obj" "$BUILD/python" "$BUILD/bin/dlmap_gpu_check"
mkdir -p "$BUILD/obj/lib" "$BUILD/obj/python" "$BUILD/obj/check"
for source in src/*.c src/backends/*.c "$GEN/src/generated/name_lookup.c"; do
  printf '%q ' "$CC" "${CFLAGS[@]}" "${INCLUDES[@]}" -c "$source" -o "$BUILD/obj/lib/$(basename "$source" .c).o"
  echo
done | parallel || fail_build "compiling dlmap failed"
rm -f "$BUILD/libdlmap.a"
ar rcs "$BUILD/libdlmap.a" "$BUILD"/obj/lib/*.o
line INFO "built $BUILD/libdlmap.a against $DLPACK"

CHECK=""
if [ -n "$CUDA_ROOT" ]; then
  NVCC=$CUDA_ROOT/bin/nvcc
  # The device's architecture where this nvcc knows it, else the newest it knows below it as PTX (the driver JITs).
  codes=$(limited "$BUILD_END" "$NVCC" --list-gpu-code 2>/dev/null | sed -n 's/^sm_\([0-9]*\)$/\1/p' | sort -n || true)
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
    printf '%q ' "$CC" "${CFLAGS[@]}" "${INCLUDES[@]}" -I"$CUDA_ROOT/include" -c gpu/check_layout_bench.c \
      -o "$BUILD/obj/check/check_layout_bench.o"
    echo
    printf '%q ' "$NVCC" -O2 -std=c++17 -Xcompiler -fPIC -gencode "$gencode" -c gpu/check_kernels.cu \
      -o "$BUILD/obj/check/check_kernels.o"
    echo
  } | parallel || fail_build "compiling the check program failed"
  # The chosen runtime by its versioned file (no unversioned libcudart.so needed), so dlmap's loader finds this very
  # instance by its soname.
  limited "$BUILD_END" "$NVCC" -cudart none -o "$BUILD/bin/dlmap_gpu_check" "$BUILD"/obj/check/*.o \
    "$BUILD/libdlmap.a" -ldl -lpthread -Xlinker "$LIBDIR/$SONAME" -Xlinker -rpath -Xlinker "$LIBDIR" ||
    fail_build "linking the check program failed"
  CHECK=$BUILD/bin/dlmap_gpu_check
  line INFO "built $CHECK with $NVCC ($gencode), runtime $LIBDIR/$SONAME"
else
  line SKIP "check program: $NO_CHECK_PROGRAM"
fi

PY_INCLUDE=$("$PYTHON" gpu/check_env.py python-include || true)
PY_MODULE="" NO_PY_MODULE=""
if [ -n "$PY_INCLUDE" ]; then
  for source in python/*.c; do
    printf '%q ' "$CC" "${CFLAGS[@]}" -fvisibility=hidden "${INCLUDES[@]}" -I"$PY_INCLUDE" -c "$source" \
      -o "$BUILD/obj/python/$(basename "$source" .c).o"
    echo
  done | parallel || fail_build "compiling the Python module failed"
  mkdir -p "$BUILD/python"
  limited "$BUILD_END" "$CC" -shared -o "$BUILD/python/dlmap.so" "$BUILD"/obj/python/*.o "$BUILD/libdlmap.a" \
    -Wl,--version-script="$ROOT/python/dlmap.lds" -ldl -pthread || fail_build "linking the Python module failed"
  PY_MODULE=$BUILD/python/dlmap.so
  line INFO "built $PY_MODULE for $PYTHON"
  # The conformance checker's package (python/check/BUILD lays it out the same way): the module as dlmap/__init__.so,
  # the checker as dlmap/check/ (with the reader of profiles that extend another), the spec it reads as
  # dlmap/check/spec/.
  CHECK_PKG=$BUILD/check_pkg
  rm -rf "$CHECK_PKG"
  mkdir -p "$CHECK_PKG/dlmap/check/spec/profiles"
  cp "$PY_MODULE" "$CHECK_PKG/dlmap/__init__.so"
  for source in python/check/*.py tests/spec_facts/spec_facts.py codegen/profile_extends.py codegen/profile_settings.py; do
    case $source in *_test.py) ;; *) cp "$source" "$CHECK_PKG/dlmap/check/" ;; esac
  done
  cp spec/*.yaml "$CHECK_PKG/dlmap/check/spec/"
  cp spec/profiles/*.yaml "$CHECK_PKG/dlmap/check/spec/profiles/"
  line INFO "assembled the dlmap.check package in $CHECK_PKG"
  # The jax profile's library and module, in their own directory, for the JAX differential: the same sources compiled
  # against the bundle's profiles/jax/ tables instead of the array_api ones.
  JAX_MODULE=""
  if [ -n "$JAX_GEN" ]; then
    JAX_INCLUDES=(-I"$ROOT" -I"$JAX_GEN" -I"$JAX_GEN/include" -I"$ROOT/include" -I"$BUILD/config" -I"$BUILD/dlpack")
    rm -rf "$BUILD/jax"
    mkdir -p "$BUILD/jax/obj/lib" "$BUILD/jax/obj/python" "$BUILD/jax/python"
    {
      for source in src/*.c src/backends/*.c "$JAX_GEN/src/generated/name_lookup.c"; do
        printf '%q ' "$CC" "${CFLAGS[@]}" "${JAX_INCLUDES[@]}" -c "$source" \
          -o "$BUILD/jax/obj/lib/$(basename "$source" .c).o"
        echo
      done
      for source in python/*.c; do
        printf '%q ' "$CC" "${CFLAGS[@]}" -fvisibility=hidden "${JAX_INCLUDES[@]}" -I"$PY_INCLUDE" -c "$source" \
          -o "$BUILD/jax/obj/python/$(basename "$source" .c).o"
        echo
      done
    } | parallel || fail_build "compiling the jax-profile library and module failed"
    ar rcs "$BUILD/jax/libdlmap.a" "$BUILD"/jax/obj/lib/*.o
    limited "$BUILD_END" "$CC" -shared -o "$BUILD/jax/python/dlmap.so" "$BUILD"/jax/obj/python/*.o \
      "$BUILD/jax/libdlmap.a" -Wl,--version-script="$ROOT/python/dlmap.lds" -ldl -pthread ||
      fail_build "linking the jax-profile module failed"
    JAX_MODULE=$BUILD/jax/python/dlmap.so
    line INFO "built $JAX_MODULE (profile jax) for $PYTHON"
  fi
else
  NO_PY_MODULE="no Python.h for $PYTHON (its headers are not installed: python3-dev or the interpreter's own)"
  line SKIP "Python module: $NO_PY_MODULE; the Python checks cannot run"
fi

if [ "$MODE" = --build-only ]; then
  line INFO "gpu/check.sh --build-only: done in $(elapsed) s"
  exit "$EXIT_PASS"
fi

# ---- run: each step until its deadline; the verdict line comes last whatever happened ------------------------------
C_WHY=${NO_CHECK_PROGRAM:-} PY_WHY=${NO_PY_MODULE:-} CONF_WHY=${NO_PY_MODULE:-}

if command -v nvidia-smi >/dev/null; then
  limited "$C_END" nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>/dev/null |
    while IFS= read -r gpu; do line INFO "nvidia-smi: $gpu"; done || true
fi

if [ -n "$CHECK" ]; then
  run_step "C device checks" "$C_END" "$C_PASS" "$C_FAIL" "$C_NO_DEVICE" "$CHECK"
  C_VERDICT=$RESULT
  if [ "$RESULT" = SKIP ]; then  # the probe started this very runtime with a device: dlmap not finding one is a defect
    C_VERDICT=FAIL
    line FAIL "C device checks: dlmap reports no usable CUDA device (its reason is above), yet $LIBDIR/$SONAME" \
      "started here with a device"
  fi
fi

if [ -n "$PY_MODULE" ]; then
  with_module=(env "PYTHONPATH=$BUILD/python${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1)
  with_checker=(env "PYTHONPATH=$CHECK_PKG${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1)
  run_step "Python real-client checks" "$PY_END" "$PY_PASS" "$PY_FAIL" "$PY_NOTHING_CHECKED" \
    "${with_module[@]}" "$PYTHON" -X faulthandler python/gpu_check.py
  PY_VERDICT=$RESULT PY_WHY=$RESULT_WHY
  # dlmap's layout copies next to PyTorch's (bench/gpu_layout_bench.py, issue 47): figures for BENCHMARKS.md, no verdict.
  if grep -qw torch <<<"$PY_FRAMEWORKS"; then
    limited "$PY_END" "${with_module[@]}" "$PYTHON" bench/gpu_layout_bench.py ||
      line INFO "layout copies vs PyTorch: ended without its table (exit $?)"
  else
    line SKIP "layout copies vs PyTorch: $PYTHON has no PyTorch"
  fi
  # The JAX differential (python/differential/jax_rows.py): JAX and the jax-profile module on the same inputs, one row
  # per case (SAME, DIFF with both outcomes, OPEN: a listed known difference, N/A: an input that cannot be made here).
  JAX_VERDICT=SKIP
  if [ -z "$JAX_MODULE" ]; then
    line SKIP "JAX differential: no jax-profile module: ${NO_JAX_MODULE:-not built}"
  elif ! grep -qw jax <<<"$PY_FRAMEWORKS"; then
    line SKIP "JAX differential: $PYTHON has no JAX"
  else
    jax_log=$BUILD/jax/differential.log
    run_step "JAX differential" "$JAX_END" "$PY_PASS" "$PY_FAIL" "$PY_NOTHING_CHECKED" \
      env "PYTHONPATH=$BUILD/jax/python:$ROOT/python/differential${PYTHONPATH:+:$PYTHONPATH}" PYTHONDONTWRITEBYTECODE=1 \
      "$PYTHON" -X faulthandler python/differential/differential_test.py jax_rows \
      python/differential/jax_open_rows.txt dlmap_jax_adapter.DlmapJaxAdapter >"$jax_log" 2>&1
    JAX_VERDICT=$RESULT
    cat "$jax_log"
    jax_last=$(grep '^differential: ' "$jax_log" | tail -1 || true)
    case $RESULT in
      PASS)
        if skipped=$(sed -n 's/^differential: [0-9]* rows skipped: //p' <<<"$jax_last") && [ -n "$skipped" ]; then
          JAX_VERDICT=SKIP
          line SKIP "JAX differential: $skipped"
        else
          line PASS "JAX differential: ${jax_last#differential: } ($jax_log)"
        fi ;;
      FAIL) line FAIL "JAX differential: ${jax_last:-no summary} ($(grep '^FAIL: ' "$jax_log" | sed 's/^FAIL: //' |
        paste -sd ' ' -)) ($jax_log)" ;;
    esac
  fi
  # The conformance checker (python/check) on CUDA arrays of JAX, PyTorch and CuPy and on their from_dlpack (tables
  # in $BUILD/conformance; a peer's rows are reported, not required) and on dlmap's own, whose rows must all pass.
  # Its own deadline ends 10 s before the step's share, so that it reports what it could not check instead of being
  # killed (dlmap's rows come first, then each peer's producer and consumer).
  conf_seconds=$((CONF_END - $(date +%s) - KILL_GRACE - 10))
  [ "$conf_seconds" -gt 0 ] || conf_seconds=1
  run_step "conformance checks" "$CONF_END" "$PY_PASS" "$PY_FAIL" "$PY_NOTHING_CHECKED" \
    "${with_checker[@]}" "$PYTHON" -X faulthandler -m dlmap.check.gpu_peers "$BUILD/conformance" \
    --deadline "$conf_seconds"
  CONF_VERDICT=$RESULT CONF_WHY=$RESULT_WHY
  # Counted with the conformance checks: a FAIL of either is a FAIL; the differential's SKIP changes nothing.
  if [ "$JAX_VERDICT" = FAIL ] || { [ "$JAX_VERDICT" = PASS ] && [ "$CONF_VERDICT" = SKIP ]; }; then
    CONF_VERDICT=$JAX_VERDICT
  fi
fi

status=0
summary || status=$?
exit "$status"
