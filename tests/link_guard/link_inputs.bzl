"""dlmap tests: link_inputs(name, deps), the linker arguments of a binary on `deps`, as a file a shell test links.

A binary that links two dlmap libraries must fail to link, which no cc_binary in the suite can show (its failure
would fail the build). This rule writes what Bazel links for a cc_test on `deps` — each library once, in Bazel's
dynamic mode (a library's shared object where it has one, else its archive, whole where it is alwayslink), then the
libraries' own flags and --linkopt — and the test runs the link itself (tests/link_guard/link_guard_test.sh).
CcInfo and cc_common are Bazel's own (Bazel 4.2.3 and 7), not loaded from @rules_cc.
"""

def _link_inputs_impl(ctx):
    # buildifier: disable=native-cc-common
    # buildifier: disable=native-cc-info
    cc_info = cc_common.merge_cc_infos(cc_infos = [dep[CcInfo] for dep in ctx.attr.deps])
    args = []
    files = []
    flags = []
    for linker_input in cc_info.linking_context.linker_inputs.to_list():
        flags.extend(linker_input.user_link_flags)
        for library in linker_input.libraries:
            archive = library.pic_static_library or library.static_library
            if library.dynamic_library:
                # What a cc_test in Bazel's default dynamic mode links; a second definition there is no error.
                args.append(library.dynamic_library.short_path)
                files.append(library.dynamic_library)
            elif archive and library.alwayslink:
                args.extend(["-Wl,--whole-archive", archive.short_path, "-Wl,--no-whole-archive"])
                files.append(archive)
            elif archive:
                args.append(archive.short_path)
                files.append(archive)

    # --linkopt (a sanitizer's runtime under --config=asan) and coverage's runtime, as Bazel adds them.
    flags.extend(ctx.fragments.cpp.linkopts)
    if ctx.configuration.coverage_enabled:
        flags.append("--coverage")
    out = ctx.actions.declare_file(ctx.label.name + ".args")
    ctx.actions.write(out, "\n".join(args + flags) + "\n")
    return [DefaultInfo(files = depset([out]), runfiles = ctx.runfiles(files = [out] + files))]

link_inputs = rule(
    implementation = _link_inputs_impl,
    doc = "One linker argument a line (paths relative to the test's runfiles directory); its runfiles hold them.",
    attrs = {
        # buildifier: disable=native-cc-info
        "deps": attr.label_list(providers = [CcInfo], doc = "What the binary depends on."),
    },
    fragments = ["cpp"],
)
