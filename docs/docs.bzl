"""dlmap docs: dlmap_docs(name, spec), the Markdown pages of any spec (devices.md, errors/README.md, errors/<id>.md).

Public through @dlmap//:defs.bzl. The pages are codegen/gen_docs.py's, written into one output directory `name`/
(a tree artifact: the page set follows the spec's error catalogue, which a macro cannot know in advance). dlmap's own
committed docs are two of these (docs/BUILD), so a downstream spec gets its pages exactly as dlmap gets its own.
"""

def _dlmap_docs_impl(ctx):
    out = ctx.actions.declare_directory(ctx.attr.name)

    # In the order given: each label's files in its own order (a filegroup keeps its srcs' order), as the generator
    # and dlmap_library() read them.
    specs = [f for target in ctx.attr.spec for f in target.files.to_list()]
    args = ctx.actions.args()
    args.add(ctx.executable._python)
    args.add(ctx.file._gen_docs)
    args.add(out.path)
    for f in specs:
        args.add("--spec", f)

    # Every shipped profile, which the spec's profile may name in `extends:` (as dlmap_library() passes them).
    for f in ctx.files._profiles:
        args.add("--base_profile", f)
    ctx.actions.run_shell(
        inputs = specs + ctx.files._generator + ctx.files._profiles,
        tools = [ctx.executable._python],
        outputs = [out],
        # gen_docs.py prints one summary line ("wrote N docs files…"), which would show on every build.
        command = 'python=$1 gen=$2 out=$3; shift 3; "$python" "$gen" "$@" --out "$out" >/dev/null',
        arguments = [args],
        mnemonic = "DlmapDocs",
        progress_message = "dlmap docs %s" % ctx.label,
    )
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out]))]

dlmap_docs = rule(
    implementation = _dlmap_docs_impl,
    doc = """The docs of `spec`: the directory `name`/ holding devices.md, errors/README.md and errors/<id>.md.

Example (a downstream BUILD): dlmap_docs(name = "acme_docs", spec = ["@dlmap//spec:facts", "acme_profile.yaml"])
writes bazel-bin/acme_docs/devices.md and bazel-bin/acme_docs/errors/. A spec mistake fails the build with the
generator's one-line message naming the file, entry and key.""",
    attrs = {
        "spec": attr.label_list(
            mandatory = True,
            allow_files = [".yaml"],
            doc = "The spec's YAML files, in the order dlmap_library() reads them (the same list).",
        ),
        # dlmap's own tools, resolved in dlmap's repository so the rule works when loaded as @dlmap//….
        "_python": attr.label(
            default = Label("@dlmap_config//:tools/python3"),
            allow_single_file = True,
            executable = True,
            cfg = "exec",
        ),
        "_gen_docs": attr.label(default = Label("//codegen:gen_docs.py"), allow_single_file = True),
        "_generator": attr.label(default = Label("//codegen:generator"), allow_files = True),
        # Every shipped profile, which a profile's `extends:` names.
        "_profiles": attr.label(default = Label("//spec:profiles"), allow_files = True),
    },
)
