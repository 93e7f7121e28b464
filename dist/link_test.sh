#!/bin/sh
# Distributable-archive test: unpack it and link a small C program with plain gcc and pkg-config.
set -eu
archive="$1"
work="${TEST_TMPDIR:-$(mktemp -d)}/dist"
rm -rf "$work" && mkdir -p "$work"
tar -xzf "$archive" -C "$work"
cat >"$work/main.c" <<'C'
#include <stdio.h>
#include <string.h>
#include <dlmap/dlmap.h>

int main(void) {
  int32_t type = 0;
  dlmap_error err;
  if (!dlmap_device_type_parse("kDLGPU", 6, &type) || type != DLMAP_DEVICE_CUDA) return 1;
  const dlmap_arg arg = dlmap_arg_int(DLMAP_ARG_DL_DEVICE_TYPE, 4);
  dlmap_error_set(&err, DLMAP_ERR_EXPORT_UNSUPPORTED_DEVICE_TYPE, &arg, 1);
  puts(err.message);
  puts(dlmap_version_string());
  return strcmp(err.message, "The device specification passed to to_dlpack contains an unsupported device "
                             "type (DLDeviceType: 4)") != 0;
}
C
export PKG_CONFIG_PATH="$work/dlmap/lib/pkgconfig"
# An archive built under a sanitizer (bazel --config=asan or tsan) calls its runtime: link the program with it, as
# a user of such a build would.
sanitize=""
undefined=$(nm -u "$work/dlmap/lib/libdlmap.a" 2>/dev/null || true)
case "$undefined" in *__asan_*) sanitize="$sanitize,address" ;; esac
case "$undefined" in *__ubsan_*) sanitize="$sanitize,undefined" ;; esac
case "$undefined" in *__tsan_*) sanitize="$sanitize,thread" ;; esac
# So does one built with gcov counts (--config=gcov, or asan-gcov in tools/hardening.sh): link libgcov.
coverage=""
case "$undefined" in *__gcov_*) coverage="--coverage" ;; esac
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror ${sanitize:+-fsanitize=${sanitize#,}} $coverage -o "$work/main" "$work/main.c" \
  $(pkg-config --cflags --libs dlmap)
"$work/main" >"$work/main.out"
cat "$work/main.out"
# The package version is the library's own: what the linked library reports (the program's last line).
linked=$(tail -n 1 "$work/main.out")
[ "$(pkg-config --modversion dlmap)" = "$linked" ] \
  || { echo "FAIL: pkg-config version $(pkg-config --modversion dlmap), linked library $linked"; exit 1; }
# The DLPack header, which no package names (DLPack ships no .pc file): dlpack_includedir says where it is, and a
# user whose header is elsewhere overrides it. A marked copy of the header the compiler finds stands in for theirs.
system_dlpack=$(printf '#include <dlpack/dlpack.h>\n' | gcc -H -fsyntax-only -x c - 2>&1 \
  | sed -n 's|^\. \(.*/dlpack/dlpack\.h\)$|\1|p')
mkdir -p "$work/own/dlpack"
{ cat "$system_dlpack"; echo '#define DLMAP_LINK_TEST_OWN_DLPACK 1'; } >"$work/own/dlpack/dlpack.h"
printf '%s\n' '#include <dlmap/dlmap.h>' '#ifndef DLMAP_LINK_TEST_OWN_DLPACK' \
  '#error not the DLPack header dlpack_includedir names' '#endif' >"$work/own.c"
# shellcheck disable=SC2046
gcc -std=c11 -Wall -Wextra -Werror -c -o "$work/own.o" "$work/own.c" \
  $(pkg-config --define-variable=dlpack_includedir="$work/own" --cflags dlmap) \
  || { echo "FAIL: pkg-config's dlpack_includedir does not choose the DLPack header"; exit 1; }
for f in lib/libdlmap.a include/dlmap/dlmap.h include/dlmap/generated/dlmap_spec.h share/dlmap/spec/devices.yaml \
  share/doc/dlmap/devices.md share/doc/dlmap/errors/README.md share/doc/dlmap/LICENSE; do
  [ -f "$work/dlmap/$f" ] || { echo "FAIL: archive lacks $f"; exit 1; }
done
echo "PASS: linked against the unpacked archive with gcc and pkg-config"
