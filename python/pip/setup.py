# dlmap Python package — setuptools' build of the sdist //python/pip:sdist makes (this file is at its root): the C
# library twice, from the generated sources of each profile shipped under generated/<profile>/ (the //gpu:bundle
# pattern: no PyYAML or re2c here), the binding over each, and the checker package.
#   dlmap            the jax profile (the default, as //python:dlmap.so): the extension is the package's __init__, with
#                    dlmap.check (the conformance checker) and the spec it reads beside it, laid out as
#                    //python/check:jax is
#   dlmap_array_api  the array_api profile (as //python/array_api:dlmap.so), a module of its own name
# Compiled with the flags the Bazel build gives (C11, hidden visibility, -Wall -Wextra, -fno-wrapv after Python's
# -fwrapv, only PyInit_* exported by python/dlmap.lds),
# against config/dlmap_config.h (no toolkit: the GPU runtime is found at run time) and the DLPack header of
# $DLPACK_INCLUDE_DIR, else the system's, else the copy under third_party/dlpack/ (the header the release was built
# with).
import glob
import os
import re
import sys

import setuptools
from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

ROOT = os.path.dirname(os.path.abspath(__file__))
MODULES = (("dlmap.__init__", "dlmap", "jax"), ("dlmap_array_api", "dlmap_array_api", "array_api"))


def _read(path):
    with open(os.path.join(ROOT, path), encoding="utf-8") as handle:
        return handle.read()


def _fail(message):
    sys.exit("dlmap setup.py: %s" % message)


def _version():
    """MAJOR.MINOR.PATCH of include/dlmap/dlmap.h's DLMAP_VERSION_*: the project's one version."""
    header = _read("include/dlmap/dlmap.h")
    parts = [re.search(r"^#define DLMAP_VERSION_%s (\d+)$" % part, header, re.M)
             for part in ("MAJOR", "MINOR", "PATCH")]
    if not all(parts):
        _fail("include/dlmap/dlmap.h lacks DLMAP_VERSION_MAJOR, _MINOR or _PATCH")
    return ".".join(match.group(1) for match in parts)


def _need(path):
    if not os.path.exists(os.path.join(ROOT, path)):
        _fail("the sdist lacks %s, which the build needs: make it again (bazel build //python/pip:sdist)" % path)
    return path


def _dlpack_include():
    """The directory holding dlpack/dlpack.h: $DLPACK_INCLUDE_DIR, the system's (libdlpack-dev), else the sdist's copy.
    None for a system directory the compiler searches anyway."""
    chosen = os.environ.get("DLPACK_INCLUDE_DIR")
    if chosen:
        if not os.path.isfile(os.path.join(chosen, "dlpack", "dlpack.h")):
            _fail("DLPACK_INCLUDE_DIR=%s has no dlpack/dlpack.h" % chosen)
        return chosen
    for directory in ("/usr/include", "/usr/local/include"):
        if os.path.isfile(os.path.join(directory, "dlpack", "dlpack.h")):
            return None
    return _need("third_party/dlpack/include")


def _generated(profile):
    """generated/<profile>/: the bundle of that profile's generated sources; its MANIFEST lists what they came from."""
    directory = "generated/%s" % profile
    for path in ("MANIFEST", "include/dlmap/generated/dlmap_spec.h", "src/generated/name_lookup.c"):
        _need("%s/%s" % (directory, path))
    found = re.search(r"^profile (\S+)$", _read(directory + "/MANIFEST"), re.M)
    if found is None or found.group(1) != profile:
        _fail("%s/MANIFEST is not the %s profile's" % (directory, profile))
    return directory


def _extension(name, module_name, profile):
    generated = _generated(profile)
    # The C files of the Bazel build, as //python/pip:sdist listed them: the library's (//src:core_srcs and the link
    # guard) and the binding's (//python:binding_srcs); then the profile's re2c output.
    sources = [line for line in _read(_need("config/sources.txt")).splitlines() if line.endswith(".c")]
    sources.append(generated + "/src/generated/name_lookup.c")
    for path in sources + ["python/dlmap.lds", "config/dlmap_config.h"]:
        _need(path)
    dlpack = _dlpack_include()
    return Extension(
        name,
        sources=sources,
        # The include roots the sources use (gpu/check.sh's): "src/…", "python/…", <dlmap/…>, "dlmap_config.h",
        # and the generated "src/generated/…" and <dlmap/generated/…> of this profile.
        include_dirs=[generated, generated + "/include", ".", "include", "config"] + ([dlpack] if dlpack else []),
        define_macros=[("DLMAP_PY_MODULE_NAME", module_name)],
        # After Python's own CFLAGS, so these win: the Bazel build's warnings (.bazelrc) and signed overflow left
        # undefined, as there (Python's -fwrapv would define it as wrap-around and hide what UBSan and -Wextra catch).
        extra_compile_args=["-std=c11", "-fvisibility=hidden", "-pthread", "-Wall", "-Wextra", "-fno-wrapv"],
        extra_link_args=["-Wl,--version-script=python/dlmap.lds", "-pthread"],
        libraries=["dl"],
        depends=glob.glob("include/dlmap/*.h") + glob.glob("src/*.h") + glob.glob("python/*.h") +
        glob.glob(generated + "/**/*", recursive=True),
    )


class BuildExt(build_ext):
    """Each module in its own temporary directory: both compile src/*.c, against different generated tables."""

    def build_extension(self, ext):
        shared = self.build_temp
        self.build_temp = os.path.join(shared, ext.name)
        try:
            super().build_extension(ext)
        finally:
            self.build_temp = shared

    def finalize_options(self):
        super().finalize_options()
        self.parallel = None  # one module at a time: build_temp is swapped per module above


def _licence():
    """Apache-2.0 as the installed setuptools spells it: a License-Expression (PEP 639) from 77 on, where the older
    License field and licence classifiers are deprecated; before that, the License field and its classifier."""
    major = int(re.match(r"\d+", setuptools.__version__).group(0))
    if major >= 77:
        return {"license_expression": "Apache-2.0", "license_files": ["LICENSE"]}, []
    return {"license": "Apache-2.0", "license_files": ["LICENSE"]}, [
        "License :: OSI Approved :: Apache Software License"]


os.chdir(ROOT)  # setuptools takes the sources relative to the sdist's root
licence, licence_classifiers = _licence()
setup(
    name="dlmap",
    version=_version(),
    description="DLPack exchange from a declarative spec, and a conformance checker for any DLPack producer or "
    "consumer (dlmap.check)",
    long_description=_read("README.md"),
    long_description_content_type="text/markdown",
    author="dlmap authors",
    python_requires=">=3.11",
    # dlmap.check reads the spec's YAML (spec/*.yaml, its profiles) with PyYAML; Debian's python3-yaml provides it.
    install_requires=["PyYAML"],
    classifiers=[
        "Development Status :: 3 - Alpha",
        "Intended Audience :: Developers",
        "Intended Audience :: Science/Research",
        "Operating System :: POSIX :: Linux",
        "Programming Language :: C",
        "Programming Language :: Python :: 3",
        "Programming Language :: Python :: 3 :: Only",
        "Programming Language :: Python :: 3.11",
        "Programming Language :: Python :: 3.13",
        "Programming Language :: Python :: 3.14",
        "Programming Language :: Python :: Implementation :: CPython",
        "Topic :: Scientific/Engineering",
        "Topic :: Software Development :: Libraries",
        "Topic :: Software Development :: Testing",
    ] + licence_classifiers,
    package_dir={"": "package"},
    packages=["dlmap.check"],
    package_data={"dlmap.check": ["spec/*.yaml", "spec/profiles/*.yaml", "spec/built/*.yaml", "spec/built/spec.txt"]},
    include_package_data=False,
    ext_modules=[_extension(*module) for module in MODULES],
    cmdclass={"build_ext": BuildExt},
    entry_points={"console_scripts": ["dlmap-check = dlmap.check.__main__:console"]},
    zip_safe=False,
    **licence,
)
