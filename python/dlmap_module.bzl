"""dlmap Python binding: the `dlmap` CPython extension over any library dlmap_library() made (one per profile)."""

load("@dlmap_config//:build_defs.bzl", "HAS_PYTHON_HEADERS")
load("@rules_cc//cc:defs.bzl", "cc_binary")

# Without Python.h (python3-dev) the binding's targets are left out of `//...`; //python:python_headers_present_test
# says why.
ONLY_WITH_HEADERS = [] if HAS_PYTHON_HEADERS else ["manual"]

# The debug interpreter's modules and tests (python3-dbg, an optional package) are never part of `//...`:
# //python:pydbg_tests runs them (tools/hardening.sh's pydbg step in CI), so that the host suite's time stays as it is.
DBG_TAGS = ["manual", "pydbg"]

_SRCS = [str(Label("//python:binding_srcs"))]
_LDS = str(Label("//python:dlmap.lds"))

def dlmap_python_module(library, name = "dlmap.so", debug = False):
    """`import dlmap` with PYTHONPATH set to this package's output directory.

    Links the static library (PIC objects) and exports nothing but PyInit_dlmap; libpython is not linked (the
    interpreter provides it).

    Args:
      library: a cc_library made by dlmap_library().
      name: the shared object's name.
      debug: compile the binding against the debug interpreter's headers (python3-dbg, Py_DEBUG), for the tests that
        run on it; only the binding's own C is compiled again, the library is the release build's.
    """
    cc_binary(
        name = name,
        srcs = _SRCS,
        additional_linker_inputs = [_LDS],
        copts = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fvisibility=hidden"],
        linkopts = ["-Wl,--version-script=$(location %s)" % _LDS, "-pthread"],
        linkshared = True,
        tags = DBG_TAGS if debug else ONLY_WITH_HEADERS,
        deps = [
            library,
            str(Label("@dlmap_config//:python_dbg_headers" if debug else "@dlmap_config//:python_headers")),
        ],
    )
