"""dlmap's public Bazel macros, one load for all: load("@dlmap//:defs.bzl", "dlmap_library", …).

Each builds one tool from a spec — dlmap's shipped ones or yours (facts, one profile, overlays; see README "Consume
dlmap from another Bazel workspace"):
  dlmap_library(name, spec)       the static C library whose tables come from `spec`, and `name`_spec, its files
  dlmap_cli(name, library)        the `dlmap` command line over that library
  dlmap_docs(name, spec)          devices.md and errors/*.md of `spec`, in the directory `name`/
  dlmap_dist(name, library)       the archive for users without Bazel: library, headers, pkg-config, spec, docs
  dlmap_python_module(library, name, module_name)  the CPython extension over that library, imported as
                                  `module_name` (default dlmap; the file is `module_name`.so)
  dlmap_check_package(name, module, spec)  the conformance checker's package around a `dlmap` extension, judging
                                  by `spec`'s profile
  DLMAP_PYTHON_BIN                the Python 3 interpreter dlmap's configuration found, for tests that import them
Every one resolves dlmap's own files in dlmap's repository, so they work from another workspace in both Bazel modes.
"""

load("@dlmap_config//:build_defs.bzl", _PYTHON_BIN = "PYTHON_BIN")
load("//dist:dist.bzl", _dlmap_dist = "dlmap_dist")
load("//docs:docs.bzl", _dlmap_docs = "dlmap_docs")
load("//python:dlmap_module.bzl", _dlmap_python_module = "dlmap_python_module")
load("//python/check:check_package.bzl", _dlmap_check_package = "dlmap_check_package")
load("//src:dlmap_library.bzl", _dlmap_cli = "dlmap_cli", _dlmap_library = "dlmap_library")

dlmap_library = _dlmap_library
dlmap_cli = _dlmap_cli
dlmap_docs = _dlmap_docs
dlmap_dist = _dlmap_dist
dlmap_python_module = _dlmap_python_module
dlmap_check_package = _dlmap_check_package
DLMAP_PYTHON_BIN = _PYTHON_BIN
