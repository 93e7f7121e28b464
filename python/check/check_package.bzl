"""dlmap conformance checker: dlmap_check_package(name, module, spec), a directory `name`/ holding the `dlmap` package.

With it `PYTHONPATH=bazel-bin/<pkg>/<name> python3 -m dlmap.check …` works: the extension as dlmap/__init__.so (an
extension may be a package's __init__; Python then gives it __path__), the checker as dlmap/check/, and the YAML it
reads the rules from under dlmap/check/spec/: the spec the module was built from, file by file in order
(spec/built/, listed in spec/built/spec.txt), dlmap's shipped profiles (spec/profiles/; what `--profile` may also
name and what a profile's `extends:` resolves among), and dlmap's own facts (spec/*.yaml, for a package laid out
without a built spec). tests/spec_facts/spec_facts.py, the plain PyYAML reader, reads them, with
codegen/profile_extends.py (the generator's merge rule for `extends:`) and profile_settings.py (the profile schema) beside it.

Every label of dlmap's own is resolved here (Label), so the macro works from another workspace.
"""

load("//python:dlmap_module.bzl", "ONLY_WITH_HEADERS")

CHECK_SOURCES = [
    "__init__.py",
    "__main__.py",
    "calls.py",
    "children.py",
    "claims.py",
    "consumer.py",
    "crafted.py",
    "deleter_calls.py",
    "deleters.py",
    "dlpack.py",
    "exchange_api.py",
    "exchange_calls.py",
    "fork_server.py",
    "gpu_peers.py",
    "matrix.py",
    "matrix_calls.py",
    "matrix_families.py",
    "producer.py",
    "report.py",
    "rules.py",
    "runtimes.py",
    "streams.py",
    "tables.py",
]

# The spec files the checker reads when the package has no built spec (python/check/rules.py FACT_FILES).
_FACTS = ["versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml", "errors.yaml"]

_SOURCES = [str(Label("//python/check:" + f)) for f in CHECK_SOURCES]
_FACT_LABELS = [str(Label("//spec:" + f)) for f in _FACTS]
_SPEC_FACTS = str(Label("//tests/spec_facts:spec_facts.py"))
_DEFAULT_SPEC = str(Label("//spec:default"))
_PROFILES = str(Label("//spec:profiles"))

# The generator's sources: the CHECK_CODEGEN modules are shipped from them.
# codegen's modules the checker reads: the merge rule of `extends:` and the profile schema (its settings' defaults).
CHECK_CODEGEN = ["profile_extends.py", "profile_settings.py"]
_GENERATOR = str(Label("//codegen:generator"))

def _spec_files_impl(ctx):
    """The built spec (in order, with its list), the shipped profiles and the CHECK_CODEGEN modules, under ctx.attr.dir."""
    outs, names = [], []
    copies = []
    for i, f in enumerate(ctx.files.spec):
        # The order the generator read them in (zero-padded: they sort so), and no clash of basenames.
        name = "%s-%s" % (("00%d" % i)[-3:], f.basename)
        names.append(name)
        copies.append((f, ctx.actions.declare_file("%s/spec/built/%s" % (ctx.attr.dir, name))))
    seen = {}
    for f in ctx.files.profiles:
        if f.basename not in seen:
            seen[f.basename] = True
            copies.append((f, ctx.actions.declare_file("%s/spec/profiles/%s" % (ctx.attr.dir, f.basename))))
    for f in ctx.files.generator:
        if f.basename in CHECK_CODEGEN:
            copies.append((f, ctx.actions.declare_file("%s/%s" % (ctx.attr.dir, f.basename))))
    for src, out in copies:
        ctx.actions.run_shell(
            inputs = [src],
            outputs = [out],
            command = "cp -L \"$1\" \"$2\"",
            arguments = [src.path, out.path],
            mnemonic = "DlmapCheckCopy",
            progress_message = "Copying %s into the dlmap.check package" % src.short_path,
        )
        outs.append(out)
    manifest = ctx.actions.declare_file("%s/spec/built/spec.txt" % ctx.attr.dir)
    ctx.actions.write(manifest, "".join([n + "\n" for n in names]))
    outs.append(manifest)
    return [DefaultInfo(files = depset(outs), runfiles = ctx.runfiles(files = outs))]

_spec_files = rule(
    implementation = _spec_files_impl,
    attrs = {
        "dir": attr.string(mandatory = True),
        "generator": attr.label(allow_files = True),
        "profiles": attr.label(allow_files = True),
        "spec": attr.label_list(allow_files = [".yaml"], mandatory = True),
    },
)

def dlmap_check_package(name, module, spec = None, testonly = False):
    """The `dlmap` package directory `name`/dlmap/ for `python3 -m dlmap.check`.

    `--profile` then names the profile of `spec` (judged with the spec's own facts and overlays) or any profile dlmap
    ships (judged with the same facts); an unknown name is refused with the list of those.

    Args:
      name: a filegroup of the package's files; its directory is `name`/.
      module: the extension (a dlmap_python_module() target with the default module_name "dlmap"), copied as
        dlmap/__init__.so.
      spec: the YAML list the module's library was built from (dlmap_library's `spec`, in the same order).
        Default: dlmap's default spec.
      testonly: passed to every target.
    """
    check = name + "/dlmap/check/"
    outs = [name + "/dlmap/__init__.so", check + "spec_facts.py"] + [check + f for f in CHECK_SOURCES] + \
           [check + "spec/" + f for f in _FACTS]
    cmds = [
        "out=$(RULEDIR)/%s/dlmap" % name,
        "cp -L $(location %s) $$out/__init__.so" % module,
        "cp -L $(location %s) $$out/check/spec_facts.py" % _SPEC_FACTS,
    ]
    cmds += ["cp -L $(location %s) $$out/check/%s" % (label, f) for label, f in zip(_SOURCES, CHECK_SOURCES)]
    cmds += ["cp -L $(location %s) $$out/check/spec/%s" % (label, f) for label, f in zip(_FACT_LABELS, _FACTS)]
    native.genrule(
        name = name + "_files",
        srcs = [module, _SPEC_FACTS] + _SOURCES + _FACT_LABELS,
        outs = outs,
        cmd = " && ".join(cmds),
        tags = ONLY_WITH_HEADERS,
        testonly = testonly,
        visibility = ["//visibility:public"],
    )
    _spec_files(
        name = name + "_spec",
        dir = name + "/dlmap/check",
        spec = spec or [_DEFAULT_SPEC],
        profiles = _PROFILES,
        generator = _GENERATOR,
        tags = ONLY_WITH_HEADERS,
        testonly = testonly,
        visibility = ["//visibility:public"],
    )
    native.filegroup(
        name = name,
        srcs = [name + "_files", name + "_spec"],
        tags = ONLY_WITH_HEADERS,
        testonly = testonly,
        visibility = ["//visibility:public"],
    )
