# dlmap Python package — writes //python/pip:sdist: stages the files python/pip/setup.py builds from (the hand-written
# C, the generated sources of each profile from their bundles, the checker and its spec), has setuptools make the sdist
# of that tree (PEP 517 build_sdist: PKG-INFO and the file list are setuptools' own), and stores it reproducibly.
"""usage: make_sdist.py --out FILE --setup-files FILE... --readme FILE --license FILE --config FILE --dlpack FILE
    --sources FILE... --check FILE... --generator FILE... --facts FILE... --profiles FILE... --built-spec FILE...
    --generated PROFILE FILE... [--generated PROFILE FILE...] --inputs PROFILE FILE... [--inputs PROFILE FILE...]

Where each goes in the sdist:
  --setup-files   setup.py, pyproject.toml, MANIFEST.in: its root
  --readme        README.md: the sdist's README.md (the long description) is its title, first paragraph and the
                  "## Python" and "## Conformance checker" sections
  --license       LICENSE: its root
  --config        config/dlmap_config.h (the build without a toolkit)
  --dlpack        third_party/dlpack/include/dlpack/dlpack.h (the DLPack header this build used; setup.py's fallback)
  --sources       the C sources and headers of the library and binding, at their paths in the checkout; their .c files
                  are listed, in order, in config/sources.txt (what setup.py compiles)
  --check         package/dlmap/check/<name> (the checker's Python and tests/spec_facts/spec_facts.py)
  --generator     the generator's files: CHECK_CODEGEN's go to package/dlmap/check/
  --facts         package/dlmap/check/spec/<name>; --profiles package/dlmap/check/spec/profiles/<name>
  --built-spec    the module's spec in the generator's order: package/dlmap/check/spec/built/NNN-<name> and spec.txt
  --generated     PROFILE's generated sources (its library's _gen and _gen_re2c files): generated/PROFILE/, under
                  their paths from include/dlmap/generated/ or src/generated/ on (the layout //gpu:bundle has)
  --inputs        what PROFILE's generated sources came from (its spec, the generator, name_lookup.re), recorded in
                  generated/PROFILE/MANIFEST as gpu/make_bundle.py does (`sha256sum -c` lines from the checkout root)
Members are sorted, owned by 0:0, dated 1980-01-02 (wheels are zip files, which start in 1980), files 0644 and
directories 0755, gzip without name or time: the same inputs give the same bytes.
"""
import argparse
import gzip
import hashlib
import io
import os
import re
import shutil
import subprocess
import sys
import tarfile
import tempfile

# The generator's modules the conformance checker reads (python/check/check_package.bzl CHECK_CODEGEN): the merge rule
# of `extends:` and the profile schema.
CHECK_CODEGEN = ("profile_extends.py", "profile_settings.py")

_EXTERNAL = re.compile(r"^(?:bazel-out/[^/]+/bin/)?(?:external/[^/]+/)?")
_LAYOUT = re.compile(r"(?:^|/)((?:include/dlmap|src)/generated/[^/]+)$")
MTIME = 315619200  # 1980-01-02T00:00:00Z


def _checkout_path(path):
    """A file's path in dlmap's checkout, from its path in Bazel's execution root (dlmap may be an external repo)."""
    return _EXTERNAL.sub("", path)


def _copy(src, stage, dest):
    target = os.path.join(stage, dest)
    if os.path.exists(target):
        sys.exit("make_sdist.py: two files would be stored as %s" % dest)
    os.makedirs(os.path.dirname(target), exist_ok=True)
    shutil.copyfile(src, target)


def _readme_python_part(text):
    """The title, the first paragraph, and the Python and conformance checker sections of README.md."""
    lines = text.splitlines()
    title = lines[0]
    body = text.split("\n\n")
    intro = body[1] if len(body) > 1 else ""
    sections = re.split(r"(?m)^(?=## )", text)
    wanted = [s.rstrip() for s in sections if s.startswith(("## Python\n", "## Conformance checker\n"))]
    if len(wanted) != 2:
        sys.exit("make_sdist.py: README.md lacks its '## Python' or '## Conformance checker' section")
    return "\n\n".join([title, intro.strip()] + wanted) + "\n"


def _version(stage):
    with open(os.path.join(stage, "include/dlmap/dlmap.h"), encoding="utf-8") as handle:
        header = handle.read()
    parts = [re.search(r"^#define DLMAP_VERSION_%s (\d+)$" % p, header, re.M) for p in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        sys.exit("make_sdist.py: include/dlmap/dlmap.h lacks DLMAP_VERSION_*")
    return ".".join(m.group(1) for m in parts)


def _normalise(member):
    member.mtime = MTIME
    member.uid = member.gid = 0
    member.uname = member.gname = ""
    member.mode = 0o755 if member.isdir() else 0o644
    member.pax_headers = {}  # setuptools' own (times among them); tarfile writes what a long name needs again
    return member


def main(argv):
    parser = argparse.ArgumentParser(usage=__doc__)
    parser.add_argument("--out", required=True)
    for option in ("setup-files", "sources", "check", "generator", "facts", "profiles", "built-spec"):
        parser.add_argument("--" + option, nargs="+", required=True)
    for option in ("generated", "inputs"):
        parser.add_argument("--" + option, nargs="+", action="append", required=True)
    for option in ("readme", "license", "config", "dlpack"):
        parser.add_argument("--" + option, required=True)
    args = parser.parse_args(argv)

    work = tempfile.mkdtemp(prefix="dlmap_sdist.")
    try:
        stage = os.path.join(work, "stage")
        os.makedirs(stage)
        for path in args.setup_files + [args.license]:
            _copy(path, stage, os.path.basename(path))
        with open(args.readme, encoding="utf-8") as handle:
            readme = _readme_python_part(handle.read())
        with open(os.path.join(stage, "README.md"), "w", encoding="utf-8") as handle:
            handle.write(readme)
        _copy(args.config, stage, "config/dlmap_config.h")
        _copy(args.dlpack, stage, "third_party/dlpack/include/dlpack/dlpack.h")
        c_files = []
        for path in args.sources:
            _copy(path, stage, _checkout_path(path))
            if path.endswith(".c"):
                c_files.append(_checkout_path(path))
        with open(os.path.join(stage, "config/sources.txt"), "w", encoding="utf-8") as handle:
            handle.write("".join(f + "\n" for f in sorted(c_files)))
        check = "package/dlmap/check/"
        for path in args.check:
            _copy(path, stage, check + os.path.basename(path))
        for path in args.generator:
            if os.path.basename(path) in CHECK_CODEGEN:
                _copy(path, stage, check + os.path.basename(path))
        for path in args.facts:
            _copy(path, stage, check + "spec/" + os.path.basename(path))
        for path in args.profiles:
            _copy(path, stage, check + "spec/profiles/" + os.path.basename(path))
        names = ["%03d-%s" % (i, os.path.basename(path)) for i, path in enumerate(args.built_spec)]
        for name, path in zip(names, args.built_spec):
            _copy(path, stage, check + "spec/built/" + name)
        with open(os.path.join(stage, check + "spec/built/spec.txt"), "w", encoding="utf-8") as handle:
            handle.write("".join(n + "\n" for n in names))
        inputs = {group[0]: group[1:] for group in args.inputs}
        for group in args.generated:
            profile, files = group[0], group[1:]
            if profile not in inputs:
                sys.exit("make_sdist.py: no --inputs for the %s profile" % profile)
            for path in files:
                match = _LAYOUT.search(path)
                if match is None:
                    sys.exit("make_sdist.py: %s is not under include/dlmap/generated/ or src/generated/" % path)
                _copy(path, stage, "generated/%s/%s" % (profile, match.group(1)))
            manifest = ["# dlmap sdist: generated sources for the %s profile; built from (sha256sum -c, from the "
                        "checkout's root):" % profile, "profile %s" % profile]
            for path in sorted(set(inputs[profile])):
                with open(path, "rb") as handle:
                    manifest.append("%s  %s" % (hashlib.sha256(handle.read()).hexdigest(), _checkout_path(path)))
            with open(os.path.join(stage, "generated", profile, "MANIFEST"), "w", encoding="utf-8") as handle:
                handle.write("\n".join(manifest) + "\n")

        # setuptools' own sdist of the staged tree (PKG-INFO, the egg-info, MANIFEST.in applied), in a child so that
        # its output and working directory stay its own.
        built = os.path.join(work, "built")
        os.makedirs(built)
        env = dict(os.environ, PYTHONDONTWRITEBYTECODE="1", SOURCE_DATE_EPOCH=str(MTIME))
        result = subprocess.run(
            [sys.executable, "-c", "import sys, setuptools.build_meta as b; print(b.build_sdist(sys.argv[1]))", built],
            cwd=stage, env=env, stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
        if result.returncode != 0:
            sys.exit("make_sdist.py: setuptools' build_sdist failed:\n" + result.stdout[-4000:])
        name = "dlmap-%s.tar.gz" % _version(stage)
        produced = os.path.join(built, result.stdout.strip().splitlines()[-1])
        if os.path.basename(produced) != name:
            sys.exit("make_sdist.py: setuptools wrote %s, expected %s" % (os.path.basename(produced), name))

        with tarfile.open(produced, "r:gz") as source:
            members = sorted(source.getmembers(), key=lambda m: m.name)
            with open(args.out, "wb") as raw:
                with gzip.GzipFile(filename="", mode="wb", fileobj=raw, mtime=0) as compressed:
                    with tarfile.open(fileobj=compressed, mode="w", format=tarfile.PAX_FORMAT) as tar:
                        for member in members:
                            data = source.extractfile(member).read() if member.isfile() else None
                            tar.addfile(_normalise(member), io.BytesIO(data) if data is not None else None)
    finally:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main(sys.argv[1:])
