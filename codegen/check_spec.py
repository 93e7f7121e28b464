# dlmap codegen — command line: validate spec files and report the first mistake (used by `dlmap spec check`).
"""Usage: check_spec.py FILE [FILE …]   exit 0 when the files form a valid spec, 1 otherwise."""

import sys

import spec


def main(argv):
    if not argv or argv[0] in ("-h", "--help"):
        print(__doc__, file=sys.stderr)
        return 2
    try:
        loaded = spec.load(argv)
    except spec.SpecError as error:
        print("dlmap spec error: %s" % error, file=sys.stderr)
        return 1
    print("spec OK: profile %s, %d device types, %d dtype codes, %d errors, DLPack %s (%s)" % (
        loaded.profile.name, len(loaded.device_types), len(loaded.dtype_codes), len(loaded.errors),
        loaded.abi.current, ", ".join(argv)))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
