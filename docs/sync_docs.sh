#!/bin/bash
# dlmap docs — the committed pages against what dlmap_docs() generates: --out (//docs:update) copies the generated
# pages into the source tree, --check (docs_fresh_test) names each committed page that differs.
# Usage (arguments come from docs/BUILD): sync_docs.sh --out|--check GENERATED DIR [GENERATED DIR ...]
#   GENERATED: runfiles path of a dlmap_docs() directory (devices.md, errors/*.md);
#   DIR: where under docs/ that spec's pages are committed (. for the default profile).
# The generator owns devices.md and errors/*.md under DIR: --out removes an errors/ page the spec no longer has and
# --check names it; other files under DIR are left alone.
set -euo pipefail

if [[ $# -lt 3 || $(( $# % 2 )) -ne 1 ]]; then
  echo "usage: sync_docs.sh --out|--check GENERATED DIR [GENERATED DIR ...]" >&2
  exit 2
fi
mode=$1
shift
refresh="bazel run //docs:update"

# The generated directories, as absolute paths before leaving the directory Bazel started in.
started=$PWD
pairs=()
while [[ $# -gt 0 ]]; do
  generated=$1
  [[ $generated == /* ]] || generated=$started/$generated
  [[ -f $generated/devices.md ]] || { echo "sync_docs.sh: $1 holds no devices.md (not a dlmap_docs() output)" >&2; exit 2; }
  pairs+=("$generated" "$2")
  shift 2
done

case $mode in
  --out)
    if [[ -z "${BUILD_WORKSPACE_DIRECTORY:-}" ]]; then
      echo "sync_docs.sh: --out rewrites the source tree; run it with: $refresh" >&2
      exit 2
    fi
    root=$BUILD_WORKSPACE_DIRECTORY/docs
    ;;
  --check)
    # dlmap's root in the runfiles: where Bazel starts the test, or under it when a consumer runs
    # `bazel test @dlmap//...` (DLMAP_ROOT, tests/test_root.bzl).
    cd "$started/${DLMAP_ROOT:-.}"
    root=docs
    ;;
  *)
    echo "sync_docs.sh: unknown mode '$mode' (expected --out or --check)" >&2
    exit 2
    ;;
esac

# owned DIR: the generator's pages under DIR, relative to it, one a line (devices.md, errors/*.md).
owned() {
  [[ ! -f $1/devices.md ]] || echo devices.md
  if [[ -d $1/errors ]]; then (cd "$1" && find -L errors -maxdepth 1 -type f -name '*.md' | LC_ALL=C sort); fi
}

stale=0
set -- "${pairs[@]}"
while [[ $# -gt 0 ]]; do
  generated=$1 dest=$root
  [[ $2 == . ]] || dest=$root/$2
  shift 2
  changed=0 removed=()
  mapfile -t pages < <(owned "$generated")
  for page in "${pages[@]}"; do
    if cmp -s "$generated/$page" "$dest/$page"; then continue; fi
    if [[ $mode == --out ]]; then
      mkdir -p "$(dirname "$dest/$page")"
      cp "$generated/$page" "$dest/$page"
      chmod u+w "$dest/$page"
    elif [[ -f $dest/$page ]]; then
      echo "$dest/$page: stale"
      diff -u "$dest/$page" "$generated/$page" | head -n 12 || true
    else
      echo "$dest/$page: missing"
    fi
    changed=$((changed + 1))
  done
  while IFS= read -r page; do
    [[ ! -f $generated/$page ]] || continue
    if [[ $mode == --out ]]; then rm "$dest/$page"; removed+=("$page"); else echo "$dest/$page: not generated"; fi
    changed=$((changed + 1))
  done < <(owned "$dest")
  if [[ $mode == --out ]]; then
    echo "wrote ${#pages[@]} docs files to $dest ($changed changed${removed:+, removed: ${removed[*]}})"
  elif [[ $changed -gt 0 ]]; then
    stale=1
  fi
done
if [[ $stale -ne 0 ]]; then
  echo "docs are stale; refresh them with: $refresh"
  exit 1
fi
