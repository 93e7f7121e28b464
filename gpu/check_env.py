# dlmap GPU check — what gpu/check.sh needs to know about the machine's Python: where a DLPack header is (the system's,
# else one a framework ships: PyTorch's ATen/dlpack.h, CuPy's, …; dlmap builds against whichever the machine has), and
# where Python.h is (to build the `dlmap` module for this interpreter), which frameworks it has, and where the CUDA
# runtime of the frameworks' pip wheels is (site-packages/nvidia/*/lib/libcudart.so.N: a machine without a toolkit).
# Prints the paths or names (dlpack and cudart: every candidate, best first), or nothing when there is none.
"""usage: check_env.py dlpack | python-include | frameworks | cudart"""
import glob
import importlib.util
import os
import re
import site
import sys
import sysconfig

# Frameworks that ship a DLPack header in their installed package, most common first.
PACKAGES = ("torch", "cupy", "jaxlib", "jax", "numpy", "tvm", "mxnet")


def declares_dlpack(path):
    try:
        with open(path, encoding="utf-8", errors="replace") as handle:
            text = handle.read(200000)
    except OSError:
        return False
    return "DLManagedTensor" in text and "DLDataType" in text


def dlpack_headers():
    """Every DLPack header found, best first: the system's, then the frameworks' (their own dlpack/dlpack.h layout
    first, then the shortest path). gpu/check.sh takes the first that dlmap compiles with."""
    found = []
    for directory in (os.environ.get("DLPACK_INCLUDE_DIR", ""), "/usr/include", "/usr/local/include",
                      os.path.join(sys.prefix, "include")):
        path = os.path.join(directory, "dlpack", "dlpack.h")
        if directory and declares_dlpack(path) and path not in found:
            found.append(path)
    packaged = []
    for package in PACKAGES:
        try:
            spec = importlib.util.find_spec(package)  # locates, does not import
        except (ImportError, ValueError):
            continue
        for root in list(spec.submodule_search_locations or []) if spec else []:
            for directory, subdirectories, files in os.walk(root):
                subdirectories[:] = [d for d in subdirectories if d not in ("__pycache__", "tests", "test")]
                if "dlpack.h" in files and declares_dlpack(os.path.join(directory, "dlpack.h")):
                    packaged.append(os.path.join(directory, "dlpack.h"))
    packaged.sort(key=lambda p: (not p.endswith(os.path.join("dlpack", "dlpack.h")), len(p)))
    return found + [p for p in packaged if p not in found]


def python_include():
    include = sysconfig.get_paths().get("include", "")
    return include if include and os.path.exists(os.path.join(include, "Python.h")) else ""


def frameworks():
    """The frameworks gpu/python checks exercise that this interpreter has (located, not imported: fast)."""
    found = []
    for name in ("torch", "jax", "cupy"):
        try:
            if importlib.util.find_spec(name) is not None:
                found.append(name)
        except (ImportError, ValueError):
            pass
    return found


def cudart_dirs():
    """Directories of the pip wheels' CUDA runtimes (nvidia-cuda-runtime-cu12: nvidia/cuda_runtime/lib; CUDA 13's
    nvidia/cu13/lib), in this interpreter's search order, that hold a libcudart.so.N (versioned: wheels ship no
    unversioned libcudart.so)."""
    roots = list(sys.path)
    try:
        roots += site.getsitepackages() + [site.getusersitepackages()]
    except AttributeError:  # a virtual environment's old site.py
        pass
    found = []
    for root in roots:
        if not root or not os.path.isdir(os.path.join(root, "nvidia")):
            continue
        for directory in sorted(glob.glob(os.path.join(root, "nvidia", "*", "lib"))):
            directory = os.path.realpath(directory)
            names = os.listdir(directory)
            if directory not in found and any(re.fullmatch(r"libcudart\.so\.[0-9]+", n) for n in names):
                found.append(directory)
    return found


def main(argv):
    if argv == ["dlpack"]:
        for path in dlpack_headers():
            print(path)
    elif argv == ["python-include"]:
        print(python_include())
    elif argv == ["frameworks"]:
        print(" ".join(frameworks()))
    elif argv == ["cudart"]:
        for path in cudart_dirs():
            print(path)
    else:
        sys.exit(__doc__)


if __name__ == "__main__":
    main(sys.argv[1:])
