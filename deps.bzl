"""dlmap_dependencies(): the repositories a WORKSPACE needs to build dlmap offline (Bazel 4.2.3; Bazel 7 with
--config=workspace). Under bzlmod, MODULE.bazel declares them instead."""

load("//third_party/toolchains:dlmap_configure.bzl", "dlmap_configure")

# Repository name → directory inside the dlmap checkout (the project's own offline shims).
_SHIMS = {
    "rules_cc": "third_party/bazel_shims/rules_cc",
    "rules_java": "third_party/bazel_shims/rules_java",
    "rules_shell": "third_party/bazel_shims/rules_shell",
    "platforms": "third_party/bazel_shims/platforms",
    "remote_coverage_tools": "third_party/remote_coverage_tools",
}

# buildifier: disable=unnamed-macro
def dlmap_dependencies(dlmap_path):
    """Declares what dlmap needs, leaving alone every repository the workspace already defines.

    Defines the offline shims for what Bazel 4.2.3 would download, and @dlmap_config (toolchain detection: CUDA,
    HIP, re2c, python3 + yaml, GoogleTest, the DLPack header; set DLPACK_INCLUDE_DIR to use your own DLPack header).

    Args:
      dlmap_path: the dlmap checkout, as given to local_repository (relative to the workspace or absolute).
    """
    for name, path in _SHIMS.items():
        if not native.existing_rule(name):
            native.local_repository(name = name, path = dlmap_path + "/" + path)
    if not native.existing_rule("dlmap_config"):
        dlmap_configure(name = "dlmap_config")
