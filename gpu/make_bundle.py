# dlmap GPU check — writes //gpu:bundle: the generated sources a dlmap_library target compiles, as one deterministic
# tar.gz that gpu/check.sh builds from on a machine without PyYAML or re2c (ninja ships re2c's lexer.cc the same way).
"""usage: make_bundle.py --out FILE --profile NAME --generated FILE... [--also NAME FILE...]... --inputs FILE...

--generated: the files of <library>_gen and <library>_gen_re2c, stored under the part of their path that starts at
include/dlmap/generated/ or src/generated/ (the layout the C sources include them by).
--also NAME FILE...: another profile's generated files, stored the same way under profiles/NAME/ (gpu/check.sh builds
a second module from them: the jax profile's, for the JAX differential) and named in MANIFEST as `also NAME`.
--inputs: what they were generated from (the spec, the generator, name_lookup.re), recorded in MANIFEST as
`sha256sum -c` lines relative to the workspace root, so gpu/check.sh can refuse a bundle of another checkout.
The archive is reproducible: members sorted by name, mtime 0, owner 0:0, mode 0644, gzip without name or time.
"""
import argparse
import gzip
import hashlib
import io
import re
import sys
import tarfile

# Where a generated file lives relative to the include roots the C sources use (every generated path has generated/).
_LAYOUT = re.compile(r"(?:^|/)((?:include/dlmap|src)/generated/[^/]+)$")


def _member(name, data):
    info = tarfile.TarInfo(name)
    info.size = len(data)
    info.mtime = 0
    info.mode = 0o644
    info.uid = info.gid = 0
    info.uname = info.gname = ""
    return info, io.BytesIO(data)


_EXTERNAL = re.compile(r"^external/[^/]+/")


def _read(path):
    with open(path, "rb") as handle:
        return handle.read()


def main(argv):
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--out", required=True)
    parser.add_argument("--profile", required=True)
    parser.add_argument("--generated", nargs="+", required=True)
    parser.add_argument("--also", nargs="+", action="append", default=[], metavar="NAME FILE")
    parser.add_argument("--inputs", nargs="+", required=True)
    args = parser.parse_args(argv)

    members = {}

    def store(prefix, paths):
        for path in paths:
            match = _LAYOUT.search(path)
            if match is None:
                sys.exit("make_bundle.py: %s is not under include/dlmap/generated/ or src/generated/" % path)
            name = prefix + match.group(1)
            if name in members:
                sys.exit("make_bundle.py: two generated files would be stored as %s" % name)
            members[name] = _read(path)

    store("", args.generated)
    also = []
    for entry in args.also:
        if len(entry) < 2 or not re.match(r"^[a-z][a-z0-9_]*$", entry[0]) or entry[0] == args.profile:
            sys.exit("make_bundle.py: --also takes a profile name other than --profile's, then its generated files")
        store("profiles/%s/" % entry[0], entry[1:])
        also.append(entry[0])
    manifest = ["# dlmap GPU bundle: generated sources for the %s profile%s; built from (sha256sum -c, from the "
                "checkout's root):" % (args.profile, "".join(" and the %s profile (profiles/%s/)" % (n, n)
                                                              for n in also)),
                "profile %s" % args.profile] + ["also %s" % name for name in also]
    # Paths from dlmap's root: where dlmap is another workspace's dependency, Bazel names its files external/<repo>/….
    manifest += ["%s  %s" % (hashlib.sha256(_read(path)).hexdigest(), _EXTERNAL.sub("", path))
                 for path in sorted(set(args.inputs))]
    members["MANIFEST"] = ("\n".join(manifest) + "\n").encode()

    with open(args.out, "wb") as raw:
        with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed:
            with tarfile.open(fileobj=compressed, mode="w", format=tarfile.USTAR_FORMAT) as tar:
                for name in sorted(members):
                    tar.addfile(*_member(name, members[name]))


if __name__ == "__main__":
    main(sys.argv[1:])
