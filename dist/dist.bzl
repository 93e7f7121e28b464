"""dlmap dist: dlmap_dist(name, library), the distributable archive of any library dlmap_library() made.

Public through @dlmap//:defs.bzl. The archive is for users without Bazel: the static library (PIC), dlmap's headers
and the spec's generated one, a pkg-config file, the spec files the library was built from (in the generator's
order), that spec's docs (dlmap_docs) and the licence, under dlmap/ (see dist/make_dist.sh).
"""

load("//docs:docs.bzl", "dlmap_docs")

# dlmap's own files, resolved in dlmap's repository so the macro works when loaded as @dlmap//….
_MAKE_DIST = str(Label("//dist:make_dist.sh"))
_PC_IN = str(Label("//dist:dlmap.pc.in"))
_LICENSE = str(Label("//:LICENSE"))
_HEADERS = [str(Label("//:include/dlmap/" + h)) for h in [
    "check.h",
    "dlmap.h",
    "dlpack_compat.h",
    "exchange.h",
    "profile.h",
]]

def _sibling(library, suffix):
    """The label of `library` + suffix (a target dlmap_library() defined beside it) from any way of writing it."""
    if ":" in library:
        return library + suffix
    if library.startswith("//") or library.startswith("@"):
        return "%s:%s%s" % (library, library.split("/")[-1], suffix)
    return ":" + library + suffix

def dlmap_dist(name, library, out = None, visibility = None, testonly = False):
    """The distributable archive `out` (default `name`.tar.gz) of `library`, and `name`_docs, its spec's pages.

    Example (a downstream BUILD): dlmap_dist(name = "acme_dist", library = ":acme_dlmap") writes
    bazel-bin/acme_dist.tar.gz; unpacked, `PKG_CONFIG_PATH=dlmap/lib/pkgconfig pkg-config --cflags --libs dlmap`
    compiles and links against Acme's library, share/dlmap/spec/ holds Acme's spec files (spec.txt lists their
    order) and share/doc/dlmap/ its docs.

    Args:
      name: the genrule; `name`_docs is the docs it packs, `name`_spec_files the list of its spec files.
      library: a cc_library made by dlmap_library() (its own label, not an alias).
      out: the archive's file name.
      visibility: of the archive.
      testonly: passed to every target.
    """
    spec = _sibling(library, "_spec")
    spec_h = _sibling(library, "_gen/include/dlmap/generated/dlmap_spec.h")
    raise_h = _sibling(library, "_gen/include/dlmap/generated/dlmap_raise.h")  # beside spec_h: make_dist.sh copies it
    docs = name + "_docs"
    dlmap_docs(name = docs, spec = [spec], testonly = testonly)

    # The spec files' paths in the generator's order, one a line ($(SRCS) keeps a filegroup's order; $(locations)
    # would sort them).
    spec_list = name + "_spec_files"
    native.genrule(
        name = spec_list,
        srcs = [spec],
        outs = [spec_list + ".txt"],
        cmd = "for f in $(SRCS); do echo $$f; done > $@",
        testonly = testonly,
    )

    # -c opt (dlmap's .bazelrc default) builds the library twice, lib.a and lib.pic.a: ship the PIC one, which links
    # into PIE executables (gcc's default) and shared objects alike.
    native.genrule(
        name = name,
        srcs = [library, spec_h, raise_h, spec, ":" + spec_list, ":" + docs, _PC_IN, _LICENSE] + _HEADERS,
        outs = [out or name + ".tar.gz"],
        cmd = " ".join([
            "lib=; for f in $(locations %s); do case $$f in *.pic.a) lib=$$f ;;" % library,
            "*.a) [ -n \"$$lib\" ] || lib=$$f ;; esac; done;",
            "$(location %s) $@ $$lib $(location %s) $(location %s)" % (_MAKE_DIST, spec_h, _PC_IN),
            "$(location %s) $(location :%s)" % (_LICENSE, docs),
            "--headers " + " ".join(["$(location %s)" % h for h in _HEADERS]),
            "--spec_list $(location :%s)" % spec_list,
        ]),
        tools = [_MAKE_DIST],
        visibility = visibility,
        testonly = testonly,
    )
