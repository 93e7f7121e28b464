# dlmap conformance checker — the consumer check: feeds a from_dlpack-like function crafted producers (unknown major
# version, NULL strides, huge or negative extents, unknown dtype codes, flags and device types, a lying
# __dlpack_device__, a consumed capsule, tensors that lie about device memory where a device exists, …), each in a
# child interpreter (crafted.py) so that a crash is a result, and reports per case: clean error, accepted, crashed or
# skipped (with the reason), and whether the producer's deleter ran exactly once.
import json
import os
import subprocess
import sys
import tempfile
import time

from . import children
from .report import Report, Row
from .rules import STANDARD_PROFILE, Rules, show_version

RULES = {
    "C-crash": "a consumer never crashes or hangs on a crafted producer",
    "C-refuse": "a tensor no valid DLPack producer makes is refused with an exception",
    "C-accept": "a valid tensor is accepted",
    "C-deleter": "every unconsumed capsule's deleter runs exactly once (by the consumer that took it, or by the "
                 "capsule when it was left unconsumed); a consumed capsule's never",
    "C-table": "a consumer uses a producer type's C exchange API table only at a major it reads (a prev_api walk "
               "that cycles ends), calls no NULL function, and takes a call that returned -1 without an exception, "
               "or a tensor whose major is not the table's, as a failure, never as a tensor",
    "X-not-checked": "the checker ran the case (a row that fails here checked nothing: the check's deadline passed)",
}
NOT_RUN = "not run: the check's deadline passed"

TIMEOUT_S = 120  # a child that takes longer is reported as hung


def cases(rules):
    """The crafted producers, with the values taken from the spec: (id, what it is, expected, fields)."""
    legacy, versioned = rules.structs["legacy"], rules.structs["versioned"]
    float32 = next((c["value"], w["bits"]) for c in rules.dtypes.values() for w in c["widths"]
                   if w.get("name") == "float32")
    cpu = next(v for v, d in rules.devices.items() if d["memory"] == "host" and d["platform"] == "cpu")
    unknown_code = next(c for c in range(255, -1, -1) if c not in rules.dtypes)
    unknown_device = next(t for t in range(1000, 0, -1) if t not in rules.devices)
    unknown_bit = next(b for b in range(63, -1, -1) if b not in rules.flags)
    bad_bits = next(b for b in range(1, 255) if b not in [w["bits"] for w in rules.dtypes[float32[0]]["widths"]])
    base = {"struct": "auto", "versioned_since": list(versioned[0]), "version": list(rules.current),
            "names": {"legacy": [legacy[2], legacy[3]], "versioned": [versioned[2], versioned[3]]},
            "device": [cpu, 0], "ndim": 2, "shape": [2, 3], "strides": [3, 1], "dtype": [float32[0], float32[1], 1],
            "nbytes": 24}
    other = rules.other_device(cpu)

    def case(case_id, text, expected, **fields):
        return case_id, text, expected, dict(base, **fields)

    return [
        case("C01", "valid float32 (2, 3), the struct the consumer asks for", "accept"),
        case("C02", "valid, legacy with NULL strides (compact row-major)", "accept", struct="legacy", strides=None),
        case("C03", "versioned, unknown major version %d" % versioned[1][0], "refuse", struct="versioned",
             version=[versioned[1][0], 0]),
        case("C04", "versioned %s with NULL strides, which it requires" % show_version(rules.current), "either",
             struct="versioned", strides=None),
        case("C05", "extents (2^62, 4): the element count overflows 64 bits", "refuse", shape=[2 ** 62, 4],
             strides=[4, 1]),
        case("C06", "negative extent (-1, 3)", "refuse", shape=[-1, 3]),
        case("C07", "negative ndim", "refuse", ndim=-1, shape=[], strides=[]),
        case("C08", "unknown dtype code %d" % unknown_code, "refuse", dtype=[unknown_code, 32, 1]),
        case("C09", "float with %d bits" % bad_bits, "refuse", dtype=[float32[0], bad_bits, 1]),
        case("C10", "float32 with 0 lanes", "refuse", dtype=[float32[0], float32[1], 0]),
        case("C11", "versioned, unknown flag bit %d" % unknown_bit, "either", struct="versioned",
             flags=1 << unknown_bit),
        case("C12", "unknown device type %d" % unknown_device, "refuse", device=[unknown_device, 0],
             reported=[unknown_device, 0]),
        case("C13", "__dlpack_device__ says %s, the tensor is on %s" % (rules.device_name(other),
                                                                        rules.device_name(cpu)),
             "either", reported=[other, 0]),
        case("C14", "capsule already consumed (named %s)" % legacy[3], "refuse", struct="legacy", consumed=True),
        case("C15", "NULL data for a non-empty tensor", "refuse", data="null"),
        case("C16", "negative strides: (6,) stride -1, data at the last element", "either", ndim=1, shape=[6],
             strides=[-1], data_offset=20),
        case("C17", "__dlpack__ returns an int", "refuse", returns="int"),
    ] + liars(rules, cpu, case) + tables(rules, case)


def tables(rules, case):
    """Producers whose type publishes a C exchange API table that lies (crafted.with_table); each also answers
    __dlpack__ correctly, which a consumer may fall back to."""
    newer = rules.current[0] + 1
    return [
        case("C21", "its type's C exchange API table is of major %d only" % newer, "either", table="wrong_major"),
        case("C22", "its type's table has every function NULL", "either", table="null_functions"),
        case("C23", "its type's table is of major %d, and its prev_api is itself" % newer, "either", table="cycle"),
        case("C24", "its type's table returns -1 without setting an exception", "either", table="fails_silently"),
        case("C25", "its type's table hands out a tensor of major %d" % newer, "either", table="version_disagrees"),
    ]


def liars(rules, host_type, case):
    """The crafted producers that lie about device memory (issue 48), for the first device-memory type with a backend
    (rules.other_device) and its platform's runtime as the spec describes it: a host type over device memory, that
    type over plain host memory, device memory claimed on the next device id (another device, or past the last). Their
    memory is real (the runtime's malloc, crafted.py) or absent: run only where that runtime starts with a device,
    each case is skipped with the reason elsewhere."""
    device_type = rules.other_device(host_type)
    if device_type is None:
        return []
    platform = rules.devices[device_type]["platform"]
    runtime = dict(rules.platforms.get(platform, {}).get("runtime") or {}, platform=platform)
    host, device = rules.device_name(host_type), rules.device_name(device_type)
    return [
        case("C18", "says %s (__dlpack_device__ too) over %s device memory" % (host, platform), "refuse",
             device=[host_type, 0], reported=[host_type, 0], memory="device", runtime=runtime),
        case("C19", "says %s (__dlpack_device__ too) over plain host memory" % device, "refuse",
             device=[device_type, 0], reported=[device_type, 0], memory="host", runtime=runtime),
        case("C20", "says %s, device id 1 (__dlpack_device__ too), over device memory of device 0" % device, "refuse",
             device=[device_type, 1], reported=[device_type, 1], memory="device", runtime=runtime),
    ]


def _target(fn):
    """module:expression for a callable the child can import again (or the string itself)."""
    if isinstance(fn, str):
        return fn
    module, name = getattr(fn, "__module__", None), getattr(fn, "__qualname__", None)
    if not module or not name:
        raise ValueError("consumer(): pass 'module:expression' for %r, which has no importable name" % (fn,))
    return "%s:%s" % (module, name)


def run_case(target, fields, timeout=TIMEOUT_S):
    """Runs one case in a child interpreter: (outcome text, parsed JSON or None)."""
    here = os.path.dirname(os.path.abspath(__file__))
    env = dict(os.environ, PYTHONPATH=os.pathsep.join([here] + [p for p in sys.path if p]),
               PYTHONDONTWRITEBYTECODE="1")
    if "ASAN_OPTIONS" in env:
        # Under a sanitized build (run with the runtime preloaded) ASan would turn a consumer's segmentation fault
        # into an abort: leave SIGSEGV to the process, so a crash reads the same as in a plain build.
        env["ASAN_OPTIONS"] += ":handle_segv=0"
    with tempfile.TemporaryDirectory(prefix="dlmap-check-") as directory:
        verdict_path = os.path.join(directory, "verdict.json")  # the verdict's own channel: stdout is the consumer's
        try:
            child = children.run(os.path.join(here, "crafted.py"), [json.dumps(fields), target, verdict_path], env,
                                 timeout, [children.module_of(target)])
        except subprocess.TimeoutExpired:
            return "hung (over %d s)" % timeout, None
        if child.returncode < 0:
            return "crashed (%s)" % children.signal_name(child.returncode), None
        try:
            with open(verdict_path, encoding="utf-8") as verdict:
                result = json.loads(verdict.read())
        except (OSError, ValueError):
            result = None
    if child.returncode != 0 or not isinstance(result, dict):
        last = (child.stderr.strip().splitlines() or ["no output"])[-1]
        return "child failed (exit %d: %s)" % (child.returncode, last[:120]), None
    if result["outcome"] == "skipped":
        return "skipped: %s" % result["reason"], result
    text = "accepted" if result["outcome"] == "accepted" else "error (%s)" % result["kind"]
    return text + ", deleter %d/%d" % (result["deleter_calls"], result["produced"]), result


def consumer(fn, profile=None, deadline=None):
    """Checks a consumer function (a callable with an importable name, or 'module:expression'); returns a Report.
    The cases come from the spec's rules; `profile` only names the spec profile the values are read with. deadline:
    time.monotonic() after which no case is started (each gets a row "not run", rule X-not-checked), and a case still
    running then is stopped with the same row."""
    rules = Rules(profile or STANDARD_PROFILE)
    target = _target(fn)
    report = Report("consumer", target, ["standard"], RULES,
                    ["Each case runs in a child interpreter; deleter n/m: the deleter ran n times for m unconsumed "
                     "capsules produced."])
    for case_id, text, expected, fields in cases(rules):
        left = TIMEOUT_S if deadline is None else deadline - time.monotonic()
        if left <= 0:
            report.add(Row(case_id, "%s (expected: %s)" % (text, expected), NOT_RUN,
                           {"standard": [("X-not-checked", NOT_RUN)]}))
            continue
        got, result = run_case(target, fields, min(left, TIMEOUT_S))
        if result is None and left < TIMEOUT_S and got.startswith("hung"):  # cut short by the check's deadline
            got = NOT_RUN
        if result is not None and result["outcome"] == "skipped":
            report.add(Row(case_id, "%s (expected: %s)" % (text, expected), got, {"standard": []}, skipped=True))
            continue
        v = []
        if got == NOT_RUN:
            v.append(("X-not-checked", got))
        elif result is None:
            v.append(("C-crash", got))
        else:
            if expected == "refuse" and result["outcome"] == "accepted":
                v.append(("C-refuse", "accepted"))
            if expected == "accept" and result["outcome"] != "accepted":
                v.append(("C-accept", "raised %s" % result["kind"]))
            lie = fields.get("table")
            if lie in ("wrong_major", "cycle") and result.get("table_calls"):
                v.append(("C-table", "called a function of a table of a major it cannot read"))
            if lie in ("fails_silently", "version_disagrees") and result["outcome"] == "accepted" and \
                    not result["asked"]:
                v.append(("C-table", "accepted what the failed table call left, without asking __dlpack__"))
            if result["deleter_calls"] != result["produced"]:
                v.append(("C-deleter", "ran %d times for %d capsules" % (result["deleter_calls"],
                                                                          result["produced"])))
        report.add(Row(case_id, "%s (expected: %s)" % (text, expected), got, {"standard": v}))
    return report
