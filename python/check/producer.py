# dlmap conformance checker — the producer check: calls x.__dlpack__ with every argument combination the protocol
# defines (max_version, dl_device, copy, stream) and x.__dlpack_device__, reads each capsule through ctypes, consumes
# it as a consumer does (with a counting deleter in front of the producer's), and judges every result against the
# spec's rules; one row per call, every violation named.
import ctypes
import gc

import dlmap

from . import dlpack
from .report import Report, Row
from .rules import STANDARD_PROFILE, Rules, show_version

# The rules a producer row can break, with their text: the library's table (dlmap_check_rule_at, which the C checker
# reports from too), so that each rule is written once.
RULES = dlmap._check_rules()

_KEYWORD_REJECTED = ("unexpected keyword", "keyword argument")
_KEEP = []  # counting deleters stay alive for the process: a producer may call them late


class Source:
    """What the checker knows about x before the calls: its reported device, read-only state and plain export."""

    def __init__(self, x):
        self.x = x
        self.reported = None
        self.readonly = _readonly(x)
        self.base = None  # the plain __dlpack__() export's Outcome


def _readonly(x):
    """Whether x is read-only, by the attributes array libraries have (None when x says nothing)."""
    value = getattr(x, "readonly", None)
    if isinstance(value, bool):
        return value
    flags = getattr(x, "flags", None)
    writeable = getattr(flags, "writeable", None)
    if isinstance(writeable, bool):
        return not writeable
    try:
        return memoryview(x).readonly
    except Exception:  # no buffer protocol (device arrays, torch tensors)
        return None


class Outcome:
    """What one __dlpack__ call came back with."""

    def __init__(self):
        self.error = None  # the exception
        self.returned = None  # type name of a non-capsule result
        self.name = None
        self.struct = None
        self.version = None
        self.flags = 0
        self.device = None
        self.dtype = None
        self.ndim = None
        self.shape = None
        self.strides_null = None
        self.address = None  # data + byte_offset
        self.has_deleter = False
        self.deleter_calls = 0


def export(rules, x, kwargs, consume=True):
    """Calls x.__dlpack__(**kwargs) and reads the result; then consumes it (renamed, deleter called once) or drops it
    unconsumed, counting the deleter's runs until the capsule is gone."""
    out = Outcome()
    try:
        capsule = x.__dlpack__(**kwargs)
    except Exception as error:  # every exception is a result to judge
        error.__traceback__ = None
        out.error = error
        return out
    out.name = dlpack.capsule_name(capsule)
    if out.name is None:
        out.returned = type(capsule).__name__
        return out
    out.struct = rules.struct_of_capsule(out.name)
    if out.struct is None:
        return out
    pointer = dlpack.capsule_pointer(capsule, out.name)
    managed = (dlpack.DLManagedTensorVersioned if out.struct == "versioned" else dlpack.DLManagedTensor) \
        .from_address(pointer)
    tensor = managed.dl_tensor
    if out.struct == "versioned":
        out.version = (managed.version.major, managed.version.minor)
        out.flags = managed.flags
    readable = out.struct == "legacy" or rules.structs["versioned"][0][0] == out.version[0]
    if readable:  # a major version the checker cannot read: only the deleter may be touched
        out.device = (tensor.device.device_type, tensor.device.device_id)
        out.dtype = (tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes)
        out.ndim = tensor.ndim
        if 0 <= tensor.ndim <= 64:
            out.shape = dlpack.read_ints(tensor.shape, tensor.ndim) if tensor.ndim else []
        out.strides_null = not tensor.strides
        out.address = (tensor.data or 0) + tensor.byte_offset
    counter = [0]
    original = managed.deleter
    if original:
        out.has_deleter = True
        forward = dlpack.DELETER(original)

        def counting(address):
            counter[0] += 1
            if counter[0] == 1:  # a second run is counted, never forwarded: that would be a double free
                forward(address)

        wrapper = dlpack.DELETER(counting)
        _KEEP.append((forward, wrapper))
        managed.deleter = ctypes.cast(wrapper, ctypes.c_void_p).value
    if consume:
        dlpack.rename(capsule, rules.structs[out.struct][3])
        if original:
            wrapper(pointer)
    del capsule, managed, tensor
    gc.collect()
    out.deleter_calls = counter[0]
    return out


def _kind_matches(error, kinds):
    return any(cls.__name__ in kinds for cls in type(error).__mro__)


def _describe(rules, out, source):
    if out.error is not None:
        dlmap_id = getattr(out.error, "dlmap_id", None)
        return "%s%s" % (type(out.error).__name__, " (%s)" % dlmap_id if isinstance(dlmap_id, str) else "")
    if out.returned is not None:
        return "a %s" % out.returned
    parts = ['"%s"' % out.name]
    if out.version is not None:
        parts.append(show_version(out.version))
    if out.flags:
        names = [rules.flags[b][0] if b in rules.flags else "bit%d" % b for b in range(64) if out.flags >> b & 1]
        parts.append("|".join(names))
    if out.device is not None:
        parts.append("%s:%d" % (rules.device_name(out.device[0]), out.device[1]))
    base = source.base
    if base is not None and base.address is not None and out.address is not None and out.error is None:
        parts.append("same data" if out.address == base.address else "new data")
    return " ".join(parts)


class Request:
    def __init__(self, max_version=None, dl_device=None, copy=None, stream=None, consume=True):
        self.max_version, self.dl_device, self.copy, self.stream = max_version, dl_device, copy, stream
        self.consume = consume

    def kwargs(self):
        names = ("max_version", "dl_device", "copy", "stream")
        return {n: getattr(self, n) for n in names if getattr(self, n) is not None}

    def text(self):
        args = ", ".join("%s=%r" % kv for kv in self.kwargs().items())
        return "__dlpack__(%s)%s" % (args, "" if self.consume else ", dropped unconsumed")


def expectation(rules, request, source):
    """('ok', []) the call must succeed; ('error', ids) it must raise one of the errors' kinds; ('either', ids) it
    may succeed or raise one of them."""
    must, may = [], []
    if request.max_version is not None:
        answer = rules.profile_answer(request.max_version)
        if answer[0] == "error":
            must.append(answer[1])
    own = source.reported[0] if source.reported else None
    target = request.dl_device[0] if request.dl_device is not None else own
    if request.dl_device is not None and request.dl_device[0] != own:
        accept = rules.profile["export"]["dl_device"]["accept"]
        if accept != "served" and rules.devices.get(target, {}).get("name") not in accept:
            must.append("export_unsupported_device_type")
        else:
            (must if request.copy is False else may).append("export_copy_to_device_forbidden")
            may += ["platform_unavailable", "export_unsupported_device_type"]
    if request.stream is not None and target in rules.devices and not rules.stream_allowed(target, request.stream):
        if rules.profile["export"]["stream"] == "validate":
            must.append("stream_invalid")
    answer = rules.profile_answer(request.max_version)
    if source.readonly and request.copy is not True and answer == ("struct", "legacy") and \
            rules.profile["export"]["legacy_read_only"] == "refuse":
        must.append("read_only_needs_versioned")
    if must:
        return "error", must + may
    return ("either", may) if may else ("ok", [])


def judge(rules, request, out, source, exact_struct):
    """The violations of one call's outcome under `rules`; exact_struct also holds the profile's struct choice."""
    v = []
    expect, ids = expectation(rules, request, source)
    kinds = rules.kinds(ids)
    if out.error is not None:
        message = str(out.error)
        if isinstance(out.error, TypeError) and any(k in message for k in _KEYWORD_REJECTED) and \
                set(request.kwargs()) - {"stream"}:
            return [("P-signature", "TypeError for keyword arguments")]
        if expect == "ok":
            v.append(("P-raised", "raised %s" % type(out.error).__name__))
        elif not _kind_matches(out.error, kinds):
            v.append(("P-error-kind", "raised %s; the spec gives %s (%s)" % (type(out.error).__name__,
                                                                          " or ".join(kinds), ", ".join(ids))))
        return v
    if expect == "error":
        v.append(("P-no-error", "expected %s (%s)" % (" or ".join(kinds), ", ".join(ids))))
    if out.returned is not None or out.struct is None:
        v.append(("P-capsule", "returned %s" % (out.returned and "a " + out.returned or 'a capsule "%s"' % out.name)))
        return v
    mv = request.max_version
    if out.struct == "versioned":
        low, until = rules.structs["versioned"][:2]
        if not low <= out.version < until:
            v.append(("P-version", "%s is outside [%s, %s)" % (show_version(out.version), show_version(low),
                                                               show_version(until))))
        elif mv is None or tuple(mv) < low:
            v.append(("P-version", "a versioned tensor for max_version=%s" % (mv,)))
        elif out.version > tuple(mv):
            v.append(("P-version", "%s is above max_version %s" % (show_version(out.version), show_version(mv))))
        if out.device is None:  # an unreadable major: nothing else to read
            return v + _deleter(request, out)
    answer = rules.profile_answer(mv)
    if exact_struct and answer[0] == "struct" and answer[1] != out.struct:
        v.append(("P-struct", "%s; the profile gives %s" % (out.struct, answer[1])))
    at = rules.tensor_version(out.struct, out.version)
    for problem in rules.flag_problems(out.flags, out.version) if out.struct == "versioned" else []:
        v.append(("P-flags", problem))
    since = rules.non_null_strides_since
    if out.struct == "versioned" and since and out.version >= since and out.ndim and out.strides_null:
        v.append(("P-strides", "NULL strides with ndim %d in %s" % (out.ndim, show_version(out.version))))
    problem = rules.dtype_problem(*out.dtype, at)
    if problem:
        v.append(("P-dtype", problem))
    problem = rules.device_problem(out.device[0], at)
    if problem:
        v.append(("P-device", problem))
    expected_device = tuple(request.dl_device) if request.dl_device is not None else source.reported
    if expected_device is not None and tuple(out.device) != tuple(expected_device):
        v.append(("P-device", "on %s:%d, expected %s:%d" % (rules.device_name(out.device[0]), out.device[1],
                                                             rules.device_name(expected_device[0]),
                                                             expected_device[1])))
    copied_flag = out.flags >> rules.flag_bit["IS_COPIED"] & 1
    base = source.base
    same_place = base is not None and base.address and base.device == out.device
    if request.copy is True:
        if out.struct == "versioned" and not copied_flag:
            v.append(("P-copied", "IS_COPIED not set"))
        if same_place and out.address == base.address:
            v.append(("P-copied", "the data is the source's"))
    if request.copy is False:
        if copied_flag:
            v.append(("P-not-copied", "IS_COPIED set"))
        if same_place and out.address != base.address:
            v.append(("P-not-copied", "the data is not the source's"))
    shared = request.copy is not True and not copied_flag and not (same_place and out.address != base.address)
    if source.readonly and shared:  # a copy belongs to the consumer alone and may be writable
        if out.struct == "versioned" and not out.flags >> rules.flag_bit["READ_ONLY"] & 1:
            v.append(("P-read-only", "READ_ONLY not set"))
        if out.struct == "legacy" and rules.profile["export"]["legacy_read_only"] == "refuse":
            v.append(("P-read-only", "a legacy tensor, which cannot say read-only"))
    if base is not None and base.shape is not None and (out.shape, out.dtype) != (base.shape, base.dtype):
        v.append(("P-consistent", "shape %s dtype %s, plain export %s %s" % (out.shape, out.dtype, base.shape,
                                                                             base.dtype)))
    return v + _deleter(request, out)


def _deleter(request, out):
    if out.has_deleter and out.deleter_calls != 1:
        how = "after the consumer's call and the capsule's release" if request.consume else \
            "after the unconsumed capsule was released"
        return [("P-deleter", "ran %d times %s" % (out.deleter_calls, how))]
    return []


def requests(rules, source):
    """Every combination the protocol defines, then the version the profile refuses, streams, and dropped capsules."""
    own = source.reported
    other_type = rules.other_device(own[0]) if own else None
    devices = [None] + ([tuple(own)] if own else []) + ([(other_type, 0)] if other_type else [])
    grid = [Request(mv, dev, copy)
            for mv in [None, (0, 8), (1, 0), rules.current, (rules.current[0], 99), (rules.current[0] + 1, 0)]
            for dev in devices for copy in (None, True, False)]
    too_old = rules.too_old()
    extra = [Request(max_version=too_old[0])] if too_old else []
    streams = [Request(stream=s) for s in rules.stream_probes()]
    drops = [Request(consume=False), Request(max_version=rules.structs["versioned"][0], consume=False)]
    return grid + extra + streams + drops


def _check_device_report(rules, source):
    try:
        reported = source.x.__dlpack_device__()
    except Exception as error:
        return "%s" % type(error).__name__, [("P-device-report", "raised %s" % type(error).__name__)]
    ok = isinstance(reported, tuple) and len(reported) == 2 and all(isinstance(i, int) for i in reported)
    if not ok:
        return repr(reported), [("P-device-report", "not a tuple of two ints")]
    source.reported = (int(reported[0]), int(reported[1]))
    problems = []
    if rules.device_problem(source.reported[0], None):
        problems.append(("P-device-report", rules.device_problem(source.reported[0], None)))
    if source.reported[1] < 0:
        problems.append(("P-device-report", "device id %d" % source.reported[1]))
    return "%s:%d" % (rules.device_name(source.reported[0]), source.reported[1]), problems


def producer(x, profile=None, subject=None):
    """Checks x.__dlpack__ / __dlpack_device__; returns a Report whose "standard" column judges by the DLPack / Array
    API standard (the spec and its array_api profile) and, when `profile` names one (e.g. "jax"), a second column by
    that profile of dlmap. The standard lets a producer answer max_version with an older struct; a profile fixes it."""
    judges = [("standard", Rules(STANDARD_PROFILE), False)]
    if profile:
        judges.append(("%s profile" % profile, Rules(profile), True))
    standard = judges[0][1]
    source = Source(x)
    notes = ["Source: %s, read-only: %s." % (type(x).__name__, {None: "unknown", True: "yes", False: "no"}
                                             [source.readonly])]
    report = Report("producer", subject or type(x).__name__, [name for name, _, _ in judges], RULES, notes)
    got, problems = _check_device_report(standard, source)
    report.add(Row("D1", "__dlpack_device__()", got, {name: problems for name, _, _ in judges}))
    source.base = export(standard, x, {})
    if source.base.error is not None or source.base.struct is None:
        source.base = None
    for number, request in enumerate(requests(standard, source), 1):
        out = export(standard, x, request.kwargs(), consume=request.consume)
        verdicts = {name: judge(rules, request, out, source, exact) for name, rules, exact in judges}
        report.add(Row("P%02d" % number, request.text(), _describe(standard, out, source), verdicts))
    return report
