"""dlmap build macro: spec files → generated tables → one static library (and a CLI).

Both are built from the same hand-written C. The default library is dlmap_library(name = "dlmap",
spec = ["//spec:default"]); a downstream user, or a test, passes its own spec and edits no C.
"""

load("@dlmap_config//:build_defs.bzl", "PYTHON_BIN")
load("@rules_cc//cc:defs.bzl", "cc_binary", "cc_library")

# Generator flag → path of its output under <name>_gen/. Every generated path contains generated/. A copy of
# codegen/emit.py's OUTPUTS (Bazel 4.2.3 cannot load a generated .bzl); //codegen/tests:emit_test compares them.
_C_OUTPUTS = {
    "spec_h": "include/dlmap/generated/dlmap_spec.h",
    "device_types_inc": "src/generated/device_types.inc",
    "platforms_inc": "src/generated/platforms.inc",
    "runtime_symbols_inc": "src/generated/runtime_symbols.inc",
    "runtime_values_inc": "src/generated/runtime_values.inc",
    "runtime_streams_inc": "src/generated/runtime_streams.inc",
    "runtime_memory_types_inc": "src/generated/runtime_memory_types.inc",
    "runtime_contexts_inc": "src/generated/runtime_contexts.inc",
    "runtime_kernels_inc": "src/generated/runtime_kernels.inc",
    "memory_kinds_inc": "src/generated/memory_kinds.inc",
    "stream_conventions_inc": "src/generated/stream_conventions.inc",
    "stream_values_inc": "src/generated/stream_values.inc",
    "dtype_codes_inc": "src/generated/dtype_codes.inc",
    "dtype_widths_inc": "src/generated/dtype_widths.inc",
    "versions_inc": "src/generated/versions.inc",
    "flags_inc": "src/generated/flags.inc",
    "exception_kinds_inc": "src/generated/exception_kinds.inc",
    "placeholders_inc": "src/generated/placeholders.inc",
    "errors_inc": "src/generated/errors.inc",
    "error_related_inc": "src/generated/error_related.inc",
    "profile_inc": "src/generated/profile.inc",
    "device_names_re": "src/generated/device_names.re.inc",
    "platform_names_re": "src/generated/platform_names.re.inc",
    "dtype_names_re": "src/generated/dtype_names.re.inc",
    "platform_words_re": "src/generated/platform_words.re.inc",
    "exchange_inc": "src/generated/exchange.inc",
    "producer_states_inc": "src/generated/producer_states.inc",
    "raise_h": "include/dlmap/generated/dlmap_raise.h",
}

# Labels resolved here, in dlmap's repository, so that a consuming module need not see @dlmap_config itself.
_PYTHON = str(Label("@dlmap_config//:tools/python3"))
_RE2C = str(Label("@dlmap_config//:tools/re2c"))
_CONFIG = str(Label("@dlmap_config//:config"))

# dlmap's own targets, resolved relative to this file so the macros work from a downstream workspace
# that loads them as @dlmap//src:dlmap_library.bzl.
_GEN_C = str(Label("//codegen:gen_c.py"))
_GENERATOR = str(Label("//codegen:generator"))
_NAME_LOOKUP_RE = str(Label("//src:name_lookup.re"))
_CORE_SRCS = str(Label("//src:core_srcs"))
_PUBLIC_HEADERS = str(Label("//:public_headers"))
_CLI_SRCS = str(Label("//tools:cli_srcs"))
_CHECK_SPEC = str(Label("//codegen:check_spec.py"))
_PROFILES = str(Label("//spec:profiles"))
_ONE_LIBRARY_PER_BINARY = str(Label("//src:one_library_per_binary.c"))
_KERNEL_IMAGE = str(Label("//codegen:kernel_image.py"))
_KERNEL_PTX = str(Label("//src:backends/kernels/strided_copy.ptx"))
_KERNEL_SOURCE = str(Label("//src:backends/kernels/strided_copy.cu"))
_KERNEL_HEADER = str(Label("//src:backends/kernels/strided_copy_params.h"))

# Where the kernels' C image is generated, under <name>_gen/ beside the spec's tables (the sdist and //gpu:bundle carry
# it with them): the committed PTX, source and header as C arrays.
KERNEL_IMAGE_INC = "src/generated/strided_copy_image.inc"

# Flags for dlmap's own C: strict, warnings are errors.
DLMAP_COPTS = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic"]

def dlmap_library(name, spec, visibility = None, testonly = False, config = _CONFIG):
    """A static library `name` whose tables come from `spec`.

    Also defines `<name>_spec` (the spec files, in order), `<name>_gen` (the generated files) for docs and tests,
    and `<name>_one_library_per_binary`, the link guard: a binary that links two libraries made here fails to link
    (see src/one_library_per_binary.c).

    Args:
      name: the cc_library's name; `<name>_gen*` are the generated files and their libraries,
        `<name>_one_library_per_binary` its link guard.
      spec: a list of YAML labels, read in order.
      visibility: of the library.
      testonly: passed to every target.
      config: provides dlmap_config.h, what the host detection found (the GPU backend reads only the toolkit's
        runtime path from it, as one more place to look); tests pass their own to build as on a machine without
        a toolkit.
    """
    gen = name + "_gen"
    outs = {flag: gen + "/" + path for flag, path in _C_OUTPUTS.items()}

    # The spec files in the order the generator reads them, for the tools built on this library (dlmap_cli's
    # `spec check --on-default`, dlmap_dist's archive).
    native.filegroup(
        name = name + "_spec",
        srcs = spec,
        visibility = visibility,
        testonly = testonly,
    )
    native.genrule(
        name = gen,
        srcs = spec + [_PROFILES],
        outs = outs.values(),
        tools = [_PYTHON, _GEN_C, _GENERATOR],
        # The spec's files in order; dlmap's shipped profiles are what a profile's `extends:` may name.
        cmd = " ".join(
            [
                "specs=; for f in %s; do specs=\"$$specs --spec $$f\"; done;" % " ".join(
                    ["$(locations %s)" % label for label in spec],
                ),
                "for f in $(locations %s); do specs=\"$$specs --base_profile $$f\"; done;" % _PROFILES,
                "$(location %s) $(location %s) $$specs" % (_PYTHON, _GEN_C),
            ] +
            ["--%s $(location %s)" % (flag, out) for flag, out in outs.items()],
        ),
        testonly = testonly,
    )
    re_incs = [outs[flag] for flag in ("device_names_re", "platform_names_re", "dtype_names_re", "platform_words_re")]
    lookup_c = gen + "/src/generated/name_lookup.c"
    native.genrule(
        name = gen + "_re2c",
        srcs = [_NAME_LOOKUP_RE] + re_incs,
        outs = [lookup_c],
        tools = [_RE2C],
        cmd = "$(location %s) -W -Werror --no-generation-date --no-version -i -I $$(dirname $(location %s)) -o $@ $(location %s)" % (_RE2C, re_incs[0], _NAME_LOOKUP_RE),
        testonly = testonly,
    )

    # The kernels' C image: the same for every spec, made here so that each library's generated files are complete.
    kernel_image = gen + "/" + KERNEL_IMAGE_INC
    native.genrule(
        name = gen + "_kernels",
        srcs = [_KERNEL_PTX, _KERNEL_SOURCE, _KERNEL_HEADER],
        outs = [kernel_image],
        tools = [_PYTHON, _KERNEL_IMAGE],
        cmd = "$(location %s) $(location %s) --ptx $(location %s) --source $(location %s) --header $(location %s) --out $@" % (
            _PYTHON,
            _KERNEL_IMAGE,
            _KERNEL_PTX,
            _KERNEL_SOURCE,
            _KERNEL_HEADER,
        ),
        testonly = testonly,
    )

    cc_library(
        name = gen + "_spec_header",
        hdrs = [outs["spec_h"], outs["raise_h"]],
        strip_include_prefix = gen + "/include",
        testonly = testonly,
    )
    cc_library(
        name = gen + "_tables",
        hdrs = [out for flag, out in outs.items() if flag not in ("spec_h", "raise_h")] + [kernel_image],
        strip_include_prefix = gen,
        testonly = testonly,
    )

    # The link guard: one object per library, linked whole (alwayslink) and statically (linkstatic, so a test in
    # Bazel's dynamic link mode does not get it as a shared object, where a second definition is no error). Its
    # one symbol is defined once per library, so a binary linking two libraries fails with "multiple definition of
    # `dlmap_link_error_two_dlmap_libraries_in_one_binary_link_only_one_see_README`" naming both guards, and the
    # same library reached twice is linked once. Its own target per library: a shared one would be linked once.
    guard = name + "_one_library_per_binary"
    cc_library(
        name = guard,
        srcs = [_ONE_LIBRARY_PER_BINARY],
        copts = DLMAP_COPTS,
        alwayslink = True,
        linkstatic = True,
        testonly = testonly,
    )
    cc_library(
        name = name,
        srcs = [_CORE_SRCS, lookup_c],
        copts = DLMAP_COPTS,
        linkopts = ["-ldl"],
        linkstatic = True,
        deps = [
            ":" + guard,
            ":" + gen + "_spec_header",
            ":" + gen + "_tables",
            _PUBLIC_HEADERS,
            config,
        ],
        visibility = visibility,
        testonly = testonly,
    )

def _sibling(label, suffix):
    """The label of the target named like `label`'s plus suffix, in the same package: //src:dlmap → //src:dlmap_spec."""
    if label.startswith(":") or ":" in label.rpartition("//")[2]:
        return label + suffix
    if "//" in label:  # //src is //src:src
        return label + ":" + label.rpartition("/")[2] + suffix
    if label.startswith("@"):  # @repo is @repo//:repo
        return label + "//:" + label.lstrip("@") + suffix
    return label + suffix

def dlmap_cli(name, library, spec = None, visibility = None, testonly = False):
    """The `dlmap` command line linked against a library made by dlmap_library, calling itself `name`.

    Args:
      name: the binary; also the name it prints in usage, help and errors. `<name>_built_spec` is its generated
        list of spec files.
      library: a cc_library made by dlmap_library().
      spec: the spec files `spec check --on-default` checks overlays on, in order; by default the library's own
        (`<library>_spec`, which dlmap_library() defines).
      visibility: of the binary.
      testonly: passed to every target.
    """
    if spec == None:
        spec = [_sibling(library, "_spec")]
    built_spec = name + "_built_spec"

    # The spec files (in order: $(SRCS) keeps it, $(rootpaths) sorts) and the validator as root paths, which the
    # CLI finds in its runfiles (tools/cmd_spec.c): an execution path less bazel-out/<config>/bin/, and
    # external/<repo>/ as ../<repo>/.
    native.genrule(
        name = built_spec,
        srcs = spec,
        outs = [built_spec + ".c"],
        tools = [_CHECK_SPEC],
        cmd = " ".join([
            "{ echo '/* Generated by dlmap_cli(): the spec this CLI was built from (tools/cli.h). */';",
            "echo 'const char *const cli_built_spec[] = {';",
            "for f in $(SRCS); do",
            "echo \"  \\\"$$(echo $$f | sed -e 's|^bazel-out/[^/]*/bin/||' -e 's|^external/|../|')\\\",\"; done;",
            "echo '  0};';",
            "echo 'const char *const cli_spec_checker = \"$(rootpath %s)\";'; } > $@" % _CHECK_SPEC,
        ]),
        testonly = testonly,
    )
    cc_binary(
        name = name,
        srcs = [_CLI_SRCS, ":" + built_spec],
        copts = DLMAP_COPTS + ["-D_POSIX_C_SOURCE=200809L"],
        # `dlmap spec check` runs the generator's validator with the Python the build detected; the CLI prints
        # its own name.
        local_defines = [
            "DLMAP_PYTHON=\\\"%s\\\"" % PYTHON_BIN,
            "DLMAP_CLI_NAME=\\\"%s\\\"" % name,
        ],
        data = [_GENERATOR, _PROFILES] + spec,
        deps = [library, _CONFIG],
        visibility = visibility,
        testonly = testonly,
    )
