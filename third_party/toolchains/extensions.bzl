"""Module extension for MODULE.bazel: @dlmap_config (host detection) under bzlmod, as deps.bzl does for WORKSPACE."""

load(":dlmap_configure.bzl", "dlmap_configure")

def _dlmap_config_impl(_module_ctx):
    dlmap_configure(name = "dlmap_config")

dlmap_config = module_extension(
    implementation = _dlmap_config_impl,
    doc = "Defines @dlmap_config: what dlmap_configure detected on this host.",
)
