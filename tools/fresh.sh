#!/bin/sh
# README's two commands on a fresh machine: makes a clean Debian userland of RELEASE (debootstrap, minbase: nothing
# installed, no CUDA toolkit), clones this checkout's HEAD into it, runs `tools/run.sh` then `tools/test.sh` there (or
# COMMAND), prints how long each step took, and removes the userland again.
#
# Usage: tools/fresh.sh RELEASE [COMMAND]      (as root: debootstrap, mount and chroot need it)
#   RELEASE   bookworm (or 12), trixie (or 13), forky (or testing)
#   COMMAND   a shell command run in the clone, default: tools/run.sh && tools/test.sh
# Environment:
#   DLMAP_FRESH_ROOT     make the userland here and keep it; an existing one is reused (packages already
#                        installed stay, the clone is made anew). Default: a new directory under /var/tmp, removed.
#   DLMAP_FRESH_MIRROR   the Debian mirror (default: the one this machine's apt uses).
#   DLMAP_FRESH_ENV      NAME=VALUE words added to the command's otherwise empty environment.
set -eu

usage() { echo "usage: tools/fresh.sh bookworm|trixie|forky [COMMAND]" >&2; exit 2; }
[ "$#" -ge 1 ] || usage
case "$1" in
  bookworm | 12) release=bookworm ;;
  trixie | 13) release=trixie ;;
  forky | testing) release=forky ;;
  *) usage ;;
esac
# README's two commands, each timed.
readme='for step in tools/run.sh tools/test.sh; do begin=$(date +%s); $step || exit $?
  echo "fresh: $step passed in $(($(date +%s) - begin)) s"; done'
command_line=${2:-$readme}
[ "$(id -u)" -eq 0 ] || { echo "tools/fresh.sh: run as root (debootstrap, mount and chroot)" >&2; exit 2; }
checkout=$(cd "$(dirname "$0")/.." && pwd)

mirror=${DLMAP_FRESH_MIRROR:-$(awk '/^URIs:/ {print $2; exit}' /etc/apt/sources.list.d/debian.sources 2>/dev/null ||
  true)}
[ -n "$mirror" ] || mirror=$(awk '$1 == "deb" {print $2; exit}' /etc/apt/sources.list 2>/dev/null || true)
[ -n "$mirror" ] || mirror=http://deb.debian.org/debian

if [ -n "${DLMAP_FRESH_ROOT:-}" ]; then
  root=$DLMAP_FRESH_ROOT keep=1
else
  mkdir -p /var/tmp/dlmap-fresh
  root=$(mktemp -d "/var/tmp/dlmap-fresh/$release.XXXXXX") keep=0
fi

# Stops what the command left running in the userland (Bazel servers), unmounts it and, unless kept, deletes it.
cleanup() {
  for proc in /proc/[0-9]*; do
    [ "$(readlink "$proc/root" 2>/dev/null)" = "$root" ] && kill -9 "${proc#/proc/}" 2>/dev/null
  done
  sleep 1
  for mount_point in dev sys proc; do
    umount -R "$root/$mount_point" 2>/dev/null || umount -lR "$root/$mount_point" 2>/dev/null || true
  done
  # Never delete through a mount that is still there (it would reach the host's /dev).
  if grep -q " $root/" /proc/mounts; then
    echo "fresh: $root still has mounts; not deleted" >&2
  elif [ "$keep" -eq 0 ]; then
    rm -rf "$root"
  fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM

seconds() { date +%s; }
start=$(seconds)
if [ ! -x "$root/bin/sh" ]; then
  command -v debootstrap >/dev/null || apt-get install -y -qq --no-install-recommends debootstrap >/dev/null
  # Bookworm's debootstrap has no script for forky: testing bootstraps like sid.
  script=/usr/share/debootstrap/scripts/$release
  [ -e "$script" ] || script=/usr/share/debootstrap/scripts/sid
  echo "fresh: debootstrap $release from $mirror into $root"
  debootstrap --variant=minbase "$release" "$root" "$mirror" "$script" >"$root.debootstrap.log" 2>&1 ||
    { tail -20 "$root.debootstrap.log" >&2; exit 1; }
  rm -f "$root.debootstrap.log"
  # Testing's Release file may be past its Valid-Until on a snapshot mirror.
  echo 'Acquire::Check-Valid-Until "false";' >"$root/etc/apt/apt.conf.d/99dlmap-no-valid-until"
fi
bootstrapped=$(seconds)
for mount_point in proc sys dev; do
  mount --rbind "/$mount_point" "$root/$mount_point"
  mount --make-rslave "$root/$mount_point"
done
cp /etc/resolv.conf "$root/etc/resolv.conf"
rm -rf "$root/src/dlmap"
git clone --quiet "$checkout" "$root/src/dlmap"

echo "fresh: $release, checkout $(git -C "$checkout" rev-parse --short HEAD): $command_line"
status=0
chroot "$root" /usr/bin/env -i HOME=/root LANG=C.UTF-8 TERM=dumb PATH=/usr/local/bin:/usr/bin:/bin:/usr/sbin:/sbin \
  ${DLMAP_FRESH_ENV:-} /bin/sh -c "cd /src/dlmap && $command_line" || status=$?
chroot "$root" /bin/sh -c 'cd /src/dlmap && command -v bazel >/dev/null && bazel shutdown' >/dev/null 2>&1 || true
finished=$(seconds)
echo "fresh: $release: exit $status; userland $((bootstrapped - start)) s, command $((finished - bootstrapped)) s"
exit "$status"
