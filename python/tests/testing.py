# dlmap Python binding tests — shared helpers: ctypes views of the DLPack structs, capsules and exchange table,
# hand-made producers with counting deleters, interpreter checks and RSS, and the reference-count check on Python's
# debug build.
import atexit
import ctypes
import gc
import importlib
import importlib.util
import os
import subprocess
import sys
import sysconfig
import textwrap
import unittest

# The module under test: `dlmap` (the one run_python.sh puts on PYTHONPATH), or the installed module DLMAP_PY_MODULE
# names (the pip sdist's dlmap_array_api beside its dlmap: //python/pip:user_path_test runs the hostile tests on both).
MODULE = os.environ.get("DLMAP_PY_MODULE", "dlmap")
dlmap = importlib.import_module(MODULE)

# ---- environment -----------------------------------------------------------------------------------------------------


def require(module, package):
    """Imports a peer framework, or stops with the Debian package to install. On Python's debug build, a peer whose
    extension modules were compiled for the release interpreter turns the reference-count check off (saying so)."""
    try:
        peer = importlib.import_module(module)
    except ImportError as e:
        sys.exit(f"{module} is not importable on {sys.executable} ({e}); install it with: apt-get install {package}")
    REFCOUNTS.check_peer(module)
    return peer


SANITIZED = os.environ.get("DLMAP_SANITIZED") == "1"


def _spec_current():
    """abi.current of spec/versions.yaml beside python/ (in the runfiles under Bazel), read with PyYAML: the version
    dlmap stamps on the tensors it makes and asks producers for."""
    import yaml
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "spec", "versions.yaml")
    with open(path, encoding="utf-8") as f:
        major, minor = yaml.safe_load(f)["abi"]["current"].split(".")
    return int(major), int(minor)


CURRENT = _spec_current()


def spec_yaml(*parts):
    """A file of spec/ beside python/ (in the runfiles under Bazel: //python's _TEST_HELPERS), read with PyYAML."""
    import yaml
    path = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "spec", *parts)
    with open(path, encoding="utf-8") as f:
        return yaml.safe_load(f)


def profile_spec(name):
    """The `profile:` mapping of spec/profiles/<name>.yaml, as written (its `extends:` not merged)."""
    return spec_yaml("profiles", name + ".yaml")["profile"]


def profile_error(profile, error_id):
    """(exception class, message template) of error_id under a shipped profile: the nearest `errors:` entry along its
    `extends:` chain that sets each, else spec/errors.yaml's (README "Profiles")."""
    import builtins
    entry = {}
    while profile:
        body = profile_spec(profile)
        for override in body.get("errors", []):
            if override["id"] == error_id:
                entry = dict(override, **entry)
        profile = body.get("extends")
    catalogue = next(e for e in spec_yaml("errors.yaml")["errors"] if e["id"] == error_id)
    entry = dict(catalogue, **entry)
    message = (entry["status"] + ": " if "status" in entry else "") + entry["message"]
    return getattr(builtins, entry["kind"]), message


def dtype_names():
    """{dtype name or alias: (code, bits)} of spec/dtypes.yaml, each width's name and aliases."""
    names = {}
    for code in spec_yaml("dtypes.yaml")["dtype_codes"]:
        for width in code["widths"]:
            for name in [width["name"]] + width.get("aliases", []):
                names[name] = (code["value"], width["bits"])
    return names


def device_type_value(name):
    """The value of spec/devices.yaml's device type `name` (kDLCPU → 1)."""
    return next(d["value"] for d in spec_yaml("devices.yaml")["device_types"] if d["name"] == name)

# Where no CUDA device can be reached (CI), dlmap refuses CUDA work with the catalogue's platform_unavailable error and
# the vendor's own reason; tests of that refusal are skipped where a device is present.
CUDA = dlmap.platform_status("cuda")
CUDA_UNAVAILABLE = ("Device type kDLCUDA (2) needs platform cuda, which this build or machine cannot serve: "
                    + CUDA["reason"])
without_cuda = unittest.skipIf(CUDA["available"], "a CUDA device is reachable: dlmap does not refuse CUDA work here")


def run_child(code, timeout=60):
    """Runs code in a new interpreter (same python, PYTHONPATH and sanitizer preload), for what may crash or hang:
    (returncode, stdout, stderr); a hang past timeout is returncode None."""
    try:
        r = subprocess.run([sys.executable, "-X", "faulthandler", "-c", textwrap.dedent(code)], capture_output=True,
                           text=True, timeout=timeout)
    except subprocess.TimeoutExpired as e:  # its output is bytes whatever `text` said
        return None, (e.stdout or b"").decode(errors="replace"), (e.stderr or b"").decode(errors="replace")
    return r.returncode, r.stdout, r.stderr


def rss_bytes():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def stats():
    gc.collect()
    return dlmap._stats()


# ---- reference counts (Python's debug build) -------------------------------------------------------------------------


class _RefCounts:
    """The per-test reference-count check, on where sys.gettotalrefcount exists (Python's debug build, python3-dbg) and
    this dlmap was compiled for it. As CPython's own refleak hunter (regrtest -R) does, DlmapTestCase runs each test
    WARMUPS + RUNS more times on its own before the reported run (warm-ups fill caches, interned strings and lazily
    made objects) and fails it when the total after gc.collect() rose on every one of the last RUNS runs: a cache
    that settles rises on some runs only, a leak on all. DLMAP_REFCOUNT_CHECK=1 (the *_dbg Bazel tests) makes the check
    required: a process where it cannot be on stops with the reason, unless a peer framework turned it off."""

    WARMUPS = 2
    RUNS = 3

    def __init__(self):
        self.required = os.environ.get("DLMAP_REFCOUNT_CHECK") == "1"
        self.off_because = None
        if not hasattr(sys, "gettotalrefcount"):
            self.off_because = f"{sys.executable} is not Python's debug build (no sys.gettotalrefcount)"
        elif not dlmap._counts_references():
            self.off_because = (f"{dlmap.__file__} was compiled for the release interpreter: its Py_INCREF/Py_DECREF "
                                "do not count in sys.gettotalrefcount (build the module against python3-dbg's headers)")
        if self.off_because and self.required:
            sys.exit(f"DLMAP_REFCOUNT_CHECK=1, but the reference-count check cannot run: {self.off_because}")
        self.on = self.off_because is None
        self.checked = 0
        self.announced = False

    def announce(self):
        """Says once, when the first test runs, whether the check is on, and at exit what it did (never a silent pass;
        child interpreters that import this module but run no test say nothing)."""
        if self.announced or not hasattr(sys, "gettotalrefcount"):
            return
        self.announced = True
        if self.on:
            print(f"reference-count check on: each test runs {self.WARMUPS} + {self.RUNS} more times and fails when "
                  f"sys.gettotalrefcount rose on each of the last {self.RUNS}", file=sys.stderr)
        atexit.register(self.report)

    def report(self):
        if self.on:
            print(f"reference-count check: {self.checked} tests checked", file=sys.stderr)
        else:
            print(f"reference-count check off: {self.off_because}; the tests ran on the debug interpreter all the "
                  "same", file=sys.stderr)

    def check_peer(self, module):
        """Turns the check off (saying why) when the peer `module` runs extension code compiled for another interpreter
        (Debian's NumPy and PyTorch have no debug builds): the objects it drops last would count as leaks."""
        if not self.on:
            return
        own_suffix = sysconfig.get_config_var("EXT_SUFFIX")
        foreign = sorted(name for name, m in list(sys.modules.items())
                         if (name == module or name.startswith(module + "."))
                         and str(getattr(m, "__file__", None) or "").endswith(".so")
                         and not m.__file__.endswith(own_suffix))
        if foreign:
            self.on = False
            self.off_because = (f"{module}'s extension modules ({', '.join(foreign[:3])}"
                                f"{', …' if len(foreign) > 3 else ''}) were compiled for the release interpreter, not "
                                f"for {sys.executable} ({own_suffix}): the objects they drop last would count as leaks")

    @staticmethod
    def total():
        gc.collect()
        # The method cache holds references to attribute names (3.13 deprecates _clear_type_cache for this one).
        (getattr(sys, "_clear_internal_caches", None) or getattr(sys, "_clear_type_cache", lambda: None))()
        return sys.gettotalrefcount()

    def leak(self, case):
        """Runs `case` WARMUPS + RUNS times with results of its own. None when it left nothing behind (or was skipped);
        else the message its reported run fails with."""
        deltas = []
        for i in range(self.WARMUPS + self.RUNS):
            result = unittest.TestResult()
            before = self.total()
            unittest.TestCase.run(case, result)
            after = self.total()
            if result.skipped:
                return None
            if not result.wasSuccessful():
                text = (result.errors + result.failures + result.unexpectedSuccesses)[0]
                text = text[1] if isinstance(text, tuple) else "unexpected success"
                return (f"{case.id()} failed on run {i + 1} of the {self.WARMUPS + self.RUNS} made for the "
                        f"reference-count check before the reported one:\n{text}")
            if i >= self.WARMUPS:
                deltas.append(after - before)
        if not self.on:
            # The case imported a peer compiled for the release interpreter (check_peer): its own drops would count,
            # so this case goes unchecked, said here; the check stays on for the others.
            print(f"reference-count check skipped for {case.id()}: {self.off_because}", file=sys.stderr)
            self.on, self.off_because = True, None
            return None
        self.checked += 1
        if all(d > 0 for d in deltas):
            return (f"reference leak: {case.id()} left {', '.join(map(str, deltas))} more references "
                    f"(sys.gettotalrefcount) on each of its last {self.RUNS} runs, after {self.WARMUPS} warm-ups")
        return None


REFCOUNTS = _RefCounts()


class DlmapTestCase(unittest.TestCase):
    """Checks after every test that dlmap's allocations and exports returned to where they were, and on Python's debug
    build that the test leaves no references behind (_RefCounts)."""

    def run(self, result=None):
        REFCOUNTS.announce()
        if not REFCOUNTS.on:
            return super().run(result)
        leak = REFCOUNTS.leak(self)
        if leak is None:
            try:
                return super().run(result)
            finally:  # a peer this case imported turned the check off for itself only (leak says so)
                REFCOUNTS.on, REFCOUNTS.off_because = True, None
        # The reported run: the test as it is, then the check's verdict as its failure.
        name = self._testMethodName
        test = getattr(self, name)

        def test_then_leak():
            test()
            raise self.failureException(leak)

        setattr(self, name, test_then_leak)
        try:
            return super().run(result)
        finally:
            delattr(self, name)

    def setUp(self):
        deleted.clear()  # the deleters of this test's hand-made tensors, never an earlier test's
        self._before = stats()

    def tearDown(self):
        dlmap._fail_allocations(0)
        after = stats()
        self.assertEqual(after["live_allocations"], self._before["live_allocations"], "dlmap allocations leaked")
        self.assertEqual(after["live_exports"], self._before["live_exports"], "exports still hold their arrays")

    def assertRaisesExactly(self, cls, message, fn, *args, **kwargs):
        """fn raises exactly `cls` (not a subclass) with exactly `message`; returns the exception."""
        with self.assertRaises(BaseException) as ctx:
            fn(*args, **kwargs)
        self.assertIs(type(ctx.exception), cls, f"{type(ctx.exception).__name__}: {ctx.exception}")
        self.assertEqual(str(ctx.exception), message)
        return ctx.exception


# ---- ctypes views of DLPack -----------------------------------------------------------------------------------------


def _load_dlpack():
    """python/check/dlpack.py, the one ctypes definition of the DLPack structs (the conformance checker ships it), loaded
    by its path under a private name: these tests run with the bare extension, not the checker's package."""
    here = os.path.dirname(os.path.abspath(__file__))
    spec = importlib.util.spec_from_file_location("_dlmap_tests_dlpack", os.path.join(here, os.pardir, "check",
                                                                                     "dlpack.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


_dlpack = _load_dlpack()
DLDevice = _dlpack.DLDevice
DLDataType = _dlpack.DLDataType
DLTensor = _dlpack.DLTensor
DLPackVersion = _dlpack.DLPackVersion
DLManagedTensor = _dlpack.DLManagedTensor
DLManagedTensorVersioned = _dlpack.DLManagedTensorVersioned

# The structs keep their deleter as a plain address; a test's deleter is a function of one of these types, stored
# with deleter_address and called through run_deleter.
LEGACY_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
VERSIONED_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))


def deleter_address(function):
    """The address to store in a managed tensor's deleter field (None, a NULL deleter, for None). The caller keeps
    function alive as long as a tensor may call it."""
    return None if function is None else ctypes.cast(function, ctypes.c_void_p).value


def run_deleter(managed):
    """Calls the deleter of a managed tensor given as a ctypes pointer to either struct, as its producer's consumer
    would."""
    kind = VERSIONED_DELETER if isinstance(managed.contents, DLManagedTensorVersioned) else LEGACY_DELETER
    kind(managed.contents.deleter)(managed)


FLAG_READ_ONLY = 1
FLAG_IS_COPIED = 2
FLAG_IS_SUBBYTE_TYPE_PADDED = 4

# The C exchange API (DLPack 1.3). Functions that take Python objects run with the GIL held (PYFUNCTYPE), so a -1
# return with an exception set raises it here.
SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor),
                             ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)), ctypes.c_void_p, SET_ERROR)
FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object,
                                   ctypes.POINTER(ctypes.POINTER(DLManagedTensorVersioned)))
TO_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLManagedTensorVersioned),
                                 ctypes.POINTER(ctypes.c_void_p))
DLTENSOR_FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
CURRENT_WORK_STREAM = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))


class DLPackExchangeAPIHeader(ctypes.Structure):
    pass


DLPackExchangeAPIHeader._fields_ = [("version", DLPackVersion),
                                    ("prev_api", ctypes.POINTER(DLPackExchangeAPIHeader))]


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [
        ("header", DLPackExchangeAPIHeader),
        ("managed_tensor_allocator", ALLOCATOR),
        ("managed_tensor_from_py_object_no_sync", FROM_PY_OBJECT),
        ("managed_tensor_to_py_object_no_sync", TO_PY_OBJECT),
        ("dltensor_from_py_object_no_sync", DLTENSOR_FROM_PY_OBJECT),
        ("current_work_stream", CURRENT_WORK_STREAM),
    ]


# ---- capsules --------------------------------------------------------------------------------------------------------

# Capsule names must outlive their capsules: module-level bytes.
NAME_LEGACY = b"dltensor"
NAME_VERSIONED = b"dltensor_versioned"
NAME_LEGACY_USED = b"used_dltensor"
NAME_VERSIONED_USED = b"used_dltensor_versioned"
NAME_EXCHANGE_API = b"dlpack_exchange_api"
NAME_BOGUS = b"not_a_dltensor"


def _pyapi(name, restype, *argtypes):
    """A private prototype for a C-API function (ctypes.pythonapi's attributes are shared)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_capsule_get_name = _pyapi("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_capsule_get_pointer = _pyapi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _pyapi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_new = _pyapi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_capsule_is_valid_raw = _pyapi("PyCapsule_IsValid", ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)
_capsule_get_pointer_raw = _pyapi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)
_py_decref = _pyapi("Py_DecRef", None, ctypes.py_object)


class Py_buffer(ctypes.Structure):
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.c_void_p),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.POINTER(ctypes.c_ssize_t)),
        ("strides", ctypes.POINTER(ctypes.c_ssize_t)),
        ("suboffsets", ctypes.POINTER(ctypes.c_ssize_t)),
        ("internal", ctypes.c_void_p),
    ]


# PyBUF_* request flags (Include/pybuffer.h).
PyBUF_SIMPLE, PyBUF_WRITABLE, PyBUF_FORMAT, PyBUF_ND = 0, 0x1, 0x4, 0x8
PyBUF_STRIDES = 0x10 | PyBUF_ND
PyBUF_C_CONTIGUOUS, PyBUF_F_CONTIGUOUS, PyBUF_ANY_CONTIGUOUS = 0x20 | PyBUF_STRIDES, 0x40 | PyBUF_STRIDES, 0x80 | PyBUF_STRIDES

_get_buffer = _pyapi("PyObject_GetBuffer", ctypes.c_int, ctypes.py_object, ctypes.POINTER(Py_buffer), ctypes.c_int)
_release_buffer = _pyapi("PyBuffer_Release", None, ctypes.POINTER(Py_buffer))


def get_buffer(obj, flags):
    """PyObject_GetBuffer(obj, flags) exactly as a C consumer makes it (the exporter's exception propagates); returns
    what the view said, released again."""
    view = Py_buffer()
    _get_buffer(obj, ctypes.byref(view), flags)
    try:
        n = view.ndim
        return {
            "buf": view.buf, "len": view.len, "itemsize": view.itemsize, "readonly": bool(view.readonly), "ndim": n,
            "format": None if view.format is None else view.format.decode(),
            "shape": None if not view.shape else tuple(view.shape[i] for i in range(n)),
            "strides": None if not view.strides else tuple(view.strides[i] for i in range(n)),
        }
    finally:
        _release_buffer(ctypes.byref(view))


def capsule_name(capsule):
    name = _capsule_get_name(capsule)
    return None if name is None else name.decode()


def capsule_pointer(capsule, name):
    return _capsule_get_pointer(capsule, name)


def rename_capsule(capsule, name):
    if _capsule_set_name(capsule, name) != 0:
        raise RuntimeError("PyCapsule_SetName failed")


def versioned_tensor(capsule):
    """The DLManagedTensorVersioned of an unconsumed versioned capsule, for reading. It keeps the capsule (and so the
    tensor) alive, as do the fields taken from it."""
    tensor = DLManagedTensorVersioned.from_address(capsule_pointer(capsule, NAME_VERSIONED))
    tensor.capsule = capsule
    return tensor


def legacy_tensor(capsule):
    """The DLManagedTensor of an unconsumed legacy capsule, for reading; keeps the capsule alive."""
    tensor = DLManagedTensor.from_address(capsule_pointer(capsule, NAME_LEGACY))
    tensor.capsule = capsule
    return tensor


def exchange_api(cls=None):
    """The DLPackExchangeAPI table a type publishes (dlmap.Array by default)."""
    capsule = (cls or dlmap.Array).__dlpack_c_exchange_api__
    return DLPackExchangeAPI.from_address(capsule_pointer(capsule, NAME_EXCHANGE_API))


def steal_object(address):
    """The object behind a new reference returned through a void ** (the reference is handed to Python)."""
    obj = ctypes.cast(ctypes.c_void_p(address), ctypes.py_object).value
    _py_decref(obj)
    return obj


# ---- sub-interpreters ------------------------------------------------------------------------------------------------


def subinterpreter_runner():
    """(run, how): run(code) executes Python source in a new sub-interpreter that shares the main interpreter's GIL
    (dlmap is a single-phase extension module, which an isolated interpreter refuses to import) and returns when it
    has ended, raising RuntimeError when the code raised; how names the means. (None, reason) where this interpreter
    offers none: _testcapi.run_in_subinterp, or _interpreters (3.13+) / _xxsubinterpreters (3.11, 3.12)."""
    try:
        import _testcapi
    except ImportError:
        _testcapi = None
    if _testcapi is not None and hasattr(_testcapi, "run_in_subinterp"):
        def run(code):
            if _testcapi.run_in_subinterp(textwrap.dedent(code)) != 0:
                raise RuntimeError("the sub-interpreter's code raised (its traceback is on stderr)")
        return run, "_testcapi.run_in_subinterp"
    for name in ("_interpreters", "_xxsubinterpreters"):
        try:
            module = importlib.import_module(name)
        except ImportError:
            continue

        def run(code, module=module):
            interp = None
            for args, kwargs in ((("legacy",), {}), ((), {"isolated": False}), ((), {})):  # 3.13+, 3.12, 3.11
                try:
                    interp = module.create(*args, **kwargs)
                    break
                except TypeError:
                    continue
            try:
                failure = module.run_string(interp, textwrap.dedent(code))
            finally:
                module.destroy(interp)
            if failure is not None:  # 3.13+ returns the exception's summary instead of raising
                raise RuntimeError(f"the sub-interpreter's code raised: {failure}")
        return run, name
    return None, (f"{sys.executable} offers no sub-interpreters to tests (no _testcapi.run_in_subinterp, "
                  f"_interpreters or _xxsubinterpreters)")


# ---- future-major tensors: only the ABI-stable head ------------------------------------------------------------------

# What every DLPack major keeps at the start of DLManagedTensorVersioned: version, manager_ctx, deleter, flags. A
# consumer reads nothing past it before it knows the major version.
STABLE_HEAD_BYTES = DLManagedTensorVersioned.dl_tensor.offset
HEAD_DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


class StableHead(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("manager_ctx", ctypes.c_void_p), ("deleter", HEAD_DELETER),
                ("flags", ctypes.c_uint64)]


assert ctypes.sizeof(StableHead) == STABLE_HEAD_BYTES == 32

_libc = ctypes.CDLL(None, use_errno=True)
_libc.mmap.restype = ctypes.c_void_p
_libc.mmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int, ctypes.c_int, ctypes.c_int, ctypes.c_long]
_libc.mprotect.argtypes = [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
_libc.munmap.argtypes = [ctypes.c_void_p, ctypes.c_size_t]
_PROT_NONE, _PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS = 0, 3, 0x22


class GuardedHead:
    """A DLManagedTensorVersioned that is only its stable head, placed at the end of a readable page whose next page is
    inaccessible: a read of any field past `flags` (a DLPack 2.x tensor may have none) is a SIGSEGV. `address` is
    the tensor; its deleter (HEAD_DELETER, or None) gets that address. Unmapped by close()."""

    def __init__(self, major, minor=0, deleter=None, flags=0):
        page = os.sysconf("SC_PAGE_SIZE")
        base = _libc.mmap(None, 2 * page, _PROT_READ_WRITE, _MAP_PRIVATE_ANONYMOUS, -1, 0)
        if base in (None, ctypes.c_void_p(-1).value):
            raise OSError(ctypes.get_errno(), "mmap failed")
        if _libc.mprotect(base + page, page, _PROT_NONE) != 0:
            raise OSError(ctypes.get_errno(), "mprotect failed")
        self.base, self.size = base, 2 * page
        self.address = base + page - STABLE_HEAD_BYTES
        head = StableHead.from_address(self.address)
        head.version = DLPackVersion(major, minor)
        head.deleter = deleter if deleter is not None else HEAD_DELETER()
        head.flags = flags
        self.deleter = deleter  # the callback must outlive the tensor

    def close(self):
        if self.base is not None:
            _libc.munmap(self.base, self.size)
            self.base = None


def table_handing_out(tensor_address):
    """A DLPack C exchange table of the current version whose managed_tensor_from_py_object_no_sync answers any object
    with the DLManagedTensorVersioned at `tensor_address()` (called once per call). The table keeps its callback."""

    @FROM_PY_OBJECT
    def from_py(obj, out):
        out[0] = ctypes.cast(ctypes.c_void_p(tensor_address()), ctypes.POINTER(DLManagedTensorVersioned))
        return 0

    table = DLPackExchangeAPI()
    table.header.version = DLPackVersion(*CURRENT)
    table.managed_tensor_from_py_object_no_sync = from_py
    return table


# ---- hand-made producers ---------------------------------------------------------------------------------------------

_live_tensors = {}  # address of a hand-made managed tensor → what keeps it and its buffer alive
deleted = []  # tags of hand-made tensors whose deleter ran, in order


def _release(address):
    entry = _live_tensors.pop(address, None)
    if entry is None:
        raise AssertionError(f"deleter called twice or on an unknown tensor at {address:#x}")
    deleted.append(entry["tag"])


@VERSIONED_DELETER
def _versioned_deleter(tensor):
    _release(ctypes.addressof(tensor.contents))


@LEGACY_DELETER
def _legacy_deleter(tensor):
    _release(ctypes.addressof(tensor.contents))


@ctypes.CFUNCTYPE(None, ctypes.c_void_p)
def _capsule_destructor(capsule):
    # Runs while the capsule is being destroyed: never turn it back into a Python object.
    for name in (NAME_VERSIONED, NAME_LEGACY):
        if _capsule_is_valid_raw(capsule, name):
            _release(_capsule_get_pointer_raw(capsule, name))


_DESTRUCTOR_ADDRESS = ctypes.cast(_capsule_destructor, ctypes.c_void_p).value


def live_hand_made():
    return len(_live_tensors)


class Wrap:
    """An object whose __dlpack__ hands out a given capsule (to consume one capsule several times)."""

    def __init__(self, capsule, device=(1, 0)):
        self.capsule, self.device = capsule, device

    def __dlpack__(self, **kwargs):
        return self.capsule

    def __dlpack_device__(self):
        return self.device


class Producer:
    """A DLPack producer over `buffer` (anything with the buffer protocol; kept alive by the tensor), whose tensors are
    hand-made with ctypes and count their deleter calls in `deleted`.

    legacy_only: __dlpack__ accepts only `stream` (a pre-2023 producer) and returns "dltensor" capsules.
    legacy_answer: accepts every keyword but still answers with a "dltensor" capsule.
    version: stamped on versioned tensors; flags: their flags; name: override the capsule name (bytes).
    reuse: return the same capsule on every call; reported: what __dlpack_device__ says (default: device).
    ndim: written into the tensor instead of len(shape).
    """

    def __init__(self, buffer, dtype, shape, strides=None, byte_offset=0, device=(1, 0), version=(1, 3), flags=0,
                 legacy_only=False, legacy_answer=False, name=None, reuse=False, reported=None, tag="producer",
                 data=None, ndim=None):
        self.buffer = buffer
        self.dtype, self.shape, self.strides = dtype, tuple(shape), strides
        self.byte_offset, self.device, self.version, self.flags = byte_offset, device, version, flags
        self.legacy_only, self.legacy_answer = legacy_only, legacy_answer
        self.name, self.reuse, self.reported, self.tag = name, reuse, reported, tag
        self.data = data
        self.ndim = ndim  # overrides len(shape) in the tensor (a malformed ndim)
        self.calls = []
        self._capsule = None

    def __dlpack_device__(self):
        return self.reported or self.device

    def __dlpack__(self, **kwargs):
        self.calls.append(dict(kwargs))
        if self.legacy_only and set(kwargs) - {"stream"}:
            raise TypeError(f"__dlpack__() got an unexpected keyword argument '{sorted(set(kwargs) - {'stream'})[0]}'")
        if self.reuse and self._capsule is not None:
            return self._capsule
        max_version = kwargs.get("max_version")
        versioned = not (self.legacy_only or self.legacy_answer) and max_version is not None and max_version[0] >= 1
        capsule = self.make_capsule(versioned)
        if self.reuse:
            self._capsule = capsule
        return capsule

    def _fill(self, tensor):
        ndim = len(self.shape)
        shape = (ctypes.c_int64 * max(ndim, 1))(*self.shape)
        strides = None if self.strides is None else (ctypes.c_int64 * max(ndim, 1))(*self.strides)
        if self.data is not None:
            tensor.data = self.data
        elif self.buffer is not None:
            tensor.data = ctypes.addressof(ctypes.c_char.from_buffer(self.buffer))
        tensor.device = DLDevice(*self.device)
        tensor.ndim = ndim if self.ndim is None else self.ndim
        tensor.dtype = DLDataType(*self.dtype)
        tensor.shape = ctypes.cast(shape, ctypes.POINTER(ctypes.c_int64)) if ndim else None
        tensor.strides = ctypes.cast(strides, ctypes.POINTER(ctypes.c_int64)) if strides is not None else None
        tensor.byte_offset = self.byte_offset
        return shape, strides

    def make_capsule(self, versioned):
        if versioned:
            managed = DLManagedTensorVersioned()
            managed.version = DLPackVersion(*self.version)
            managed.flags = self.flags
            managed.deleter = deleter_address(_versioned_deleter)
            keep = self._fill(managed.dl_tensor)
        else:
            managed = DLManagedTensor()
            managed.deleter = deleter_address(_legacy_deleter)
            keep = self._fill(managed.dl_tensor)
        address = ctypes.addressof(managed)
        _live_tensors[address] = {"tensor": managed, "keep": keep, "buffer": self.buffer, "tag": self.tag}
        name = self.name or (NAME_VERSIONED if versioned else NAME_LEGACY)
        destructor = _DESTRUCTOR_ADDRESS if name in (NAME_VERSIONED, NAME_LEGACY) else None
        capsule = _capsule_new(address, name, destructor)
        if destructor is None:
            _live_tensors.pop(address)  # a capsule dlmap must refuse: nothing to release
        return capsule
