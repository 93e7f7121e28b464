"""generator_unittest: one Python unittest file of the spec generator, run by run_unittest.sh under the interpreter
the generator itself runs under (@dlmap_config//:tools/python3, which has PyYAML; Bazel 4.2.3's native py_test may
pick one without it)."""

load("@rules_shell//shell:sh_test.bzl", "sh_test")
load("//tests:test_root.bzl", "DLMAP_TEST_ENV")

_PYTHON = "@dlmap_config//:tools/python3"

# What every generator test reads: the interpreter, the generator, the default spec and profiles, the test data.
_DATA = [
    _PYTHON,
    "//codegen:generator",
    "//spec:default",
    "//spec:profiles",
]

def generator_unittest(name, size = "small", data = []):
    """`<name>.py` under unittest, with the generator's inputs.

    Args:
      name: the test; its source is `<name>.py` in this package.
      size: the test size.
      data: further files the test reads.
    """
    sh_test(
        name = name,
        size = size,
        srcs = ["run_unittest.sh"],
        args = [
            "$(rootpath %s)" % _PYTHON,
            "$(rootpath %s.py)" % name,
        ],
        data = _DATA + native.glob(["testdata/**"]) + [name + ".py"] + data,
        env = DLMAP_TEST_ENV,
    )
