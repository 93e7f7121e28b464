# dlmap codegen — command line: spec files → the C header, X-macro lists and re2c rules (one flag per file).
"""Usage: gen_c.py --spec FILE [--spec FILE …] [--base_profile FILE …] [--spec_h OUT] [--errors_inc OUT] …

--base_profile: a profile the spec's profile may name in `extends:` (dlmap_library passes every shipped one).

Writes only the outputs named on the command line. A spec mistake prints one line naming the file,
entry and key, and exits with status 1 (no traceback).
"""

import argparse
import sys

import emit
import spec


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", action="append", required=True, help="spec YAML file (repeatable, in order)")
    parser.add_argument("--base_profile", action="append", default=[], metavar="FILE",
                        help="a profile `extends:` may name (repeatable)")
    for name, path in emit.C_OUTPUT_PATHS.items():
        parser.add_argument("--" + name, metavar="OUT", help="write %s (Bazel: <lib>_gen/%s) here" % (name, path))
    args = parser.parse_args(argv)
    try:
        loaded = spec.load(args.spec, args.base_profile)
    except spec.SpecError as error:
        print("dlmap spec error: %s" % error, file=sys.stderr)
        return 1
    for name, function in emit.C_OUTPUTS.items():
        path = getattr(args, name)
        if path:
            with open(path, "w", encoding="utf-8", newline="\n") as handle:
                handle.write(function(loaded))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
