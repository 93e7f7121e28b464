"""dlmap Python package: dlmap_sdist(), the rule behind //python/pip:sdist (python/pip/make_sdist.py does the work).

A rule rather than a genrule so that the module's spec keeps the generator's order (ctx.files keeps a filegroup's
order; $(locations) sorts) and the DLPack header is the one //:dlpack (the header flag) gives every dlmap library.
CcInfo is Bazel's own (Bazel 4.2.3 and 7), not loaded from @rules_cc (Debian 12's has no cc/common/cc_info.bzl).
"""

def _dlpack_header(target):
    # buildifier: disable=native-cc-info
    headers = [f for f in target[CcInfo].compilation_context.headers.to_list() if f.path.endswith("dlpack/dlpack.h")]
    if len(headers) != 1:
        fail("dlmap_sdist: %s provides %d dlpack/dlpack.h headers, not one" % (target.label, len(headers)))
    return headers[0]

def _by_profile(label_dict):
    """{profile: [files]} from a {target: profile} attribute, in the attribute's order."""
    grouped = {}
    for target, profile in label_dict.items():
        grouped.setdefault(profile, [])
        grouped[profile] += target.files.to_list()
    return grouped

def _dlmap_sdist_impl(ctx):
    dlpack = _dlpack_header(ctx.attr.dlpack)
    args = ctx.actions.args()
    args.add(ctx.file._make_sdist)
    args.add("--out", ctx.outputs.out)
    args.add("--readme", ctx.file.readme)
    args.add("--license", ctx.file.license)
    args.add("--config", ctx.file.config)
    args.add("--dlpack", dlpack)
    lists = [
        ("--setup-files", ctx.files.setup_files),
        ("--sources", ctx.files.sources),
        ("--check", ctx.files.check),
        ("--generator", ctx.files.generator),
        ("--facts", ctx.files.facts),
        ("--profiles", ctx.files.profiles),
        ("--built-spec", ctx.files.built_spec),
    ]
    inputs = [ctx.file._make_sdist, ctx.file.readme, ctx.file.license, ctx.file.config, dlpack]
    for option, files in lists:
        args.add_all(option, files)
        inputs += files
    generated = _by_profile(ctx.attr.generated)
    specs = _by_profile(ctx.attr.specs)
    for profile in sorted(generated):
        if profile not in specs:
            fail("dlmap_sdist: the %s profile has generated files but no spec" % profile)
        args.add("--generated", profile)
        args.add_all(generated[profile])

        # What they were generated from: the profile's spec, the generator and name_lookup.re (MANIFEST).
        args.add("--inputs", profile)
        args.add_all(specs[profile] + ctx.files.generator + ctx.files.name_lookup)
        inputs += generated[profile] + specs[profile]
    inputs += ctx.files.name_lookup
    ctx.actions.run(
        executable = ctx.executable._python,
        arguments = [args],
        inputs = inputs,
        outputs = [ctx.outputs.out],
        mnemonic = "DlmapSdist",
        progress_message = "Making the dlmap sdist %s" % ctx.outputs.out.short_path,
    )
    return [DefaultInfo(files = depset([ctx.outputs.out]), runfiles = ctx.runfiles(files = [ctx.outputs.out]))]

dlmap_sdist = rule(
    implementation = _dlmap_sdist_impl,
    doc = "The dlmap sdist (make_sdist.py's usage says where each file goes).",
    attrs = {
        "built_spec": attr.label_list(allow_files = [".yaml"], mandatory = True),
        "check": attr.label_list(allow_files = [".py"], mandatory = True),
        "config": attr.label(allow_single_file = [".h"], mandatory = True),
        # buildifier: disable=native-cc-info
        "dlpack": attr.label(providers = [CcInfo], mandatory = True),
        "facts": attr.label_list(allow_files = [".yaml"], mandatory = True),
        "generated": attr.label_keyed_string_dict(allow_files = True, mandatory = True),
        "generator": attr.label_list(allow_files = True, mandatory = True),
        "license": attr.label(allow_single_file = True, mandatory = True),
        "name_lookup": attr.label_list(allow_files = [".re"], mandatory = True),
        "out": attr.output(mandatory = True),
        "profiles": attr.label_list(allow_files = [".yaml"], mandatory = True),
        "readme": attr.label(allow_single_file = [".md"], mandatory = True),
        "setup_files": attr.label_list(allow_files = True, mandatory = True),
        "sources": attr.label_list(allow_files = True, mandatory = True),
        "specs": attr.label_keyed_string_dict(allow_files = [".yaml"], mandatory = True),
        "_make_sdist": attr.label(default = Label("//python/pip:make_sdist.py"), allow_single_file = True),
        "_python": attr.label(
            default = Label("@dlmap_config//:tools/python3"),
            allow_single_file = True,
            executable = True,
            cfg = "exec",
        ),
    },
)
