# dlmap Python binding tests — property test (python3-hypothesis): hostile producers and arguments never crash dlmap.
"""Properties: dlmap.empty, Array.__dlpack__, dlmap.from_dlpack and the C exchange-API discovery, driven with
producers and arguments that misbehave — __index__ that raises, returns a non-int or changes the list it sits in;
__dlpack__ that raises, returns wrong objects, capsules with wrong or consumed names, legacy structs to versioned
requests, tensors with hostile fields; __dlpack_device__ that lies, raises or returns wrong objects; forged exchange
tables and attributes (1.2 ints, cyclic prev_api chains, entries that fail or return nothing); deleters that raise —
give a result or a clean error (the catalogue's, or the hostile object's own exception), with every deleter run exactly
once, nothing leaked, and no host view of device memory.

Every example runs in a child interpreter of its own (hostile_child.py, forked from a server that imported hostile.py
and dlmap: python/check/children.py), so that a crash is a failing example that hypothesis shrinks and reports, not a
dead test. Run by //python:hostile_property_test (and under --config=asan by
tools/hardening.sh). Environment: DLMAP_HOSTILE_EXAMPLES examples per property (default 40), DLMAP_HOSTILE_RANDOM=1
a fresh random seed instead of the fixed, derandomised run.
"""
import collections
import importlib.util
import json
import os
import subprocess
import sys
import unittest

import hostile_heads
import hostile_types

try:
    from hypothesis import HealthCheck, example, given, settings
    from hypothesis import strategies as st
except ImportError:  # a clear message instead of a traceback
    sys.exit(f"hostile_property_test: needs python3-hypothesis (apt-get install python3-hypothesis) under "
             f"{sys.executable}")

EXAMPLES = int(os.environ.get("DLMAP_HOSTILE_EXAMPLES", "40"))
RANDOM = os.environ.get("DLMAP_HOSTILE_RANDOM") == "1"
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
                    suppress_health_check=list(HealthCheck), print_blob=True)
OUTCOMES = collections.Counter()
HERE = os.path.dirname(os.path.abspath(__file__))


def _load_children():
    """python/check/children.py (the conformance checker's child interpreters, forked from a server that imported
    hostile.py and dlmap once), loaded by its path: these tests run with the bare extension, not the checker's
    package."""
    spec = importlib.util.spec_from_file_location("_dlmap_tests_children",
                                                  os.path.join(HERE, os.pardir, "check", "children.py"))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


children = _load_children()


def run_child(spec):
    """Runs one scenario in a child interpreter of its own; fails on a crash, a hang or any broken promise it
    reports."""
    env = dict(os.environ)
    # Under ASan a hostile size must still be dlmap's MemoryError, not the sanitizer's abort on a huge malloc.
    env["ASAN_OPTIONS"] = env.get("ASAN_OPTIONS", "") + ":allocator_may_return_null=1"
    try:
        r = children.run(os.path.join(HERE, "hostile_child.py"), [json.dumps(spec)], env, 120, ["hostile"])
    except subprocess.TimeoutExpired:
        raise AssertionError(f"the child hung on {json.dumps(spec)}")
    lines = r.stdout.strip().splitlines()
    if r.returncode != 0 or not lines:
        raise AssertionError(f"the child died (status {r.returncode}) on {json.dumps(spec)}:\n{r.stderr[-4000:]}")
    result = json.loads(lines[-1])
    if result["problems"]:
        raise AssertionError(f"{result['problems']} on {json.dumps(spec)}\nresult: {result}\n{r.stderr[-2000:]}")
    OUTCOMES[(spec["kind"], result["outcome"])] += 1
    return result


# ---- values ----------------------------------------------------------------------------------------------------------

HUGE = [2 ** 62 - 1, 2 ** 62, 2 ** 63 - 1, 6 * 10 ** 18, 2 ** 63, 2 ** 64, -2 ** 63, -2 ** 63 - 1, 2 ** 70]
# Extents small enough to allocate, or so large that sizes overflow (never a real multi-gigabyte allocation).
extents = st.one_of(st.integers(0, 5), st.sampled_from([8, -1] + HUGE))
plain_ints = st.one_of(st.integers(-3, 5), st.sampled_from(HUGE + [2 ** 31, 0x7f00]))
ACTIONS = ["value", "raise", "non_int", "clear", "append", "pop", "replace"]


def index(values):
    return st.fixed_dictionaries({"index": st.fixed_dictionaries({"value": values,
                                                                  "action": st.sampled_from(ACTIONS)})})


odd_values = st.one_of(st.booleans(), st.none(), st.sampled_from(["", "1", "cpu", "cuda"]),
                       st.builds(lambda x: {"float": x}, st.sampled_from([0.0, 1.0, 1.5])), st.just({"object": True}))
bool_scalars = st.builds(lambda v, fails, kind, ndim: {"bool_scalar": {"value": v, "fails": fails, "kind": kind,
                                                                        "ndim": ndim}},
                         st.booleans(), st.sampled_from([None, None, "ndim", "dtype", "kind", "bool"]),
                         st.sampled_from(["b", "b", "i"]), st.sampled_from([0, 0, 1]))


def sequence(items, min_size=0, max_size=5):
    return st.one_of(st.builds(lambda xs: {"tuple": xs}, st.lists(items, min_size=min_size, max_size=max_size)),
                     st.builds(lambda xs: {"list": xs}, st.lists(items, min_size=min_size, max_size=max_size)))


def pair(items):
    return sequence(items, 0, 3)


def expected_shape(shape):
    """What a shape description reads as when every item is an int: the values __index__ returns, in order (dlmap
    reads a snapshot, so the list changing under it changes nothing). None when an error is expected."""
    items = shape["tuple"] if isinstance(shape, dict) and "tuple" in shape else \
        shape["list"] if isinstance(shape, dict) and "list" in shape else [shape]
    values = []
    for item in items:
        if isinstance(item, bool) or not isinstance(item, (int, dict)):
            return None
        if isinstance(item, dict):
            if "index" not in item or item["index"]["action"] in ("raise", "non_int"):
                return None
            item = item["index"]["value"]
        values.append(item)
    return values


# ---- tensors and producers ---------------------------------------------------------------------------------------

DEVICES = [(1, 0), (1, 0), (2, 0), (3, 0), (13, 0), (10, 0), (200, 0), (1, 5), (2, -1)]
DTYPES = [(2, 32, 1), (2, 32, 1), (0, 4, 1), (1, 1, 3), (0, 8, 1), (2, 16, 4), (99, 8, 1), (2, 7, 1), (2, 32, 0),
          (6, 8, 1), (17, 4, 2)]


@st.composite
def tensors(draw):
    shape = draw(st.lists(extents, max_size=4))
    strides = draw(st.one_of(st.none(), st.lists(st.one_of(st.integers(-3, 6), st.sampled_from(HUGE[:5])),
                                                 min_size=len(shape), max_size=len(shape))))
    return {"device": list(draw(st.sampled_from(DEVICES))), "dtype": list(draw(st.sampled_from(DTYPES))),
            "shape": shape, "strides": strides,
            "byte_offset": draw(st.sampled_from([0, 0, 4, 2 ** 63, 2 ** 64 - 1])),
            "version": list(draw(st.sampled_from([(1, 3), (1, 3), (1, 0), (2, 0), (0, 0), (1, 99)]))),
            "flags": draw(st.sampled_from([0, 0, 1, 2, 4, 8, 2 ** 63])),
            "data": draw(st.sampled_from(["buffer", "buffer", "null"])),
            "deleter": draw(st.sampled_from(["count", "count", "count", "null"])),
            "name": draw(st.sampled_from(["right", "right", "right", "wrong", "used"]))}


reports = st.one_of(st.just("truthful"), st.just("truthful"), st.just("raise"),
                    st.builds(lambda t, i: {"tuple": [t, i]}, st.sampled_from([1, 2, 3, 11, 13, 5, 200]),
                              st.sampled_from([0, 0, 1, -1])),
                    st.sampled_from([None, "cpu", {"tuple": [1]}, {"list": [1, 0]}, {"tuple": [2 ** 40, 0]},
                                     {"tuple": [{"index": {"value": 1, "action": "raise"}}, 0]}]))


@st.composite
def producers(draw, tensor=None):
    return {"tensor": tensor or draw(tensors()),
            "answer": draw(st.sampled_from(["capsule"] * 6 + ["raise", "raise_type_error", "not_capsule", "self"])),
            "not_capsule": draw(st.sampled_from([42, None, "dltensor", {"object": True}])),
            "report": draw(reports),
            "legacy_only": draw(st.booleans()),
            "struct": draw(st.sampled_from(["as_asked", "as_asked", "legacy"]))}


from_dlpack_kwargs = st.fixed_dictionaries({}, optional={
    "device": st.one_of(st.sampled_from([None, "cpu", {"tuple": [1, 0]}, {"tuple": [2, 0]}, {"tuple": [5, 0]},
                                         {"list": [1, 0]}, "nonsense"]), pair(st.one_of(plain_ints, index(plain_ints)))),
    "copy": st.one_of(st.sampled_from([None, True, False, "no", 1]), bool_scalars),
    # 3, 100, 4095: integers below the first page, which no runtime stream lives at (stream_not_a_handle, issue 48)
    "stream": st.one_of(st.sampled_from([None, -1, 0, 1, 2, 3, 5, 100, 4095, 2 ** 70, "x"]), index(plain_ints)),
})


# ---- the properties -------------------------------------------------------------------------------------------------


class HostileTest(unittest.TestCase):
    @classmethod
    def tearDownClass(cls):
        summary = ", ".join(f"{kind} {outcome} {n}" for (kind, outcome), n in sorted(OUTCOMES.items()))
        print(f"\nhostile_property_test: {sum(OUTCOMES.values())} examples, 0 crashes ({summary})")

    @SETTINGS
    @given(shape=st.one_of(extents, index(extents), sequence(st.one_of(extents, index(extents), odd_values)),
                           odd_values),
           dtype=st.sampled_from([None, "float32", "int4", "uint1", "bool", "complex64", "float4_e2m1fn", "nope", 5]),
           device=st.sampled_from([None, "cpu", {"tuple": [1, 0]}, {"tuple": [2, 0]}, "nonsense", {"list": [1, 0]},
                                   {"tuple": [{"index": {"value": 1, "action": "raise"}}, 0]}]))
    # Issue 14's reproducer: __index__ clears the list dlmap is reading (a use after free).
    @example(shape={"list": [{"index": {"value": 1, "action": "clear"}}, 2, 3]}, dtype=None, device=None)
    # int4 × (2^62 − 1): 2^64 − 4 bits, which wrapped to a 0-byte tensor.
    @example(shape={"tuple": [2 ** 62 - 1]}, dtype="int4", device=None)
    def test_empty(self, shape, dtype, device):
        result = run_child({"kind": "empty", "shape": shape, "dtype": dtype, "device": device,
                            "expected_shape": expected_shape(shape)})
        if shape == {"tuple": [2 ** 62 - 1]} and dtype == "int4":
            self.assertEqual(result.get("dlmap_id"), "size_overflow")

    @SETTINGS
    @given(shape=st.lists(st.integers(0, 3), max_size=3),
           dtype=st.sampled_from(["float32", "int4", "bool", "complex64"]),
           readonly=st.booleans(),
           kwargs=st.fixed_dictionaries({}, optional={
               "stream": st.one_of(st.sampled_from([None, -1, 0, 1, 3, 5, 100, 4095, 2 ** 70, "1"]),
                                   index(plain_ints)),
               "max_version": st.one_of(st.sampled_from([None, "1.0", {"tuple": [1, 3]}, {"list": [1, 0]},
                                                         {"tuple": [0, 4]}]),
                                        pair(st.one_of(plain_ints, index(plain_ints), odd_values))),
               "dl_device": st.one_of(st.sampled_from([None, "cpu", {"tuple": [1, 0]}, {"tuple": [2, 0]},
                                                       {"tuple": [4, 0]}, {"list": [1, 0]}]),
                                      pair(st.one_of(plain_ints, index(plain_ints)))),
               "copy": st.one_of(st.sampled_from([None, True, False, 1, "yes"]), bool_scalars),
           }))
    # max_version as a list, its __index__ clearing it; copy as a boolean scalar (issue 14).
    @example(shape=[2], dtype="float32", readonly=False,
             kwargs={"max_version": {"list": [{"index": {"value": 1, "action": "clear"}}, 0]},
                     "copy": {"bool_scalar": {"value": True, "fails": None, "kind": "b", "ndim": 0}}})
    def test_dlpack_arguments(self, shape, dtype, readonly, kwargs):
        result = run_child({"kind": "export", "shape": shape, "dtype": dtype, "readonly": readonly,
                            "kwargs": kwargs})
        if kwargs.get("max_version", {}) == {"list": [{"index": {"value": 1, "action": "clear"}}, 0]}:
            self.assertEqual(result["outcome"], "ok", result)

    @SETTINGS
    @given(producer=producers(), kwargs=from_dlpack_kwargs, deleter_raises=st.booleans())
    # Issue 14's reproducer: a kDLCUDA tensor whose __dlpack_device__ says the host.
    @example(producer={"tensor": {"device": [2, 0], "dtype": [2, 32, 1], "shape": [4], "strides": None,
                                  "byte_offset": 0, "version": [1, 3], "flags": 0, "data": "buffer",
                                  "deleter": "count", "name": "right"},
                       "answer": "capsule", "not_capsule": 42, "report": {"tuple": [1, 0]}, "legacy_only": True,
                       "struct": "as_asked"}, kwargs={}, deleter_raises=False)
    # A random run's find: no elements, byte_offset 2^63 (the buffer protocol added it to data, a pointer overflow).
    @example(producer={"tensor": {"device": [1, 0], "dtype": [2, 32, 1], "shape": [0], "strides": None,
                                  "byte_offset": 2 ** 63, "version": [1, 3], "flags": 0, "data": "buffer",
                                  "deleter": "count", "name": "right"},
                       "answer": "capsule", "not_capsule": 42, "report": "truthful", "legacy_only": False,
                       "struct": "as_asked"}, kwargs={}, deleter_raises=False)
    def test_from_dlpack(self, producer, kwargs, deleter_raises):
        run_child(dict(producer, kind="from_dlpack", kwargs=kwargs, deleter_raises=deleter_raises))

    @SETTINGS
    @given(python=producers(), kwargs=from_dlpack_kwargs,
           capsule=st.one_of(st.none(), st.fixed_dictionaries({
               "major": st.sampled_from([1, 1, 0, 2]),
               "prev": st.sampled_from(["none", "self", "major1"]),
               "from_py": st.sampled_from(["tensor", "tensor", "null", "fail_silently", "raise", "null_tensor"]),
               "stream": st.sampled_from(["none", "null"]),
               "name": st.sampled_from(["right", "right", "wrong"]),
               "tensor": tensors()})),
           integer=st.one_of(st.none(), st.sampled_from([0, 8, -1, 2 ** 64 - 1, 2 ** 70, "table", "x"]),
                             index(plain_ints)))
    # Issue 14's reproducer: a Python class with __c_dlpack_exchange_api__ = 8.
    @example(python={"tensor": {"device": [1, 0], "dtype": [2, 32, 1], "shape": [4], "strides": None,
                                "byte_offset": 0, "version": [1, 3], "flags": 0, "data": "buffer", "deleter": "count",
                                "name": "right"},
                     "answer": "capsule", "not_capsule": 42, "report": "truthful", "legacy_only": False,
                     "struct": "as_asked"}, kwargs={}, capsule=None, integer=8)
    def test_exchange_api(self, python, kwargs, capsule, integer):
        spec = {"kind": "exchange", "python": python, "kwargs": kwargs}
        if capsule is not None:
            spec["capsule"] = capsule
        if integer is not None:
            spec["int"] = integer
        result = run_child(spec)
        if capsule is None and result["outcome"] == "ok":
            self.assertNotEqual(result.get("via"), "c_exchange_api", "a Python class's int is never trusted")


HostileTypesTest = hostile_types.test_case(run_child, SETTINGS, producers)  # classes changing under lookup (issue 23)
HeadsTest = hostile_heads.properties(SETTINGS, run_child)  # issue 23: heads, chains, sub-interpreters

if __name__ == "__main__":
    unittest.main(verbosity=2)
