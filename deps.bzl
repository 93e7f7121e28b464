"""dlmap_dependencies(): what a WORKSPACE needs to build @dlmap (Bazel 4.2.3; Bazel 7 with --config=workspace).

Under bzlmod, MODULE.bazel declares the same instead. A consumer's WORKSPACE:

    http_archive(name = "dlmap", urls = [...], sha256 = ..., strip_prefix = ...)
    load("@dlmap//:deps.bzl", "dlmap_dependencies")
    dlmap_dependencies()
"""

load("@bazel_tools//tools/build_defs/repo:utils.bzl", "maybe")
load("//third_party/toolchains:dlmap_configure.bzl", "dlmap_configure")

def _rules_shim_impl(ctx):
    # The shim is a directory of dlmap's own repository (found through a file in it, so this works wherever dlmap
    # was fetched or unpacked); the new repository links to its entries.
    shim = ctx.path(ctx.attr.workspace_file).dirname
    for entry in shim.readdir():
        ctx.symlink(entry, entry.basename)

_rules_shim = repository_rule(
    implementation = _rules_shim_impl,
    attrs = {"workspace_file": attr.label(allow_single_file = True, mandatory = True)},
    doc = "A repository made of one of dlmap's offline rule shims (native rules re-exported under the standard names).",
)

# buildifier: disable=unnamed-macro
def dlmap_dependencies():
    """Declares what @dlmap needs and nothing else.

    - @dlmap_config: host detection (re2c and python3 with PyYAML, which generating the library needs; the DLPack
      header, GoogleTest, CUDA, HIP, … for what uses them). Its environment knobs are listed in README ("Consuming
      dlmap").
    - @rules_cc and @rules_shell, which dlmap's BUILD files load, only where the workspace has not declared them
      already (declare yours before this call to keep them): dlmap's shims, which re-export Bazel's native rules
      and need no network.

    Bazel's own repositories (@platforms, @rules_java, @remote_coverage_tools, …) are left to the workspace and to
    Bazel.
    """
    maybe(_rules_shim, name = "rules_cc", workspace_file = Label("//:third_party/bazel_shims/rules_cc/WORKSPACE"))
    maybe(_rules_shim, name = "rules_shell", workspace_file = Label("//:third_party/bazel_shims/rules_shell/WORKSPACE"))
    maybe(dlmap_configure, name = "dlmap_config")
