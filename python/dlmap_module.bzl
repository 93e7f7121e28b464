"""dlmap Python binding: the `dlmap` CPython extension over any library dlmap_library() made (one per profile)."""

load("@dlmap_config//:build_defs.bzl", "HAS_PYTHON_HEADERS")
load("@rules_cc//cc:defs.bzl", "cc_binary")

# Without Python.h (python3-dev) the binding's targets are left out of `//...`; //python:python_headers_present_test
# says why.
ONLY_WITH_HEADERS = [] if HAS_PYTHON_HEADERS else ["manual"]

_SRCS = [str(Label("//python:binding_srcs"))]
_LDS = str(Label("//python:dlmap.lds"))

def dlmap_python_module(library, name = "dlmap.so"):
    """`import dlmap` with PYTHONPATH set to this package's output directory.

    Links the static library (PIC objects) and exports nothing but PyInit_dlmap; libpython is not linked (the
    interpreter provides it).

    Args:
      library: a cc_library made by dlmap_library().
      name: the shared object's name.
    """
    cc_binary(
        name = name,
        srcs = _SRCS,
        additional_linker_inputs = [_LDS],
        copts = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fvisibility=hidden"],
        linkopts = ["-Wl,--version-script=$(location %s)" % _LDS, "-pthread"],
        linkshared = True,
        tags = ONLY_WITH_HEADERS,
        deps = [
            library,
            str(Label("@dlmap_config//:python_headers")),
        ],
    )
