"""dlmap Python binding: the CPython extension over any library dlmap_library() made, under an import name of choice."""

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

def dlmap_python_module(library, name = None, module_name = "dlmap", debug = False, testonly = False):
    """`import <module_name>` with PYTHONPATH set to this package's output directory (the shared object's directory).

    Links the static library (PIC objects) and exports nothing but PyInit_<module_name>; libpython is not linked (the
    interpreter provides it). Modules of different names (each over its own library) import side by side in one
    interpreter: every name the module shows carries its own (`acme_dlmap.Array`).

    Args:
      library: a cc_library made by dlmap_library().
      name: the shared object's target; its file name must be `<module_name>.so` (Python finds the module by it).
        Default: `<module_name>.so`.
      module_name: the import name, a Python identifier ("dlmap" by default; e.g. "acme_dlmap" for a team's module
        over its own spec, so that it and upstream's `dlmap` can be installed together).
      debug: compile the binding against the debug interpreter's headers (python3-dbg, Py_DEBUG), for the tests that
        run on it; only the binding's own C is compiled again, the library is the release build's.
      testonly: passed to the cc_binary (for a library that is testonly).
    """
    if not module_name or not (module_name[0].isalpha() or module_name[0] == "_") or \
       not module_name.replace("_", "a").isalnum():
        fail("dlmap_python_module: module_name %r is not a Python identifier (letters, digits, _)" % module_name)
    if name == None:
        name = module_name + ".so"
    if name.rpartition("/")[2] != module_name + ".so":
        fail("dlmap_python_module: %r must be named %s.so (Python imports %s from that file)" %
             (name, module_name, module_name))
    cc_binary(
        name = name,
        srcs = _SRCS,
        additional_linker_inputs = [_LDS],
        copts = ["-std=c11", "-Wall", "-Wextra", "-Werror", "-pedantic", "-fvisibility=hidden"],
        # The import name: the init function PyInit_<module_name> (the version script exports PyInit_* only) and
        # the names the module shows (python/binding.h).
        local_defines = ["DLMAP_PY_MODULE_NAME=" + module_name],
        linkopts = ["-Wl,--version-script=$(location %s)" % _LDS, "-pthread"],
        linkshared = True,
        testonly = testonly,
        tags = DBG_TAGS if debug else ONLY_WITH_HEADERS,
        deps = [
            library,
            str(Label("@dlmap_config//:python_dbg_headers" if debug else "@dlmap_config//:python_headers")),
        ],
    )
