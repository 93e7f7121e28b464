# dlmap codegen — command line: validate spec files and report the first mistake (used by `dlmap spec check`).
"""Usage: check_spec.py [--base_profile FILE …] FILE [FILE …]
exit 0 when the files form a valid spec, 1 otherwise.

A profile's `extends:` names one of dlmap's shipped profiles: those given with --base_profile, else the
spec/profiles/*.yaml beside this codegen/ directory (in a source tree, and in the runfiles of a dlmap CLI).
"""

import glob
import os
import sys

import spec

SHIPPED_PROFILES = os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "spec", "profiles")


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    bases = []
    while len(argv) >= 2 and argv[0] == "--base_profile":
        bases.append(argv[1])
        argv = argv[2:]
    if not argv:
        print(__doc__, file=sys.stderr)
        return 2
    try:
        loaded = spec.load(argv, bases or sorted(glob.glob(os.path.join(SHIPPED_PROFILES, "*.yaml"))))
    except spec.SpecError as error:
        print("dlmap spec error: %s" % error, file=sys.stderr)
        return 1
    print("spec OK: profile %s, %d device types, %d dtype codes, %d errors, DLPack %s (%s)" % (
        loaded.profile.name, len(loaded.device_types), len(loaded.dtype_codes), len(loaded.errors),
        loaded.abi.current, ", ".join(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
