# Repository rule dlmap_configure: detects host toolkits and tools, generates @dlmap_config.
"""Detection at fetch time (offline, Bazel 4.2.3), modelled on TensorFlow's cuda_configure.

Finds the CUDA toolkit and HIP/ROCm (both optional: dlmap's GPU backend is built regardless, since it loads
the runtime with dlopen over the spec's symbol table; a toolkit found here only adds its runtime's path as one
more place to look, and nvcc for gpu/check.sh's kernels), re2c, a python3 that can
`import yaml` (both required: generating the library needs them), GoogleTest (dlmap's own tests only) and the
DLPack header (optional: a consumer may pass its own DLPack target as --@dlmap//:dlpack; a target that needs an
absent one fails to build, saying what to install), and that python3's
own headers (optional: python3-dev, for the CPython binding in python/), the debug build
of the same Python version with its headers (optional: python3-dbg, for the binding's
tests under reference-count assertions and sys.gettotalrefcount), Google
Benchmark and libtorch (both optional: libbenchmark-dev and libtorch-dev, for the
benchmarks in bench/), then writes into the generated repository:
  BUILD           cc_library targets config, dlpack, gtest, gtest_main, cuda_headers,
                  cudart, cudart_static, hip_headers, amdhip64, python_headers,
                  python_dbg_headers, benchmark, libtorch (empty when the component is missing) and the
                  exported tool wrappers
                  tools/re2c, tools/python3, cuda/bin/nvcc, rocm/bin/hipcc (the last
                  two only when found);
  dlmap_config.h  DLMAP_* macros for C code (from the template dlmap_config.h.tpl);
  build_defs.bzl  HAS_CUDA, HAS_ROCM, ... and if_cuda() / if_rocm() for BUILD files;
  SUMMARY         one line per component.
Found files are symlinked, never copied. DLMAP_NEED_CUDA / DLMAP_NEED_ROCM: "0" switches
the component off, "1" makes it required, anything else means "use it if found".
Re-run after installing or removing a toolkit: `bazel sync --configure`.
Starlark here is Bazel 4.2.3's: str.split() needs a separator and there is no for-else.
"""

_ENV_VARS = [
    "CUDA_PATH",
    "CUDA_HOME",
    "ROCM_PATH",
    "HIP_PATH",
    "RE2C",
    "PYTHON_BIN_PATH",
    "PYTHON_DBG_BIN_PATH",
    "GTEST_ROOT",
    "DLPACK_INCLUDE_DIR",
    "DLMAP_NEED_CUDA",
    "DLMAP_NEED_ROCM",
    "BENCHMARK_ROOT",
    "LIBTORCH_ROOT",
    "DLMAP_NEED_LIBTORCH",
]

# Legacy DLPACK_VERSION values v0.2-v0.5 were written with a leading zero, which C
# reads as octal (010 = 8, ...); map their text to the release they denote.
_DLPACK_LEGACY = {"010": "0.2", "030": "0.3", "040": "0.4", "050": "0.5"}

# Interpreter probe: real executable path, Python version, PyYAML version.
_PY_PROBE = "import sys, yaml; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3]); print(yaml.__version__)"

# Header probe of the same interpreter: its C include directory and extension-module suffix.
_PY_HEADERS_PROBE = "import sysconfig; print(sysconfig.get_paths()['include']); print(sysconfig.get_config_var('EXT_SUFFIX') or '')"

# Debug-interpreter probe: real executable path, Python version, whether it counts references (a Py_DEBUG build has
# sys.gettotalrefcount), its C include directory; it must import PyYAML as the tests do.
_PY_DBG_PROBE = "import sys, sysconfig, yaml; print(sys.executable); print('%d.%d.%d' % sys.version_info[:3]); print(hasattr(sys, 'gettotalrefcount')); print(sysconfig.get_paths()['include'])"

# ---------------------------------------------------------------- helpers

def _env(ctx, name):
    return ctx.os.environ.get(name, "").strip()

def _exists(ctx, path):
    return path != "" and ctx.path(path).exists

def _which(ctx, name):
    """Absolute path of `name` (a path or a command on PATH), or ""."""
    if not name:
        return ""
    if "/" in name:
        return name if _exists(ctx, name) else ""
    found = ctx.which(name)
    return str(found) if found else ""

def _define(text, name):
    """First token after `#define NAME` in a header's text, or ""."""
    for line in text.split("\n"):
        line = line.strip()
        if not line.startswith("#"):
            continue
        toks = [t for t in line[1:].replace("\t", " ").split(" ") if t]
        if len(toks) >= 3 and toks[0] == "define" and toks[1] == name:
            return toks[2].strip("()")
    return ""

def _to_int(text):
    """Decimal value of a plain digit string (leading zeros ignored), or None."""
    text = text.rstrip("uUlL")
    if not text.isdigit():
        return None
    text = text.lstrip("0")
    return int(text) if text else 0

def _soname_file(ctx, libdir, name):
    """`lib<name>.so.<N>` in libdir (highest N), else `lib<name>.so`, else ""."""
    prefix = "lib%s.so." % name
    best, best_n = "", -1
    for entry in ctx.path(libdir).readdir():
        base = entry.basename
        n = _to_int(base[len(prefix):]) if base.startswith(prefix) else None
        if n != None and n > best_n:
            best, best_n = base, n
    if best:
        return best
    return "lib%s.so" % name if _exists(ctx, libdir + "/lib%s.so" % name) else ""

def _absent(why):
    return struct(found = False, why = why)

def _wrapper(ctx, dest, target):
    """Two-line executable sh wrapper running `target` with all arguments."""
    ctx.file(dest, "#!/bin/sh\nexec '%s' \"$@\"\n" % target.replace("'", "'\\''"), executable = True)

# ---------------------------------------------------------------- optional: CUDA, HIP

def _find_cuda(ctx):
    need = _env(ctx, "DLMAP_NEED_CUDA")
    if need == "0":
        return _absent("disabled by DLMAP_NEED_CUDA=0")
    roots = [r for r in [_env(ctx, "CUDA_PATH"), _env(ctx, "CUDA_HOME"), "/usr/local/cuda"] if r]
    for root in roots:
        hdr = root + "/include/cuda_runtime_api.h"
        if not _exists(ctx, hdr):
            continue
        for sub in ["lib64", "lib", "targets/x86_64-linux/lib"]:
            libdir = root + "/" + sub
            soname = _soname_file(ctx, libdir, "cudart") if _exists(ctx, libdir) else ""
            if not soname:
                continue
            v = _to_int(_define(ctx.read(hdr), "CUDART_VERSION"))
            nvcc = root + "/bin/nvcc"
            return struct(
                found = True,
                root = root,
                libdir = libdir,
                soname = soname,
                static = _exists(ctx, libdir + "/libcudart_static.a"),
                version = "%d.%d" % (v // 1000, (v % 1000) // 10) if v != None else "",
                nvcc = nvcc if _exists(ctx, nvcc) else "",
            )
    why = "no include/cuda_runtime_api.h with libcudart.so.N in lib64, lib or targets/x86_64-linux/lib under " + ", ".join(roots)
    if need == "1":
        fail("dlmap: CUDA toolkit not found but DLMAP_NEED_CUDA=1 (%s); install it or set CUDA_PATH" % why)
    return _absent(why)

def _find_rocm(ctx):
    need = _env(ctx, "DLMAP_NEED_ROCM")
    if need == "0":
        return _absent("disabled by DLMAP_NEED_ROCM=0")
    roots = [r for r in [_env(ctx, "ROCM_PATH"), _env(ctx, "HIP_PATH"), "/opt/rocm", "/usr"] if r]
    for root in roots:
        hdr = root + "/include/hip/hip_runtime_api.h"
        if not _exists(ctx, hdr):
            continue
        for sub in ["lib/x86_64-linux-gnu", "lib64", "lib"]:
            libdir = root + "/" + sub
            soname = _soname_file(ctx, libdir, "amdhip64") if _exists(ctx, libdir) else ""
            if not soname:
                continue
            vh = root + "/include/hip/hip_version.h"
            text = ctx.read(vh) if _exists(ctx, vh) else ""
            major = _to_int(_define(text, "HIP_VERSION_MAJOR"))
            minor = _to_int(_define(text, "HIP_VERSION_MINOR"))
            hipcc = root + "/bin/hipcc"
            return struct(
                found = True,
                root = root,
                libdir = libdir,
                soname = soname,
                version = "%d.%d" % (major, minor) if major != None and minor != None else "",
                hipcc = hipcc if _exists(ctx, hipcc) else "",
            )
    why = "no include/hip/hip_runtime_api.h with libamdhip64.so.N under " + ", ".join(roots)
    if need == "1":
        fail("dlmap: HIP/ROCm not found but DLMAP_NEED_ROCM=1 (%s); install it with: apt-get install libamdhip64-dev" % why)
    return _absent(why)

# ---------------------------------------------------------------- required: re2c, python, gtest, dlpack

def _find_re2c(ctx):
    for path in [_which(ctx, _env(ctx, "RE2C")), _which(ctx, "re2c")]:
        if not path:
            continue
        res = ctx.execute([path, "--version"])
        if res.return_code == 0:
            words = [w for w in res.stdout.strip().split(" ") if w]
            return struct(path = path, version = words[-1] if words else "")
    fail("dlmap: re2c not found (looked in $RE2C and PATH); install it with: apt-get install re2c")

def _find_python(ctx):
    cands = [_which(ctx, _env(ctx, "PYTHON_BIN_PATH")), _which(ctx, "/usr/bin/python3"), _which(ctx, "python3")]
    for path in cands:
        if not path:
            continue
        res = ctx.execute([path, "-c", _PY_PROBE])
        lines = res.stdout.strip().split("\n")
        if res.return_code == 0 and len(lines) == 3:
            return struct(path = lines[0].strip() or path, version = lines[1], yaml = lines[2])
    fail("dlmap: python3 with PyYAML not found (looked in $PYTHON_BIN_PATH, /usr/bin/python3 and PATH); " +
         "install it with: apt-get install python3-yaml")

def _find_python_headers(ctx, python):
    """Python.h of the detected interpreter, for extension modules built to run on it (optional)."""
    res = ctx.execute([python.path, "-c", _PY_HEADERS_PROBE])
    lines = res.stdout.strip().split("\n")
    include = lines[0].strip() if res.return_code == 0 and lines else ""
    if not include:
        return _absent("%s did not report sysconfig.get_paths()['include']" % python.path)
    if not _exists(ctx, include + "/Python.h"):
        return _absent("no Python.h in %s (for %s); install it with: apt-get install python3-dev" % (include, python.path))
    return struct(found = True, include = include, ext_suffix = lines[1].strip() if len(lines) > 1 else "")

def _major_minor(version):
    return ".".join(version.split(".")[:2])

def _find_python_dbg(ctx, python):
    """The debug build (Py_DEBUG) of the detected interpreter's Python version, with its Python.h (optional).

    python3-dbg: //python:pydbg_tests run the binding's tests on it with a module compiled against its headers. A
    module compiled for the release interpreter imports there too, but its Py_INCREF/Py_DECREF do not count in
    sys.gettotalrefcount.
    """
    mm = _major_minor(python.version)
    cands = [_which(ctx, _env(ctx, "PYTHON_DBG_BIN_PATH")), _which(ctx, python.path + "-dbg"), _which(ctx, "python%s-dbg" % mm)]
    tried = []
    for path in cands:
        if not path or path in tried:
            continue
        tried.append(path)
        res = ctx.execute([path, "-c", _PY_DBG_PROBE])
        lines = res.stdout.strip().split("\n")
        if res.return_code != 0 or len(lines) != 4:
            continue
        exe, version, counts, include = [line.strip() for line in lines]
        if _major_minor(version) != mm or counts != "True" or not _exists(ctx, include + "/Python.h"):
            continue
        return struct(found = True, path = exe or path, version = version, include = include)
    return _absent("no debug build of Python %s with sys.gettotalrefcount, PyYAML and Python.h (looked in " % mm +
                   "$PYTHON_DBG_BIN_PATH, %s-dbg and python%s-dbg on PATH); install it with: " % (python.path, mm) +
                   "apt-get install python3-dbg")

def _find_gtest(ctx):
    roots = [r for r in [_env(ctx, "GTEST_ROOT"), "/usr", "/usr/local"] if r]
    for root in roots:
        if not _exists(ctx, root + "/include/gtest/gtest.h"):
            continue
        for sub in ["lib/x86_64-linux-gnu", "lib64", "lib"]:
            libdir = root + "/" + sub
            for ext in [".a", ".so"]:
                if _exists(ctx, libdir + "/libgtest" + ext) and _exists(ctx, libdir + "/libgtest_main" + ext):
                    return struct(found = True, root = root, libdir = libdir, ext = ext)
    return _absent("GoogleTest not found (looked in $GTEST_ROOT, /usr and /usr/local for include/gtest/gtest.h " +
                   "and libgtest.a/libgtest_main.a or .so); install it with: apt-get install libgtest-dev")

def _dlpack_version(text):
    """"MAJOR.MINOR" from a dlpack.h text, or "" when it has no version macro."""
    major = _to_int(_define(text, "DLPACK_MAJOR_VERSION"))
    minor = _to_int(_define(text, "DLPACK_MINOR_VERSION"))
    if major != None and minor != None:
        return "%d.%d" % (major, minor)
    legacy = _define(text, "DLPACK_VERSION")
    if legacy in _DLPACK_LEGACY:
        return _DLPACK_LEGACY[legacy]
    v = _to_int(legacy)  # 60 -> 0.6, 80 -> 0.8 (read as decimal text, never as octal)
    return "%d.%d" % (v // 100, (v % 100) // 10) if v != None else ""

def _find_dlpack(ctx):
    dirs = [d for d in [_env(ctx, "DLPACK_INCLUDE_DIR"), "/usr/include", "/usr/local/include"] if d]
    for d in dirs:
        hdr = d + "/dlpack/dlpack.h"
        if _exists(ctx, hdr):
            return struct(found = True, header = hdr, version = _dlpack_version(ctx.read(hdr)))
    why = ("dlpack/dlpack.h not found (looked in $DLPACK_INCLUDE_DIR, /usr/include and /usr/local/include); " +
           "install it with: apt-get install libdlpack-dev, or pass your own DLPack target with " +
           "--@dlmap//:dlpack=LABEL")
    return struct(found = False, why = why, header = "", version = "")

# ---------------------------------------------------------------- optional: Google Benchmark, libtorch (bench/)

def _find_benchmark(ctx):
    """Google Benchmark (Debian's libbenchmark-dev): include/benchmark/benchmark.h and libbenchmark.a or .so."""
    roots = [r for r in [_env(ctx, "BENCHMARK_ROOT"), "/usr", "/usr/local"] if r]
    for root in roots:
        if not _exists(ctx, root + "/include/benchmark/benchmark.h"):
            continue
        for sub in ["lib/x86_64-linux-gnu", "lib64", "lib"]:
            libdir = root + "/" + sub
            for lib in ["libbenchmark.a", "libbenchmark.so"]:
                if _exists(ctx, libdir + "/" + lib):
                    return struct(found = True, root = root, libdir = libdir, lib = lib)
    return _absent("no include/benchmark/benchmark.h with libbenchmark.a or .so under " + ", ".join(roots) +
                   "; install it with: apt-get install libbenchmark-dev")

def _find_libtorch(ctx):
    """libtorch's C++ API (Debian's libtorch-dev): ATen/DLConvertor.h, libtorch_cpu.so and libc10.so."""
    if _env(ctx, "DLMAP_NEED_LIBTORCH") == "0":
        return _absent("disabled by DLMAP_NEED_LIBTORCH=0")
    roots = [r for r in [_env(ctx, "LIBTORCH_ROOT"), "/usr", "/usr/local"] if r]
    for root in roots:
        if not _exists(ctx, root + "/include/ATen/DLConvertor.h") or not _exists(ctx, root + "/include/c10"):
            continue
        for sub in ["lib/x86_64-linux-gnu", "lib64", "lib"]:
            libdir = root + "/" + sub
            if _exists(ctx, libdir + "/libtorch_cpu.so") and _exists(ctx, libdir + "/libc10.so"):
                # PyTorch 2.x's ATen.h #errors below C++20 (Debian testing's 2.14); 1.13's builds as C++17.
                aten = root + "/include/ATen/ATen.h"
                cxx20 = _exists(ctx, aten) and "C++20" in ctx.read(aten)
                return struct(found = True, root = root, libdir = libdir, cxxopts = ["-std=c++20"] if cxx20 else [])
    return _absent("no include/ATen/DLConvertor.h with libtorch_cpu.so and libc10.so under " + ", ".join(roots) +
                   "; install it with: apt-get install libtorch-dev")

# ---------------------------------------------------------------- generated files

def _missing(name, why):
    """A target that builds only to fail, printing why.

    What links the library never needs it, so an absent test-only component (GoogleTest), or a DLPack header that a
    consumer passes as a label instead, costs nothing until something uses it.
    """
    return """
genrule(
    name = "{name}_missing",
    outs = ["{name}_missing.h"],
    cmd = "echo 'dlmap: {why}' >&2; exit 1",
)

cc_library(name = "{name}", hdrs = [":{name}_missing.h"])
""".format(name = name, why = why.replace("'", "").replace('"', "").replace("$", "$$"))

def _dlpack_targets(dlpack):
    if not dlpack.found:
        return _missing("dlpack", dlpack.why)
    return """
# <dlpack/dlpack.h> from the host (what //:dlpack, the DLPack header flag, points at unless a consumer sets it).
cc_library(name = "dlpack", hdrs = ["dlpack/include/dlpack/dlpack.h"], includes = ["dlpack/include"])
"""

def _gtest_targets(gtest):
    if not gtest.found:
        return _missing("gtest", gtest.why) + _missing("gtest_main", gtest.why)
    return """
# GoogleTest (dlmap's own tests only).
cc_library(
    name = "gtest",
    srcs = ["gtest/lib/libgtest%s"],
    hdrs = glob(["gtest/include/gtest/**"]),
    includes = ["gtest/include"],
    linkopts = ["-pthread"],
)

cc_library(
    name = "gtest_main",
    srcs = ["gtest/lib/libgtest_main%s"],
    linkopts = ["-pthread"],
    deps = [":gtest"],
)
""" % (gtest.ext, gtest.ext)

def _build_file(cuda, rocm, gtest, dlpack, pyhdrs, pydbg, bench, torch):
    """Text of the generated BUILD file."""
    exports = ["tools/re2c", "tools/python3"]
    if cuda.found and cuda.nvcc:
        exports.append("cuda/bin/nvcc")
    if rocm.found and rocm.hipcc:
        exports.append("rocm/bin/hipcc")
    if cuda.found:
        cuda_targets = """
cc_library(
    name = "cuda_headers",
    hdrs = glob(["cuda/include/*.h", "cuda/include/*.hpp", "cuda/include/crt/**", "cuda/include/nv/**"]),
    includes = ["cuda/include"],
)

cc_library(name = "cudart", srcs = ["cuda/lib/%s"], deps = [":cuda_headers"])

cc_library(
    name = "cudart_static",
    srcs = %s,
    linkopts = ["-ldl", "-lpthread", "-lrt"],
    deps = [":cuda_headers"],
)
""" % (cuda.soname, '["cuda/lib/libcudart_static.a"]' if cuda.static else "[]")
    else:
        cuda_targets = """
cc_library(name = "cuda_headers")

cc_library(name = "cudart")

cc_library(name = "cudart_static")
"""
    if rocm.found:
        rocm_targets = """
cc_library(
    name = "hip_headers",
    hdrs = glob(["rocm/include/hip/**", "rocm/include/hsa/**"]),
    defines = ["__HIP_PLATFORM_AMD__"],  # HIP headers #error without a platform macro
    includes = ["rocm/include"],
)

cc_library(name = "amdhip64", srcs = ["rocm/lib/%s"], deps = [":hip_headers"])
""" % rocm.soname
    else:
        rocm_targets = """
cc_library(name = "hip_headers")

cc_library(name = "amdhip64")
"""
    if pyhdrs.found:
        python_targets = """
# Python.h of the detected interpreter (extension modules; libpython is not linked).
cc_library(
    name = "python_headers",
    hdrs = glob(["python/include/**/*.h"]),
    includes = ["python/include"],
)
"""
    else:
        python_targets = """
cc_library(name = "python_headers")
"""
    if pydbg.found:
        python_targets += """
# Python.h of the debug interpreter (Py_DEBUG: reference counts that sys.gettotalrefcount sees).
cc_library(
    name = "python_dbg_headers",
    hdrs = glob(["python_dbg/include/**/*.h"]),
    includes = ["python_dbg/include"],
)
"""
    else:
        python_targets += """
cc_library(name = "python_dbg_headers")
"""
    if bench.found:
        bench_targets = """
# Google Benchmark (bench/).
cc_library(
    name = "benchmark",
    srcs = ["benchmark/lib/%s"],
    hdrs = glob(["benchmark/include/benchmark/*.h"]),
    includes = ["benchmark/include"],
    linkopts = ["-pthread"],
)
""" % bench.lib
    else:
        bench_targets = """
cc_library(name = "benchmark")
"""
    if torch.found:
        torch_targets = """
# libtorch's ATen (bench/: the peer DLPack converter). Its headers define their own DLPack structs:
# do not include them in a translation unit that includes <dlpack/dlpack.h>.
cc_library(
    name = "libtorch",
    srcs = ["libtorch/lib/libtorch_cpu.so", "libtorch/lib/libc10.so"],
    hdrs = glob(["libtorch/include/ATen/**/*.h", "libtorch/include/c10/**/*.h", "libtorch/include/caffe2/**/*.h",
                 "libtorch/include/torch/*.h"]),
    includes = ["libtorch/include"],
    linkopts = ["-pthread"],
)
"""
    else:
        torch_targets = """
cc_library(name = "libtorch")
"""
    return """# Generated by //third_party/toolchains:dlmap_configure.bzl (host detection); see SUMMARY.
load("@rules_cc//cc:defs.bzl", "cc_library")

package(default_visibility = ["//visibility:public"])

exports_files(%s)

# dlmap_config.h: DLMAP_HAS_CUDA, DLMAP_HAS_ROCM, library dirs, SONAMEs, versions.
cc_library(name = "config", hdrs = ["dlmap_config.h"], includes = ["."])

%s%s%s%s%s%s%s""" % (
        repr(exports),
        _dlpack_targets(dlpack),
        _gtest_targets(gtest),
        cuda_targets,
        rocm_targets,
        python_targets,
        bench_targets,
        torch_targets,
    )

# dlmap_config.h's macros, listed once in this template (gpu/check.sh and
# //third_party/toolchains:no_toolkit_config_header fill the same one): %{NAME} is a value, inside quotes in the
# template where the macro is a C string.
_CONFIG_TEMPLATE = Label("//third_party/toolchains:dlmap_config.h.tpl")

def _c_str_body(s):
    """s escaped for the inside of a C string literal."""
    return s.replace("\\", "\\\\").replace('"', '\\"')

def _config_header(ctx, cuda, rocm, dlpack):
    values = {
        "WRITER": "the host detection (dlmap_configure.bzl)",
        "DLMAP_HAS_CUDA": "1" if cuda.found else "0",
        "DLMAP_HAS_ROCM": "1" if rocm.found else "0",
        "DLMAP_CUDA_LIBDIR": _c_str_body(cuda.libdir if cuda.found else ""),
        "DLMAP_CUDART_SONAME": _c_str_body(cuda.soname if cuda.found else ""),
        "DLMAP_CUDA_VERSION_STR": _c_str_body(cuda.version if cuda.found else ""),
        "DLMAP_ROCM_LIBDIR": _c_str_body(rocm.libdir if rocm.found else ""),
        "DLMAP_AMDHIP_SONAME": _c_str_body(rocm.soname if rocm.found else ""),
        "DLMAP_ROCM_VERSION_STR": _c_str_body(rocm.version if rocm.found else ""),
        "DLMAP_DLPACK_VERSION_STR": _c_str_body(dlpack.version),
        "DLMAP_DLPACK_HEADER": _c_str_body(dlpack.header),
    }
    text = ctx.read(ctx.path(_CONFIG_TEMPLATE))
    for name, value in values.items():
        placeholder = "%{" + name + "}"
        if placeholder not in text:
            fail("dlmap_configure: %s has no %s: drop it from _config_header" % (_CONFIG_TEMPLATE, placeholder))
        text = text.replace(placeholder, value)
    if "%{" in text:
        fail("dlmap_configure: %s has a placeholder _config_header does not fill: %s" %
             (_CONFIG_TEMPLATE, text[text.find("%{"):].split("}")[0] + "}"))
    return text

def _build_defs(cuda, rocm, re2c, python, dlpack, pyhdrs, pydbg, bench, torch):
    values = [
        ("HAS_CUDA", cuda.found),
        ("HAS_CUDA_STATIC", cuda.found and cuda.static),
        ("HAS_NVCC", cuda.found and cuda.nvcc != ""),
        ("CUDA_VERSION", cuda.version if cuda.found else ""),
        ("CUDA_ROOT", cuda.root if cuda.found else ""),
        ("HAS_ROCM", rocm.found),
        ("HAS_HIPCC", rocm.found and rocm.hipcc != ""),
        ("ROCM_VERSION", rocm.version if rocm.found else ""),
        ("ROCM_ROOT", rocm.root if rocm.found else ""),
        ("RE2C_VERSION", re2c.version),
        ("PYTHON_BIN", python.path),
        ("HAS_PYTHON_HEADERS", pyhdrs.found),
        ("PYTHON_INCLUDE", pyhdrs.include if pyhdrs.found else ""),
        ("PYTHON_EXT_SUFFIX", pyhdrs.ext_suffix if pyhdrs.found else ""),
        ("HAS_PYTHON_DBG", pydbg.found),
        ("PYTHON_DBG_BIN", pydbg.path if pydbg.found else ""),
        ("DLPACK_VERSION", dlpack.version),
        ("DLPACK_HEADER", dlpack.header),
        ("HAS_BENCHMARK", bench.found),
        ("HAS_LIBTORCH", torch.found),
        ("LIBTORCH_CXXOPTS", torch.cxxopts if torch.found else []),
    ]
    return "\n".join(
        ["# Generated by dlmap_configure: detection results for BUILD files and macros.", ""] +
        ["%s = %s" % (k, repr(v)) for k, v in values] +
        [
            "",
            "def if_cuda(if_true, if_false = []):",
            '    """if_true when the CUDA toolkit was found, else if_false."""',
            "    return if_true if HAS_CUDA else if_false",
            "",
            "def if_rocm(if_true, if_false = []):",
            '    """if_true when HIP/ROCm was found, else if_false."""',
            "    return if_true if HAS_ROCM else if_false",
            "",
        ],
    )

def _summary(cuda, rocm, re2c, python, gtest, dlpack, pyhdrs, pydbg, bench, torch):
    if cuda.found:
        c = "%s (CUDA %s, libdir %s, %s, nvcc %s, static %s)" % (
            cuda.root,
            cuda.version or "?",
            cuda.libdir,
            cuda.soname,
            cuda.nvcc or "not found",
            cuda.static,
        )
    else:
        c = "not found (the CUDA backend is built all the same): " + cuda.why
    if rocm.found:
        r = "%s (HIP %s, libdir %s, %s, hipcc %s)" % (
            rocm.root,
            rocm.version or "?",
            rocm.libdir,
            rocm.soname,
            rocm.hipcc or "not found",
        )
    else:
        r = "not found (the ROCm backend is built all the same): " + rocm.why
    return "\n".join([
        "cuda   : " + c,
        "rocm   : " + r,
        "re2c   : %s (%s)" % (re2c.path, re2c.version),
        "python : %s (Python %s, PyYAML %s)" % (python.path, python.version, python.yaml),
        "pyhdrs : " + ("%s (EXT_SUFFIX %s)" % (pyhdrs.include, pyhdrs.ext_suffix) if pyhdrs.found else "not found: " + pyhdrs.why),
        "pydbg  : " + ("%s (Python %s, include %s)" % (pydbg.path, pydbg.version, pydbg.include) if pydbg.found else "not found: " + pydbg.why),
        "gtest  : " + ("%s (libdir %s, %s)" % (gtest.root, gtest.libdir, gtest.ext) if gtest.found else "not found: " + gtest.why),
        "dlpack : " + ("%s (%s)" % (dlpack.header, dlpack.version or "version unknown") if dlpack.found else "not found: " + dlpack.why),
        "bench  : " + ("%s (libdir %s, %s)" % (bench.root, bench.libdir, bench.lib) if bench.found else "not found: " + bench.why),
        "torch  : " + ("%s (libdir %s)" % (torch.root, torch.libdir) if torch.found else "not found: " + torch.why),
        "",
    ])

# ---------------------------------------------------------------- rule

def _impl(ctx):
    re2c = _find_re2c(ctx)
    python = _find_python(ctx)
    gtest = _find_gtest(ctx)
    dlpack = _find_dlpack(ctx)
    cuda = _find_cuda(ctx)
    rocm = _find_rocm(ctx)
    pyhdrs = _find_python_headers(ctx, python)
    pydbg = _find_python_dbg(ctx, python)
    bench = _find_benchmark(ctx)
    torch = _find_libtorch(ctx)

    # Symlink (never copy) what the targets use.
    _wrapper(ctx, "tools/re2c", re2c.path)
    _wrapper(ctx, "tools/python3", python.path)
    if dlpack.found:
        ctx.symlink(dlpack.header, "dlpack/include/dlpack/dlpack.h")
    if gtest.found:
        ctx.symlink(gtest.root + "/include/gtest", "gtest/include/gtest")
        for lib in ["libgtest", "libgtest_main"]:
            ctx.symlink(gtest.libdir + "/" + lib + gtest.ext, "gtest/lib/" + lib + gtest.ext)
    if cuda.found:
        ctx.symlink(cuda.root + "/include", "cuda/include")
        ctx.symlink(cuda.libdir + "/" + cuda.soname, "cuda/lib/" + cuda.soname)
        if cuda.static:
            ctx.symlink(cuda.libdir + "/libcudart_static.a", "cuda/lib/libcudart_static.a")
        if cuda.nvcc:
            _wrapper(ctx, "cuda/bin/nvcc", cuda.nvcc)
    if rocm.found:
        # Only hip/ and hsa/, never the whole include dir (it may be /usr/include).
        for sub in ["hip", "hsa"]:
            if _exists(ctx, rocm.root + "/include/" + sub):
                ctx.symlink(rocm.root + "/include/" + sub, "rocm/include/" + sub)
        ctx.symlink(rocm.libdir + "/" + rocm.soname, "rocm/lib/" + rocm.soname)
        if rocm.hipcc:
            _wrapper(ctx, "rocm/bin/hipcc", rocm.hipcc)
    if pyhdrs.found:
        ctx.symlink(pyhdrs.include, "python/include")
    if pydbg.found:
        ctx.symlink(pydbg.include, "python_dbg/include")
    if bench.found:
        ctx.symlink(bench.root + "/include/benchmark", "benchmark/include/benchmark")
        ctx.symlink(bench.libdir + "/" + bench.lib, "benchmark/lib/" + bench.lib)
    if torch.found:
        # Only ATen/, c10/, caffe2/ and torch/, never the whole include dir (it may be /usr/include).
        for sub in ["ATen", "c10", "caffe2", "torch"]:
            if _exists(ctx, torch.root + "/include/" + sub):
                ctx.symlink(torch.root + "/include/" + sub, "libtorch/include/" + sub)
        for lib in ["libtorch_cpu.so", "libc10.so"]:
            ctx.symlink(torch.libdir + "/" + lib, "libtorch/lib/" + lib)

    ctx.file("WORKSPACE", "# Generated by dlmap_configure.\nworkspace(name = \"%s\")\n" % ctx.name, executable = False)
    ctx.file("BUILD", _build_file(cuda, rocm, gtest, dlpack, pyhdrs, pydbg, bench, torch), executable = False)
    ctx.file("dlmap_config.h", _config_header(ctx, cuda, rocm, dlpack), executable = False)
    ctx.file("build_defs.bzl", _build_defs(cuda, rocm, re2c, python, dlpack, pyhdrs, pydbg, bench, torch), executable = False)
    ctx.file("SUMMARY", _summary(cuda, rocm, re2c, python, gtest, dlpack, pyhdrs, pydbg, bench, torch), executable = False)

dlmap_configure = repository_rule(
    implementation = _impl,
    environ = _ENV_VARS,
    local = True,
    configure = True,
    doc = "Detects CUDA, HIP/ROCm, re2c, python3+PyYAML (and its headers and debug build), GoogleTest, DLPack, Google Benchmark and " +
          "libtorch; see the module docstring.",
)
