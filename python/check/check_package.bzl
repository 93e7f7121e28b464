"""dlmap conformance checker: dlmap_check_package(name, module), a directory `name`/ holding the `dlmap` package.

With it `PYTHONPATH=bazel-bin/python/check/<name> python3 -m dlmap.check …` works: the extension as
dlmap/__init__.so (an extension may be a package's __init__; Python then gives it __path__), the checker as
dlmap/check/, and the spec's YAML it reads the rules from as dlmap/check/spec/ (with
tests/spec_facts/spec_facts.py, the plain PyYAML reader).
"""

load("//python:dlmap_module.bzl", "ONLY_WITH_HEADERS")

CHECK_SOURCES = [
    "__init__.py",
    "__main__.py",
    "calls.py",
    "consumer.py",
    "crafted.py",
    "dlpack.py",
    "gpu_peers.py",
    "producer.py",
    "report.py",
    "rules.py",
    "streams.py",
    "tables.py",
]

# The spec files the checker reads (python/check/rules.py FACT_FILES) and every shipped profile.
_FACTS = ["versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml", "errors.yaml"]
_PROFILES = ["jax.yaml", "array_api.yaml"]

def dlmap_check_package(name, module, testonly = False):
    """The `dlmap` package directory `name`/dlmap/ for `python3 -m dlmap.check`.

    Args:
      name: the genrule, and the directory its outputs are under.
      module: the extension (a dlmap_python_module() target), copied as dlmap/__init__.so.
      testonly: passed to the genrule.
    """
    check = name + "/dlmap/check/"
    outs = [name + "/dlmap/__init__.so", check + "spec_facts.py"] + [check + f for f in CHECK_SOURCES] + \
           [check + "spec/" + f for f in _FACTS] + [check + "spec/profiles/" + f for f in _PROFILES]
    srcs = [module, "//tests/spec_facts:spec_facts.py"] + CHECK_SOURCES + \
           ["//spec:" + f for f in _FACTS] + ["//spec:profiles/" + f for f in _PROFILES]
    cmds = [
        "out=$(RULEDIR)/%s/dlmap" % name,
        "cp -L $(location %s) $$out/__init__.so" % module,
        "cp -L $(location //tests/spec_facts:spec_facts.py) $$out/check/spec_facts.py",
    ]
    cmds += ["cp -L $(location %s) $$out/check/%s" % (f, f) for f in CHECK_SOURCES]
    cmds += ["cp -L $(location //spec:%s) $$out/check/spec/%s" % (f, f) for f in _FACTS]
    cmds += ["cp -L $(location //spec:profiles/%s) $$out/check/spec/profiles/%s" % (f, f) for f in _PROFILES]
    native.genrule(
        name = name,
        srcs = srcs,
        outs = outs,
        cmd = " && ".join(cmds),
        tags = ONLY_WITH_HEADERS,
        testonly = testonly,
        visibility = ["//visibility:public"],
    )
