# dlmap codegen — command line: spec files → the Markdown under docs/ (write it, or check it is fresh).
"""Usage: gen_docs.py --spec FILE [--spec FILE …] [--base_profile FILE …] (--out DIR | --check DIR)

--out DIR    writes devices.md, errors/README.md and errors/<id>.md under DIR (creating errors/),
             rewriting only files whose text changed and removing errors/*.md pages of errors the
             spec no longer has. Other files under DIR are left alone.
--check DIR  regenerates in memory and compares with DIR: each missing, different or extra generated
             file is named, and the exit status is 1. Exit 0 when DIR is up to date.

A spec mistake prints one line naming the file, entry and key, and exits with status 1 (no traceback).
"""

import argparse
import difflib
import os
import sys

import emit_docs
import spec

STALE_MESSAGE = "docs are stale; refresh them with: %s" % emit_docs.REFRESH_COMMAND
_DIFF_LINES = 12  # lines of diff shown per stale file: enough to see what changed, short in a test log


def _read(path):
    """The file's text exactly as stored (no newline translation), or None when it does not exist."""
    try:
        with open(path, encoding="utf-8", newline="") as handle:
            return handle.read()
    except FileNotFoundError:
        return None
    except UnicodeDecodeError:
        return "\ufffd"  # not UTF-8, so certainly not what the generator writes


def _owned_on_disk(root):
    """Paths (relative to root) of existing files the generator owns: devices.md and errors/*.md."""
    paths = ["devices.md"] if os.path.isfile(os.path.join(root, "devices.md")) else []
    errors = os.path.join(root, "errors")
    if os.path.isdir(errors):
        paths += ["errors/" + name for name in sorted(os.listdir(errors))
                  if name.endswith(".md") and os.path.isfile(os.path.join(errors, name))]
    return [path for path in paths if emit_docs.is_generated_path(path)]


def write(docs, root):
    changed = 0
    os.makedirs(os.path.join(root, "errors"), exist_ok=True)
    for path, text in docs.items():
        target = os.path.join(root, path)
        if _read(target) == text:
            continue
        with open(target, "w", encoding="utf-8", newline="\n") as handle:
            handle.write(text)
        changed += 1
    removed = [path for path in _owned_on_disk(root) if path not in docs]
    for path in removed:
        os.remove(os.path.join(root, path))
    print("wrote %d docs files to %s (%d changed, %d stale removed%s)" % (
        len(docs), root, changed, len(removed), ": " + ", ".join(removed) if removed else ""))
    return 0


def check(docs, root):
    problems = 0
    for path, text in docs.items():
        current = _read(os.path.join(root, path))
        if current is None:
            print("missing: %s" % path, file=sys.stderr)
        elif current != text:
            print("differs: %s" % path, file=sys.stderr)
            diff = list(difflib.unified_diff(current.splitlines(), text.splitlines(), "committed/" + path,
                                             "generated/" + path, n=0, lineterm=""))
            for row in diff[:_DIFF_LINES]:
                print("    " + row, file=sys.stderr)
            if len(diff) > _DIFF_LINES:
                print("    … (%d more diff lines)" % (len(diff) - _DIFF_LINES), file=sys.stderr)
        else:
            continue
        problems += 1
    for path in _owned_on_disk(root):
        if path not in docs:
            print("extra: %s (no such error in the spec)" % path, file=sys.stderr)
            problems += 1
    if problems:
        print(STALE_MESSAGE, file=sys.stderr)
        return 1
    print("docs up to date (%d files in %s)" % (len(docs), root))
    return 0


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--spec", action="append", required=True, help="spec YAML file (repeatable, in order)")
    parser.add_argument("--base_profile", action="append", default=[], metavar="FILE",
                        help="a profile `extends:` may name (repeatable; dlmap's shipped spec/profiles/*.yaml)")
    mode = parser.add_mutually_exclusive_group(required=True)
    mode.add_argument("--out", metavar="DIR", help="write the docs under DIR")
    mode.add_argument("--check", metavar="DIR", help="compare DIR's docs with the spec; exit 1 when stale")
    args = parser.parse_args(argv)
    try:
        docs = emit_docs.emit_docs(spec.load(args.spec, args.base_profile))
    except spec.SpecError as error:
        print("dlmap spec error: %s" % error, file=sys.stderr)
        return 1
    if args.out is not None:
        return write(docs, args.out)
    return check(docs, args.check)


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
