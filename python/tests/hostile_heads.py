# dlmap Python binding tests — hostile_property_test's properties of issue 23: future-major tensors that are only
# their stable head, long re-import chains, sub-interpreters. properties() (in the test's process) draws the scenarios;
# run() (in the child, through hostile.run) carries one out and checks it.
"""Scenarios, each in a child interpreter of its own (hostile.py's entry point hands kinds "heads_*" to run()):

heads_future   a DLManagedTensorVersioned of a major dlmap does not read, that is only its stable head (version,
               manager_ctx, deleter, flags) ending where an inaccessible page starts, handed over by a producer's C
               table, a "dltensor_versioned" capsule, or dlmap's own table's managed_tensor_to_py_object_no_sync:
               always a clean error (never an array), the head's deleter run exactly once, nothing read past it.
heads_chain    x = dlmap.from_dlpack(x) (or through versioned / legacy capsules), up to 100,000 links over a dlmap
               array or a hand-made tensor, released by del, from a thread with a small stack, or by a deleter on a
               native thread: every link dies outermost first, the bottom tensor's deleter once, nothing left.
heads_subinterp  operations inside sub-interpreters that share the GIL (capsules dropped, imports, chains, deleters
               on native threads, a main interpreter's capsule dropped there): no deadlock, nothing left. Where the
               interpreter offers no sub-interpreters the example is skipped, with the reason.
"""
import collections
import ctypes
import threading
import unittest
import weakref

import testing

# ---- the child's side ------------------------------------------------------------------------------------------------


def _future(spec, problems):
    from testing import dlmap
    import hostile
    calls = collections.Counter()
    heads = []
    deleter = testing.HEAD_DELETER(lambda address: calls.update([address]))
    counted = spec["deleter"] == "count"

    def head():
        heads.append(testing.GuardedHead(spec["major"], spec["minor"], deleter if counted else None, spec["flags"]))
        return heads[-1].address

    @ctypes.CFUNCTYPE(None, ctypes.c_void_p)
    def destructor(capsule):  # the producer's side: an unconsumed capsule releases its head (nothing else read)
        if testing._capsule_is_valid_raw(capsule, testing.NAME_VERSIONED):
            address = testing._capsule_get_pointer_raw(capsule, testing.NAME_VERSIONED)
            if counted:
                deleter(address)

    def capsule():
        return testing._capsule_new(head(), testing.NAME_VERSIONED, ctypes.cast(destructor, ctypes.c_void_p).value)

    table = testing.table_handing_out(head)
    device = tuple(spec["device"])

    class Producer:
        def __dlpack__(self, **kwargs):
            return capsule()

        def __dlpack_device__(self):
            return device

    kwargs = {key: tuple(value) if isinstance(value, list) else value for key, value in spec["kwargs"].items()}
    if spec["path"] == "table":
        tabled = type("Tabled", (Producer,), {"__dlpack_c_exchange_api__": testing._capsule_new(
            ctypes.addressof(table), testing.NAME_EXCHANGE_API, None)})
        result, out = hostile._call(dlmap.from_dlpack, tabled(), **kwargs)
    elif spec["path"] == "capsule":
        result, out = hostile._call(dlmap.from_dlpack, Producer(), **kwargs)
    else:  # to_py: dlmap's own table takes the tensor (and its ownership)
        obj = ctypes.c_void_p()
        api = testing.exchange_api()
        tensor = ctypes.cast(ctypes.c_void_p(head()), ctypes.POINTER(testing.DLManagedTensorVersioned))
        result, out = hostile._call(api.managed_tensor_to_py_object_no_sync, tensor, ctypes.byref(obj))
    if out is not None:
        problems.append(f"a future-major tensor was accepted: {out!r}")
    hostile._clean_error(result, problems)
    for h in heads:
        if calls[h.address] != (1 if counted else 0):
            problems.append(f"the deleter of a {spec['major']}.{spec['minor']} head ran {calls[h.address]} times")
    result["heads"] = len(heads)
    return result


def _chain(spec, problems):
    from testing import dlmap
    import hostile
    if spec["bottom"] == "empty":
        x = dlmap.empty(3)
    else:
        tensor = {"device": [1, 0], "dtype": [2, 32, 1], "shape": [4], "strides": None}
        x = dlmap.from_dlpack(testing.Wrap(hostile.make_capsule(tensor, spec["bottom"] == "versioned", "bottom")))
    died = []
    track = spec["links"] <= 20_000
    refs = [weakref.ref(x, lambda _: died.append(0))] if track else []
    modes = spec["modes"]
    for i in range(1, spec["links"] + 1):
        mode = modes[i % len(modes)]
        if mode == "from_dlpack":
            x = dlmap.from_dlpack(x)
        elif mode == "versioned":
            x = dlmap.from_dlpack(testing.Wrap(x.__dlpack__(max_version=testing.CURRENT)))
        else:
            x = dlmap.from_dlpack(testing.Wrap(x.__dlpack__()))
        if track:
            refs.append(weakref.ref(x, lambda _, i=i: died.append(i)))
    release = spec["release"]
    if release == "thread":  # the whole chain released on a thread with a small stack
        threading.stack_size(512 * 1024)
        holder = [x]
        del x
        t = threading.Thread(target=holder.clear)
        t.start()
        t.join()
        threading.stack_size(0)
    elif release == "native_thread":  # the last reference is an export, released by a deleter on a native thread
        capsule = x.__dlpack__(max_version=testing.CURRENT)
        del x
        dlmap._call_deleter_on_thread(capsule)
        del capsule
    else:
        del x
    if track and died != list(range(spec["links"], -1, -1)):
        problems.append(f"the links died in another order: {died[:5]}… ({len(died)} of {spec['links'] + 1})")
    return {"outcome": "ok"}


_SUB_OPS = {
    # Each runs inside the sub-interpreter; {address} is a main-interpreter capsule's address where one is needed.
    "drop": "import {module} as dlmap\nx = dlmap.empty(3)\nc = x.__dlpack__(max_version={version})\ndel x, c\n",
    "import": "import {module} as dlmap\ny = dlmap.from_dlpack(dlmap.empty((2, 2)))\n"
              "z = dlmap.from_dlpack(y, copy=True)\ndel y, z\n",
    "chain": "import {module} as dlmap\nz = dlmap.empty(2)\n"
             "for _ in range({links}):\n    z = dlmap.from_dlpack(z)\ndel z\n",
    "thread_deleter": "import {module} as dlmap\nx = dlmap.empty(2)\n"
                      "dlmap._call_deleter_on_thread(x.__dlpack__(max_version={version}))\ndel x\n",
    "main_capsule": "import ctypes\nm = ctypes.cast({address}, ctypes.py_object).value\n"
                    "ctypes.pythonapi.Py_DecRef(ctypes.py_object(m))\ndel m\n",
}


def _subinterp(spec, problems):
    from testing import dlmap
    run, how = testing.subinterpreter_runner()
    if run is None:
        return {"outcome": "skipped", "reason": how}
    for ops in spec["interpreters"]:
        code = []
        for op in ops:
            address = 0
            if op["op"] == "main_capsule":
                held = dlmap.empty(3).__dlpack__(max_version=tuple(op["version"]) if op["version"] else None)
                ctypes.pythonapi.Py_IncRef(ctypes.py_object(held))  # the reference the sub-interpreter drops
                address = id(held)
                del held
            version = tuple(op["version"]) if op["version"] else None
            code.append(_SUB_OPS[op["op"]].format(version=version, links=op["links"], address=address,
                                                  module=testing.MODULE))
        try:
            run("".join(code))
        except RuntimeError as e:
            problems.append(f"in a sub-interpreter: {e}")
    return {"outcome": "ok", "via": how}


def run(spec):
    """One scenario in this (child) interpreter: the result hostile.main prints, problems included."""
    from testing import dlmap
    import hostile
    baseline = dlmap._stats()
    problems = []
    kind = spec["kind"]
    result = {"heads_future": _future, "heads_chain": _chain, "heads_subinterp": _subinterp}[kind](spec, problems)
    return hostile.finish(baseline, problems, result)


# ---- the test's side -------------------------------------------------------------------------------------------------


def _profile_setting(*path):
    """A key of the module under test's profile (spec/profiles/ as written, the nearest along `extends:`, which merges
    mappings key by key), e.g. _profile_setting("import", "request")."""
    profile = testing.dlmap.profile()
    while profile:
        body = testing.profile_spec(profile)
        found = body
        for key in path:
            found = found.get(key) if isinstance(found, dict) else None
        if found is not None:
            return found
        profile = body.get("extends")
    raise AssertionError("profile %s sets no %s" % (testing.dlmap.profile(), ".".join(path)))


def capsules_imported():
    """The capsules the module under test's from_dlpack takes, by import.request: versioned_first takes both; legacy
    (JAX's) refuses a versioned capsule by design, its name check."""
    return ["versioned", "legacy"] if _profile_setting("import", "request") == "versioned_first" else ["legacy"]


def publishes_exchange_api():
    """Whether dlmap.Array publishes the C exchange table: where export.max_version's range holding the current
    version gives the versioned struct (the table speaks only versioned tensors; python/module.c)."""
    for entry in _profile_setting("export", "max_version", "ranges"):
        if "until" not in entry or tuple(int(n) for n in entry["until"].split(".")) > testing.CURRENT:
            return entry.get("struct") == "versioned"
    return False


def properties(settings, run_child):
    """The TestCase of these properties, drawn with hypothesis under `settings`, each example run by run_child."""
    from hypothesis import example, given
    from hypothesis import strategies as st

    major = testing.CURRENT[0]
    unknown_majors = st.one_of(st.integers(major + 1, major + 3), st.sampled_from([0, 2 ** 31, 2 ** 32 - 1]))
    kwargs = st.fixed_dictionaries({}, optional={
        "device": st.sampled_from([None, "cpu", [1, 0], [2, 0]]),
        "copy": st.sampled_from([None, True, False]),
        "stream": st.sampled_from([None, -1, 0, 1, 5]),
    })
    versions = st.sampled_from([None, [1, 0], list(testing.CURRENT)])
    capsules = capsules_imported()  # the chains hand dlmap only capsules its profile takes
    paths = ["table", "table", "capsule"] + (["to_py"] if publishes_exchange_api() else [])  # to_py: dlmap's table
    sub_ops = st.fixed_dictionaries({"op": st.sampled_from(sorted(_SUB_OPS)), "version": versions,
                                     "links": st.sampled_from([1, 10, 1_000])})

    class HeadsTest(unittest.TestCase):
        @settings
        @given(path=st.sampled_from(paths), major=unknown_majors,
               minor=st.sampled_from([0, 1, 2 ** 32 - 1]), flags=st.sampled_from([0, 1, 2, 4, 2 ** 63]),
               deleter=st.sampled_from(["count", "count", "null"]), device=st.sampled_from([[1, 0], [2, 0], [13, 0]]),
               kwargs=kwargs)
        # Issue 23's reproducer: from_dlpack read a table's tensor's device before its version.
        @example(path="table", major=major + 1, minor=0, flags=0, deleter="count", device=[1, 0], kwargs={})
        def test_future_major_heads(self, path, major, minor, flags, deleter, device, kwargs):
            run_child({"kind": "heads_future", "path": path, "major": major, "minor": minor, "flags": flags,
                       "deleter": deleter, "device": device, "kwargs": kwargs})

        @settings
        # Drawn chains stay short (every suite run pays for each example); the stack depth that overflowed is the
        # explicit example's, and memory_test's ReleaseChainTest's (100,000 links; 20,000 on a 512 KiB stack).
        @given(links=st.sampled_from([0, 1, 2, 50, 2_000]),
               bottom=st.sampled_from(["empty"] + capsules),
               modes=st.lists(st.sampled_from(["from_dlpack", "from_dlpack"] + capsules), min_size=1, max_size=3),
               release=st.sampled_from(["del", "thread", "native_thread"]))
        # Issue 23's reproducer: 100,000 re-imports of dlmap.empty(1), then del.
        @example(links=100_000, bottom="empty", modes=["from_dlpack"], release="del")
        def test_reimport_chains(self, links, bottom, modes, release):
            run_child({"kind": "heads_chain", "links": links, "bottom": bottom, "modes": modes, "release": release})

        @settings
        @given(interpreters=st.lists(st.lists(sub_ops, min_size=1, max_size=4), min_size=1, max_size=2))
        # Issue 23's reproducer: a capsule dropped inside a sub-interpreter (it deadlocked).
        @example(interpreters=[[{"op": "drop", "version": [1, 0], "links": 1}]])
        def test_subinterpreters(self, interpreters):
            result = run_child({"kind": "heads_subinterp", "interpreters": interpreters})
            if result["outcome"] == "skipped":
                print(f"\nSKIP test_subinterpreters: {result['reason']}", flush=True)
                self.skipTest(result["reason"])

    return HeadsTest
