#!/usr/bin/env bash
# dlmap GPU check — one command on an NVIDIA machine: builds dlmap with gcc (no Bazel) and the check program
# (gpu/check_main.c + gpu/check_kernels.cu with nvcc), then runs it: device round trips, every copy direction
# verified byte for byte, the stream-ordering test, pinned/managed zero-copy, bandwidth next to cudaMemcpy.
# Under 5 minutes on one H200.
#
# Usage: gpu/check.sh                 build, then run
#        gpu/check.sh --build-only    build host and device code only (no GPU needed; what CI can do)
#        gpu/check.sh --prepare       write gpu/build/prebuilt: the generated sources and dlpack.h, for a GPU
#                                     machine without python3-yaml, re2c or libdlpack-dev (carry that folder there)
# Exit: 0 pass, 1 a check failed, 2 no usable CUDA device (the vendor's reason is printed), 3 cannot build.
# Environment: CUDA_HOME (default: nvcc on PATH, then /usr/local/cuda), NVCC_ARCH (default 90: sm_90 + PTX),
#              CC (default gcc), PYTHON and RE2C (default python3, re2c), DLMAP_CHECK_BUILD (default
#              gpu/build), DLMAP_CHECK_TIMEOUT (default 280 s).
set -euo pipefail

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
BUILD=${DLMAP_CHECK_BUILD:-$ROOT/gpu/build}
PRE=$BUILD/prebuilt
CC=${CC:-gcc}
ARCH=${NVCC_ARCH:-90}
MODE=${1:-run}
RE2C=${RE2C:-re2c}

fail_build() { echo "gpu/check.sh: cannot build: $*" >&2; exit 3; }
say() { echo "gpu/check.sh: $*"; }

case "$MODE" in
  run | --build-only | --prepare) ;;
  *) echo "usage: gpu/check.sh [--build-only | --prepare]" >&2; exit 3 ;;
esac
cd "$ROOT"
mkdir -p "$BUILD"

# ---- generated sources: the spec compiled by codegen/ and re2c, or a prepared copy -------------------------------
# The default spec in //spec:default's order.
SPECS=(spec/versions.yaml spec/platforms.yaml spec/devices.yaml spec/dtypes.yaml spec/errors.yaml spec/profiles/array_api.yaml)

generate() {
  local python=${PYTHON:-python3}
  "$python" -c 'import yaml' 2>/dev/null ||
    fail_build "python3 with PyYAML is needed to generate the tables (apt-get install python3-yaml), or run gpu/check.sh --prepare on a machine that has it and bring $PRE here"
  command -v "$RE2C" >/dev/null ||
    fail_build "re2c is needed to generate the name lookups (apt-get install re2c), or bring a prepared $PRE here"
  rm -rf "$PRE.tmp"
  mkdir -p "$PRE.tmp/include/dlmap/generated" "$PRE.tmp/src/generated"
  # Every output codegen/emit.py knows, at the path src/dlmap_library.bzl gives it.
  local args=() name
  for name in $(cd codegen && "$python" -B -c 'import emit; print(" ".join(emit.C_OUTPUTS))'); do
    case "$name" in
      spec_h) args+=(--spec_h "$PRE.tmp/include/dlmap/generated/dlmap_spec.h") ;;
      *_inc) args+=("--$name" "$PRE.tmp/src/generated/${name%_inc}.inc") ;;
      *_re) args+=("--$name" "$PRE.tmp/src/generated/${name%_re}.re.inc") ;;
      *) fail_build "unexpected generator output $name" ;;
    esac
  done
  local specs=() spec
  for spec in "${SPECS[@]}"; do specs+=(--spec "$spec"); done
  "$python" -B codegen/gen_c.py "${specs[@]}" "${args[@]}" || fail_build "the generator rejected the spec"
  "$RE2C" -W -Werror --no-generation-date --no-version -i -I "$PRE.tmp/src/generated" \
    -o "$PRE.tmp/src/generated/name_lookup.c" src/name_lookup.re || fail_build "re2c failed"
  if [ -f /usr/include/dlpack/dlpack.h ]; then
    mkdir -p "$PRE.tmp/include/dlpack"
    cp /usr/include/dlpack/dlpack.h "$PRE.tmp/include/dlpack/"
  fi
  rm -rf "$PRE"
  mv "$PRE.tmp" "$PRE"
}

if [ "$MODE" = --prepare ]; then
  generate
  say "wrote $PRE (generated from the spec in this checkout); bring it to the GPU machine, then run gpu/check.sh"
  exit 0
fi
if [ -f "$PRE/src/generated/name_lookup.c" ] && [ -z "$(find spec codegen src/name_lookup.re -newer "$PRE/src/generated/name_lookup.c" 2>/dev/null | head -1)" ]; then
  say "using the generated sources in $PRE"
elif "${PYTHON:-python3}" -c 'import yaml' 2>/dev/null && command -v "$RE2C" >/dev/null; then
  generate
elif [ -f "$PRE/src/generated/name_lookup.c" ]; then
  say "using $PRE (older than the spec, and no generator here to refresh it)"
else
  generate # reports what is missing
fi

# ---- the toolkit ---------------------------------------------------------------------------------------------------
# A toolkit root has bin/nvcc and libcudart beside it. nvcc on PATH may be a wrapper script elsewhere (e.g.
# /usr/local/bin/nvcc exec'ing the real one), so each candidate root is checked for both, in this order:
# CUDA_HOME, the real path of the nvcc on PATH, /usr/local/cuda.
cuda_libdir() {
  local dir
  for dir in "$1/lib64" "$1/targets/x86_64-linux/lib" "$1/lib"; do
    if ls "$dir"/libcudart.so* >/dev/null 2>&1; then echo "$dir"; return 0; fi
  done
  return 1
}
NVCC="" CUDA_ROOT="" LIBDIR="" tried=()
path_nvcc=$(command -v nvcc || true)
for root in ${CUDA_HOME:+"$CUDA_HOME"} ${path_nvcc:+"$(dirname "$(readlink -f "$path_nvcc")")/.."} /usr/local/cuda; do
  tried+=("$root")
  if [ -x "$root/bin/nvcc" ] && LIBDIR=$(cuda_libdir "$root"); then
    CUDA_ROOT=$(cd "$root" && pwd)
    NVCC=$CUDA_ROOT/bin/nvcc
    break
  fi
done
[ -n "$NVCC" ] || fail_build "no CUDA toolkit (bin/nvcc and libcudart.so) under ${tried[*]}; set CUDA_HOME"
SONAME=$(cd "$LIBDIR" && ls libcudart.so.* 2>/dev/null | grep -E '^libcudart\.so\.[0-9]+$' | sort -V | tail -1 || true)
SONAME=${SONAME:-libcudart.so}

DLPACK_INCLUDE=""
if [ -f /usr/include/dlpack/dlpack.h ]; then
  DLPACK_INCLUDE=/usr/include
elif [ -f "$PRE/include/dlpack/dlpack.h" ]; then
  DLPACK_INCLUDE=$PRE/include
else
  fail_build "no dlpack/dlpack.h (apt-get install libdlpack-dev, or run gpu/check.sh --prepare where it is installed)"
fi

# dlmap_config.h as dlmap_configure.bzl writes it: CUDA found here, ROCm not built.
mkdir -p "$BUILD/config"
cat >"$BUILD/config/dlmap_config.h" <<EOF
/* Written by gpu/check.sh: what the GPU check build found. */
#ifndef DLMAP_CONFIG_H_
#define DLMAP_CONFIG_H_
#define DLMAP_HAS_CUDA 1
#define DLMAP_HAS_ROCM 0
#define DLMAP_CUDA_LIBDIR "$LIBDIR"
#define DLMAP_CUDART_SONAME "$SONAME"
#define DLMAP_CUDA_VERSION_STR ""
#define DLMAP_ROCM_LIBDIR ""
#define DLMAP_AMDHIP_SONAME ""
#define DLMAP_ROCM_VERSION_STR ""
#define DLMAP_DLPACK_VERSION_STR ""
#define DLMAP_DLPACK_HEADER ""
#endif
EOF

# ---- build ---------------------------------------------------------------------------------------------------------
say "building with $CC and $NVCC (sm_$ARCH), runtime $LIBDIR/$SONAME"
INCLUDES=(-I"$ROOT" -I"$PRE" -I"$PRE/include" -I"$ROOT/include" -I"$BUILD/config" -I"$DLPACK_INCLUDE")
mkdir -p "$BUILD/obj"
SOURCES=(src/*.c src/backends/*.c "$PRE/src/generated/name_lookup.c")
pids=()
for source in "${SOURCES[@]}"; do
  object=$BUILD/obj/$(echo "$source" | tr '/' '_').o
  "$CC" -std=c11 -O2 -g -Wall -Wextra -pedantic "${INCLUDES[@]}" -c "$source" -o "$object" &
  pids+=($!)
done
for pid in "${pids[@]}"; do wait "$pid" || fail_build "compiling dlmap failed"; done
rm -f "$BUILD/libdlmap.a"
ar rcs "$BUILD/libdlmap.a" "$BUILD"/obj/*.o
"$CC" -std=c11 -O2 -g -Wall -Wextra "${INCLUDES[@]}" -I"$CUDA_ROOT/include" -c gpu/check_main.c \
  -o "$BUILD/check_main.o" || fail_build "compiling gpu/check_main.c failed"
"$NVCC" -O2 -std=c++17 -gencode "arch=compute_$ARCH,code=[sm_$ARCH,compute_$ARCH]" -c gpu/check_kernels.cu \
  -o "$BUILD/check_kernels.o" || fail_build "nvcc failed on gpu/check_kernels.cu"
# The shared runtime, so dlmap's dlopen of the same soname finds this very instance.
"$NVCC" -cudart shared -o "$BUILD/dlmap_gpu_check" "$BUILD/check_main.o" "$BUILD/check_kernels.o" \
  "$BUILD/libdlmap.a" -ldl -lpthread -Xlinker -rpath -Xlinker "$LIBDIR" || fail_build "linking failed"
say "built $BUILD/dlmap_gpu_check"
[ "$MODE" = --build-only ] && exit 0

# ---- run -----------------------------------------------------------------------------------------------------------
if command -v nvidia-smi >/dev/null; then
  nvidia-smi --query-gpu=index,name,driver_version,memory.total --format=csv,noheader 2>&1 | sed 's/^/gpu\/check.sh: nvidia-smi: /' || true
fi
status=0
timeout "${DLMAP_CHECK_TIMEOUT:-280}" "$BUILD/dlmap_gpu_check" || status=$?
case $status in
  0) say "PASS" ;;
  2) echo "gpu/check.sh: no usable NVIDIA GPU on this machine (reason above); nothing was checked" >&2 ;;
  124) echo "gpu/check.sh: the check ran out of time (${DLMAP_CHECK_TIMEOUT:-280} s)" >&2; status=1 ;;
  *) echo "gpu/check.sh: FAIL (exit $status)" >&2 ;;
esac
exit "$status"
