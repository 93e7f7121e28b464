#!/bin/sh
# dlmap as a consumer takes it: the release archive, pinned by its sha256, in a workspace that holds README's lines.
#   tools/downstream.sh [--example-only]
# 1. `bazel run //dist:release`: the source archive and its registry entry, in a scratch directory.
# 2. A copy of examples/downstream whose WORKSPACE and MODULE.bazel must appear verbatim in README ("Consume dlmap"),
#    with the archive's sha256 and file:// address filled in; then, in each mode this Bazel has (WORKSPACE on 4.2.3;
#    bzlmod, through the scratch registry, and WORKSPACE on 7+): the example's tests, and a binary that links two dlmap
#    libraries must fail to link, naming both.
# 3. Unless --example-only (the drill's use, which also stops after the first mode): `bazel test @dlmap//...` from the
#    consumer of the first mode (dlmap's own suite, as a dependency), and, on Bazel 4.2.3, a workspace that declares
#    its own @rules_cc, @platforms and DLPack target keeps them.
# DLMAP_BAZEL_STARTUP: startup options for every bazel command (the drill's --output_user_root).
# DLMAP_DOWNSTREAM_SUITE=0: leave out `bazel test @dlmap//...` (.ci/run's Debian testing run; its host runs it).
set -eu
cd "$(dirname "$0")/.."
full=1
[ "${1:-}" != --example-only ] || full=0
scratch=$(mktemp -d /tmp/dlmap-downstream.XXXXXX)
consumers=""
# shellcheck disable=SC2086
bz() { bazel ${DLMAP_BAZEL_STARTUP:-} "$@"; }
cleanup() {
  for ws in $consumers; do (cd "$ws" && bz shutdown) >/dev/null 2>&1 || true; done
  rm -rf "$scratch"
}
trap cleanup EXIT
fail() { echo "downstream: FAIL: $*" >&2; exit 1; }

bz run //dist:release -- "$scratch/release"
sha256=$(sed -n 's/^ *sha256 = "\([0-9a-f]*\)",$/\1/p' "$scratch/release/http_archive.txt")
url=$(sed -n 's/^ *urls = \["\(.*\)"\],$/\1/p' "$scratch/release/http_archive.txt")
version=$(sed -n 's/^ *version = "\([0-9][0-9.]*\)".*/\1/p' MODULE.bazel | head -n 1)

# consumer DIR: a copy of the example, its address lines filled in, its offline flags written.
consumer() {
  mkdir -p "$1"
  git ls-files -z --cached --others --exclude-standard examples/downstream | xargs -0 -I{} cp {} "$1/"
  for file in WORKSPACE MODULE.bazel; do
    python3 - "README.md" "examples/downstream/$file" <<'EOF' || fail "README does not show examples/downstream/$file verbatim"
import sys
readme, example = (open(path).read() for path in sys.argv[1:])
sys.exit(0 if example.strip() in readme else 1)
EOF
  done
  grep -q "dlmap-$version\\.tar\\.gz" "$1/WORKSPACE" || fail "examples/downstream/WORKSPACE does not name dlmap-$version"
  grep -q "\"dlmap\", version = \"$version\"" "$1/MODULE.bazel" || fail "examples/downstream/MODULE.bazel does not ask for $version"
  sed -i -e "s|sha256 = \"<[^\"]*>\"|sha256 = \"$sha256\"|" -e "s|urls = \[\"<[^\"]*>\"\]|urls = [\"$url\"]|" "$1/WORKSPACE"
  third_party/bazel_offline/configure.sh "$1"
  consumers="$consumers $1"
}

major=$(bazel --version | awk '{print $2}' | cut -d. -f1)
case "$major" in '' | *[!0-9]*) major=0 ;; esac  # Debian's 4.2.3 says "bazel no_version"
if [ "$major" -ge 7 ]; then
  modes="bzlmod workspace"
else
  modes="workspace"
fi
[ "$full" -eq 1 ] || modes=${modes%% *}
first=${modes%% *}
for mode in $modes; do
  ws=$scratch/consumer-$mode
  consumer "$ws"
  if [ "$mode" = bzlmod ]; then
    flags="--registry=file://$scratch/release/registry"
  elif [ "$major" -ge 7 ]; then
    flags=--config=workspace
  else
    flags=""
  fi
  # shellcheck disable=SC2086
  (cd "$ws" && bz test $flags //...) || fail "the example's tests ($mode)"
  # shellcheck disable=SC2086
  if (cd "$ws" && bz build $flags //:two_libraries) >"$scratch/two.log" 2>&1; then
    fail "a binary with two dlmap libraries linked ($mode)"
  fi
  grep -q "multiple definition of .dlmap_link_error" "$scratch/two.log" || { cat "$scratch/two.log"; fail "two libraries: no clear link error ($mode)"; }
  grep -E "multiple definition|previous definition|first defined" "$scratch/two.log" | head -n 2
  echo "downstream: $mode: the example's tests pass; two dlmap libraries in one binary fail to link"
  if [ "$full" -eq 1 ] && [ "$mode" = "$first" ]; then
    if [ "${DLMAP_DOWNSTREAM_SUITE:-1}" = 0 ]; then
      echo "downstream: $mode: bazel test @dlmap//... left out (DLMAP_DOWNSTREAM_SUITE=0)"
    else
      # shellcheck disable=SC2086
      (cd "$ws" && bz test $flags @dlmap//...) || fail "dlmap's own suite from the consumer ($mode)"
      echo "downstream: $mode: bazel test @dlmap//... passes from the consumer"
    fi
  fi
done

[ "$full" -eq 1 ] || exit 0
if [ "$major" -ge 7 ]; then
  echo "downstream: your own @rules_cc/@platforms: not checked on Bazel $major (this host's offline flags override them)"
  exit 0
fi
# A workspace that declares its own @rules_cc and @platforms (copies of dlmap's shims with one marker target each)
# before README's lines: after dlmap_dependencies() they are still its own, dlmap defined only @dlmap_config and the
# @rules_shell it lacked, none of Bazel's own; and its own DLPack target replaces the host's header.
ws=$scratch/yours
consumer "$ws"
for repo in rules_cc platforms; do
  cp -r "third_party/bazel_shims/$repo" "$ws/my_$repo"
  printf '\nfilegroup(name = "mine", visibility = ["//visibility:public"])\n' >>"$ws/my_$repo/BUILD"
done
{
  printf 'local_repository(name = "rules_cc", path = "my_rules_cc")\n\n'
  printf 'local_repository(name = "platforms", path = "my_platforms")\n\n'
  cat "$ws/WORKSPACE"
} >"$ws/WORKSPACE.new"
mv "$ws/WORKSPACE.new" "$ws/WORKSPACE"
sed -i '/override_repository=platforms=/d' "$ws/.bazelrc.host"
(cd "$ws" && bz query '@rules_cc//:mine + @platforms//:mine + @dlmap//src:dlmap') >/dev/null || fail "your own @rules_cc/@platforms were replaced"
(cd "$ws" && bz query --output=build '//external:*') >"$scratch/external.txt" 2>&1 || fail "bazel query //external:*"
# Each rule is a paragraph; keep the names of those dlmap_dependencies() created.
defined=$(awk -v RS= '/generator_function = "dlmap_dependencies"/' "$scratch/external.txt" |
  sed -n 's/^  name = "\(.*\)",$/\1/p' | sort -u | tr '\n' ' ')
[ "$defined" = "dlmap_config rules_shell " ] ||
  fail "dlmap_dependencies() defined other repositories than @dlmap_config and @rules_shell here: $defined"
echo "downstream: your own @rules_cc and @platforms stay yours; dlmap_dependencies() added @dlmap_config and the" \
  "@rules_shell you had not declared"

# The DLPack header, both ways README gives: a directory ($DLPACK_INCLUDE_DIR) and the workspace's own target.
host_header=$(sed -n 's/^dlpack : \([^ ]*\) .*/\1/p' "$(cd "$ws" && bz info output_base)/external/dlmap_config/SUMMARY")
[ -f "$host_header" ] || fail "no DLPack header on this host (@dlmap_config's SUMMARY)"
mkdir -p "$ws/my_dlpack/include/dlpack"
cp "$host_header" "$ws/my_dlpack/include/dlpack/dlpack.h"
printf '\ncc_library(name = "my_dlpack", hdrs = ["my_dlpack/include/dlpack/dlpack.h"], includes = ["my_dlpack/include"])\n' \
  >>"$ws/BUILD"
(cd "$ws" && bz cquery --@dlmap//:dlpack=//:my_dlpack 'deps(@dlmap//:public_headers)') >"$scratch/deps.txt" 2>&1 ||
  { cat "$scratch/deps.txt"; fail "cquery with --@dlmap//:dlpack"; }
if ! grep -q '^//:my_dlpack ' "$scratch/deps.txt" || grep -q '^@dlmap_config//:dlpack ' "$scratch/deps.txt"; then
  fail "--@dlmap//:dlpack=//:my_dlpack did not replace the host's header"
fi
(cd "$ws" && bz build --@dlmap//:dlpack=//:my_dlpack @dlmap//:dlmap) || fail "@dlmap//:dlmap on the workspace's own DLPack"
(cd "$ws" && bz query --repo_env=DLPACK_INCLUDE_DIR="$ws/my_dlpack/include" @dlmap_config//:dlpack) >/dev/null
grep -q "^dlpack : $ws/my_dlpack/include/dlpack/dlpack.h " "$(cd "$ws" && bz info output_base)/external/dlmap_config/SUMMARY" ||
  fail "DLPACK_INCLUDE_DIR was not used"
echo "downstream: the DLPack header from --@dlmap//:dlpack=LABEL and from DLPACK_INCLUDE_DIR"
