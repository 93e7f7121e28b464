# dlmap conformance checker — the producer check: calls x.__dlpack__ with every argument combination the protocol
# defines (max_version, dl_device, copy, stream) and x.__dlpack_device__, reads each capsule through ctypes, consumes
# it as a consumer does (with a counting deleter in front of the producer's), and judges every result against the
# spec's rules; one row per call, every violation named. The producer is named by module:expression and lives in a
# child interpreter (calls.py) that makes every call, each under a deadline: a producer that hangs, crashes or lies
# gets a row saying so, and the checker goes on with a fresh child for the calls after it. The last row (claims.py) says
# whether the tensor's device claim is where its memory is, where a GPU runtime in the producer's process can tell.
import json
import os
import select
import subprocess
import sys
import tempfile
import time

import dlmap

from . import children, claims, deleters, exchange_api
from .report import Report, Row
from .rules import MADE_STREAM, STANDARD_PROFILE, Rules, show_version

# The rules a producer row can break, with their text: the library's table (dlmap_check_rule_at, which the C checker
# reports from too), so that each rule is written once; and P-crash, which only a checker that keeps the producer in
# another process can observe.
RULES = dict(dlmap._check_rules(), **{
    "P-crash": "a call to the producer (__dlpack__, __dlpack_device__, the attributes read for its read-only state) "
               "returns or raises within the deadline; it never crashes or hangs the process that makes it",
    claims.RULE: claims.RULE_TEXT,
    **exchange_api.RULES,
    deleters.RULE: deleters.RULE_TEXT,
    "X-not-checked": "the checker made the call it meant to (a row that fails here checked nothing: the check's "
                     "deadline passed, or it could not make the real stream the call passes)",
})

_KEYWORD_REJECTED = ("unexpected keyword", "keyword argument")
MAKE_TIMEOUT_S = 120  # making the producer in a fresh child: the interpreter, the imports, the expression
CALL_TIMEOUT_S = 60  # one call; a longer one is reported as hung
HUNG_IN_A_ROW = 3  # after this many calls in a row hung, the rest are not sent (each would wait out the deadline)
DEADLINE_PASSED = "not sent: the check's deadline passed"


class NotMade(ValueError):
    """The producer could not be made in the child interpreter; .failure says how (raised …, crashed (SIGSEGV), hung
    (over N s), or the check's deadline passed)."""

    def __init__(self, target, failure):
        super().__init__("cannot make the producer %s in a child interpreter: %s" % (target, failure))
        self.failure = failure


class Source:
    """What the checker knows about x before the calls: its type, reported device, read-only state and plain
    export."""

    def __init__(self, type_name):
        self.type_name = type_name
        self.reported = None
        self.readonly = None
        self.base = None  # the plain __dlpack__() export's Outcome


class Raised:
    """An exception a call raised, as the child described it: its class name, the names along its MRO, whether it is
    a TypeError, its message and its dlmap_id."""

    def __init__(self, fields):
        self.name, self.mro = fields["name"], fields["mro"]
        self.type_error, self.message, self.dlmap_id = fields["type_error"], fields["message"], fields["dlmap_id"]


class Outcome:
    """What one __dlpack__ call came back with."""

    def __init__(self, fields=None):
        fields = fields or {}
        self.failure = fields.get("failure")  # crashed, hung, unreadable, not sent: the row's text
        self.unchecked = fields.get("unchecked")  # why the checker did not make the call: the row checks nothing
        self.error = Raised(fields["error"]) if "error" in fields else None
        self.returned = fields.get("returned")  # type name of a non-capsule result
        self.name = fields.get("name")
        self.struct = fields.get("struct")
        self.version = tuple(fields["version"]) if "version" in fields else None
        self.flags = fields.get("flags", 0)
        self.device = tuple(fields["device"]) if "device" in fields else None
        self.dtype = tuple(fields["dtype"]) if "dtype" in fields else None
        self.ndim = fields.get("ndim")
        self.shape = fields.get("shape")
        self.strides_null = fields.get("strides_null")
        self.address = fields.get("address")  # data + byte_offset
        self.has_deleter = fields.get("has_deleter", False)
        self.deleter_calls = fields.get("deleter_calls", 0)


def _target(x):
    """module:expression for the producer (or for a callable with an importable name, module:name(), which the child
    calls to make it). A plain object cannot cross into the child: its name is the way to make it again."""
    if isinstance(x, str):
        module_name, sep, expression = x.partition(":")
        if not sep or not module_name or not expression:
            raise ValueError("%r is not module:expression (e.g. 'numpy:arange(6.0)')" % x)
        return x
    module, name = getattr(x, "__module__", None), getattr(x, "__qualname__", None)
    if callable(x) and module and name and "<" not in name:
        return "%s:%s()" % (module, name)
    raise TypeError("producer(): pass 'module:expression' (or a function with an importable name that makes the "
                    "producer), not a %s: the producer is made again in a child interpreter" % type(x).__name__)


def _child_env():
    here = os.path.dirname(os.path.abspath(__file__))
    path = [p or os.getcwd() for p in sys.path]  # '' is the current directory, which the child's may not be
    env = dict(os.environ, PYTHONPATH=os.pathsep.join(path), PYTHONDONTWRITEBYTECODE="1")
    if "ASAN_OPTIONS" in env:
        # Under a sanitized build (run with the runtime preloaded) ASan would turn a producer's segmentation fault into
        # an abort: leave SIGSEGV to the process, so a crash reads the same as in a plain build.
        env["ASAN_OPTIONS"] += ":handle_segv=0"
    return here, env


class Child:
    """A child interpreter (calls.py) holding the producer: one command at a time, each answer read from its own pipe
    under a deadline. ask() returns (answer, None) or (None, what happened: hung, crashed, exited)."""

    def __init__(self, config):
        here, env = _child_env()
        command_read, self._commands = os.pipe()
        self._answers, answer_write = os.pipe()
        self._stderr = tempfile.TemporaryFile()
        try:
            self._process = children.Child(os.path.join(here, "calls.py"), [{"fd": 0}, {"fd": 1}, json.dumps(config)],
                                           env, [children.module_of(config["target"])], stderr=self._stderr,
                                           pass_fds=(command_read, answer_write))
        finally:
            os.close(command_read)
            os.close(answer_write)
        self._buffer = b""
        self._closed = False

    def ask(self, command, timeout):
        if command is not None:
            try:
                os.write(self._commands, json.dumps(command).encode() + b"\n")
            except OSError:  # the child is gone (EPIPE)
                return None, self._ended()
        deadline = time.monotonic() + timeout
        while b"\n" not in self._buffer:
            left = deadline - time.monotonic()
            if left <= 0 or not select.select([self._answers], [], [], left)[0]:
                self.close()
                return None, "hung (over %d s)" % timeout
            chunk = os.read(self._answers, 65536)
            if not chunk:
                return None, self._ended()
            self._buffer += chunk
        line, self._buffer = self._buffer.split(b"\n", 1)
        try:
            return json.loads(line), None
        except ValueError:  # something else wrote to the checker's pipe
            self.close()
            return None, "child failed (an unreadable answer on the checker's pipe)"

    def _ended(self):
        """What ended the child: its signal, or its exit status with its last line on stderr."""
        try:
            code = self._process.wait(timeout=MAKE_TIMEOUT_S)
        except subprocess.TimeoutExpired:  # closed its pipe but lives on
            self.close()
            return "closed the checker's pipe and lived on"
        if code < 0:
            return "crashed (%s)" % children.signal_name(code)
        self._stderr.seek(0)
        lines = self._stderr.read().decode("utf-8", "replace").strip().splitlines() or ["no output"]
        return "child failed (exit %d: %s)" % (code, lines[-1][:120])

    def close(self):
        if self._closed:  # once: a file descriptor closed twice may by then be another file's
            return
        self._closed = True
        if self._process.poll() is None:
            self._process.kill()
        self._process.wait()
        os.close(self._commands)
        os.close(self._answers)
        self._stderr.close()


class Calls:
    """The producer's calls, made in a child interpreter; a fresh child (making the producer again) after one crashed
    or hung, so that each crash or hang is the row of the call that caused it."""

    def __init__(self, target, rules, timeout, deadline=None):
        self.deadline = deadline  # time.monotonic() after which no call is sent (None: none)
        self.config = {"target": target, "readable": rules.structs["versioned"][0][0],
                       "names": {s: [rules.structs[s][2], rules.structs[s][3]] for s in ("legacy", "versioned")},
                       "runtimes": claims.runtimes(rules)}
        self.timeout = timeout
        self.child = None
        self.hung_in_a_row = 0
        self.gone = None  # why no more calls are sent
        self.rebase = None  # called in each fresh child before its first export: the plain export, again

    def _limit(self, timeout):
        """(seconds to wait, whether the check's deadline cut it): timeout, or what is left before the deadline."""
        if self.deadline is None:
            return timeout, False
        left = self.deadline - time.monotonic()
        return (left, True) if left < timeout else (timeout, False)

    def start(self):
        """A fresh child with the producer made: None, or why it could not be made."""
        limit, cut = self._limit(MAKE_TIMEOUT_S)
        if limit <= 0:
            return DEADLINE_PASSED
        self.child = Child(self.config)
        made, failure = self.child.ask(None, limit)
        if failure is not None and cut and failure.startswith("hung"):
            failure = DEADLINE_PASSED
        if failure is None and not made["made"]:
            failure = "raised %s" % made["error"]
        if failure is not None:
            self.close()
            return failure
        self.type_name = made["type"]
        return None

    def ask(self, command):
        """The child's answer to one command, or {"failure": text} for a crash, hang or a call not sent."""
        if self.gone:
            return {"unchecked" if self.gone == DEADLINE_PASSED else "failure": self.gone}
        limit, cut = self._limit(self.timeout)
        if limit <= 0:
            self.close()
            self.gone = DEADLINE_PASSED
            return {"unchecked": self.gone}
        if self.child is None and not self._fresh_child(command):
            return {"unchecked" if self.gone == DEADLINE_PASSED else "failure": self.gone}
        answer, failure = self.child.ask(command, limit)
        if failure is not None and cut and failure.startswith("hung"):  # cut short by the check, not the producer
            self.close()
            self.gone = DEADLINE_PASSED
            return {"unchecked": self.gone}
        if failure is None:
            self.hung_in_a_row = 0
            return answer
        self.close()
        self.hung_in_a_row = self.hung_in_a_row + 1 if failure.startswith("hung") else 0
        if self.hung_in_a_row >= HUNG_IN_A_ROW:
            self.gone = "not sent: %d calls in a row hung" % self.hung_in_a_row
        return {"failure": failure}

    def _fresh_child(self, command):
        """Starts a child after one crashed or hung. Before an export, rebase(answer) is given the new producer's plain
        export (None when that crashed or hung too; rebase then drops itself, and another child is started). False,
        with self.gone set, when the producer could not be made again."""
        failure = self.start()
        if failure is not None:
            self.gone = failure if failure == DEADLINE_PASSED else \
                "not sent: the producer could not be made again (%s)" % failure
            return False
        if self.rebase is not None and command["op"] == "export":
            answer, failure = self.child.ask({"op": "export", "kwargs": {}, "consume": True},
                                             max(self._limit(self.timeout)[0], 0))
            self.rebase(answer)
            if failure is not None:
                self.close()
                return self._fresh_child(command)
        return True

    def close(self):
        if self.child is not None:
            self.child.close()
            self.child = None


def export(calls, kwargs, consume=True, made_stream=None):
    """x.__dlpack__(**kwargs) in the child, read and consumed (renamed, deleter called once) or dropped unconsumed
    there; its Outcome. made_stream: module:expression that makes, in the child, the stream passed as stream=."""
    command = {"op": "export", "kwargs": kwargs, "consume": consume}
    if made_stream is not None:
        command["made_stream"] = made_stream
    answer = calls.ask(command)
    if "no_stream" in answer:
        return Outcome({"unchecked": "not sent: the check could not make a stream (%s)" % answer["no_stream"]})
    if "unreadable" in answer:
        return Outcome({"failure": "the answer could not be read (%s)" % answer["unreadable"]})
    return Outcome(answer)


def _kind_matches(error, kinds):
    return any(name in kinds for name in error.mro)


def _describe(rules, out, source):
    if out.unchecked is not None:
        return out.unchecked
    if out.failure is not None:
        return out.failure
    if out.error is not None:
        return "%s%s" % (out.error.name, " (%s)" % out.error.dlmap_id if out.error.dlmap_id is not None else "")
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
        """The keyword arguments the checker sends; a MADE_STREAM is added in the child, where it exists."""
        names = ("max_version", "dl_device", "copy", "stream")
        return {n: getattr(self, n) for n in names if getattr(self, n) not in (None, MADE_STREAM)}

    def text(self):
        args = ", ".join("%s=%r" % kv for kv in self.kwargs().items())
        if self.stream == MADE_STREAM:
            args = ", ".join([args] * bool(args) + ["stream=<%s>" % MADE_STREAM])
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
    if request.stream is not None and rules.settings["export.stream"] == "none_only":
        must.append("stream_not_none")  # every stream but None, whatever the convention
    elif request.stream is not None and target in rules.devices and not rules.stream_allowed(target, request.stream) \
            and not rules.stream_no_sync(request.stream):
        if rules.settings["export.stream"] == "validate":
            must.append("stream_invalid")
    answer = rules.profile_answer(request.max_version, source.readonly)
    if source.readonly and request.copy is not True and answer == ("struct", "legacy") and \
            rules.settings["export.legacy_read_only"] == "refuse":
        must.append("read_only_needs_versioned")
    if must:
        return "error", must + may
    return ("either", may) if may else ("ok", [])


def judge(rules, request, out, source, exact_struct):
    """The violations of one call's outcome under `rules`; exact_struct also holds the profile's struct choice."""
    v = []
    if out.unchecked is not None:
        return [("X-not-checked", out.unchecked)]
    if out.failure is not None:
        return [("P-capsule" if out.failure.startswith("the answer") else "P-crash", out.failure)]
    expect, ids = expectation(rules, request, source)
    kinds = rules.kinds(ids)
    if out.error is not None:
        message = out.error.message
        if out.error.type_error and any(k in message for k in _KEYWORD_REJECTED) and \
                set(request.kwargs()) - {"stream"}:
            return [("P-signature", "TypeError for keyword arguments")]
        if expect == "ok":
            v.append(("P-raised", "raised %s" % out.error.name))
        elif not _kind_matches(out.error, kinds):
            v.append(("P-error-kind", "raised %s; the spec gives %s (%s)" % (out.error.name,
                                                                          " or ".join(kinds), ", ".join(ids))))
        return v
    if expect == "error":
        v.append(("P-no-error", "expected %s (%s)" % (" or ".join(kinds), ", ".join(ids))))
    if out.returned is not None or out.struct is None:
        v.append(("P-capsule", "returned %s" % (out.returned and "a " + out.returned or 'a capsule "%s"' % out.name)))
        return v
    mv = request.max_version
    if out.struct == "versioned":
        low = rules.structs["versioned"][0]
        outside = dlmap._judge_version(out.version)  # the spec's versioned range: the library's judgement
        if outside:
            v.append(("P-version", outside))
        elif (mv is None and rules.profile_answer(None, source.readonly) != ("struct", "versioned")) or \
                (mv is not None and tuple(mv) < low):
            v.append(("P-version", "a versioned tensor for max_version=%s" % (mv,)))
        elif mv is not None and out.version[0] > tuple(mv)[0]:
            # A newer minor is allowed: DLPack changes the struct only with the major, and the standard recommends a
            # producer answer a max_version of its own major with its own version (PyTorch: (1, 3) for (1, 0)).
            v.append(("P-version", "%s is above max_version %s" % (show_version(out.version), show_version(mv))))
        if out.device is None:  # an unreadable major: nothing else to read
            return v + _deleter(request, out)
    answer = rules.profile_answer(mv, source.readonly)
    if exact_struct and answer[0] == "struct" and answer[1] != out.struct:
        v.append(("P-struct", "%s; the profile gives %s" % (out.struct, answer[1])))
    # The tensor's values (flags, strides, dtype, device type) by the spec: the library's judgement, the one
    # dlmap_check_export applies (src/check_tensor.c), in the version this profile judges the tensor in.
    v += dlmap._judge_tensor(out.device[0], out.dtype, out.ndim, bool(out.strides_null), out.flags,
                             rules.tensor_version(out.struct, out.version))
    expected_device = tuple(request.dl_device) if request.dl_device is not None else source.reported
    if expected_device is not None and tuple(out.device) != tuple(expected_device):
        v.append(("P-device", "on %s:%d, expected %s:%d" % (rules.device_name(out.device[0]), out.device[1],
                                                             rules.device_name(expected_device[0]),
                                                             expected_device[1])))
    copied_flag = out.flags >> rules.flag_bit["IS_COPIED"] & 1
    base = source.base
    same_place = base is not None and base.address and base.device == out.device
    if request.copy is True:
        if out.struct == "versioned" and not copied_flag and rules.settings["export.flag_is_copied"]:
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
        if out.struct == "legacy" and rules.settings["export.legacy_read_only"] == "refuse":
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
    # The memory the stream values are chosen for: the reported device's, else the plain export's. Unknown memory gets
    # none: any integer might reach a runtime as a stream handle.
    base = source.base
    own_type = own[0] if own else (base.device[0] if base is not None and base.device else None)
    streams = [Request(stream=s) for s in rules.stream_probes(own_type)] if own_type is not None else []
    if rules.runtime_class(own_type):  # the handle row: a real stream, made in the producer's process
        streams.append(Request(stream=MADE_STREAM))
    drops = [Request(consume=False), Request(max_version=rules.structs["versioned"][0], consume=False)]
    return grid + extra + streams + drops


def _check_device_report(rules, calls, source):
    answer = calls.ask({"op": "device"})
    if "unchecked" in answer:
        return answer["unchecked"], [("X-not-checked", answer["unchecked"])]
    if "failure" in answer or "unreadable" in answer:
        text = answer.get("failure") or "the answer could not be read (%s)" % answer["unreadable"]
        return text, [("P-crash" if "failure" in answer else "P-device-report", text)]
    if "raised" in answer:
        return answer["raised"], [("P-device-report", "raised %s" % answer["raised"])]
    if "garbage" in answer:
        return answer["garbage"], [("P-device-report", "not a tuple of two ints")]
    source.reported = tuple(answer["device"])
    problems = []
    problem = dlmap._judge_device_type(source.reported[0])  # the library's judgement (src/check_tensor.c)
    if problem:
        problems.append(("P-device-report", problem))
    if source.reported[1] < 0:
        problems.append(("P-device-report", "device id %d" % source.reported[1]))
    return "%s:%d" % (rules.device_name(source.reported[0]), source.reported[1]), problems


READONLY_SENT = "read-only state (x.readonly, x.flags.writeable, memoryview(x).readonly)"


def _check_readonly(calls, source):
    """x's read-only state into source; (got, violations) for a row R1 only when reading it went wrong (an attribute
    raised, or the child crashed or hung), else None: an object need not have those attributes, so a raise is
    reported, not failed."""
    answer = calls.ask({"op": "readonly"})
    if "unchecked" in answer:
        return answer["unchecked"], [("X-not-checked", answer["unchecked"])]
    if "failure" in answer:
        return answer["failure"], [("P-crash", answer["failure"])]
    if "unreadable" in answer:
        return "the answer could not be read (%s)" % answer["unreadable"], []
    source.readonly = answer["readonly"]
    return ("; ".join(answer["raised"]), []) if answer["raised"] else None


def default_stream_maker(rules, device_type):
    """module:expression that makes a real stream for a producer on device_type, in its process: one of its platform's
    runtime (streams.runtime), made through the runtime that process has loaded."""
    return "dlmap.check.streams:runtime(%r)" % rules.devices[device_type]["platform"]


def producer(x, profile=None, subject=None, timeout=CALL_TIMEOUT_S, stream=None, deadline=None, deleter_rows=True):
    """Checks a producer's __dlpack__ / __dlpack_device__; returns a Report whose "standard" column judges by the
    DLPack / Array API standard (the spec and its array_api profile) and, when `profile` names one (e.g. "jax"), a
    second column by that profile of dlmap. The standard lets a producer answer max_version with an older struct; a
    profile fixes it.

    x is 'module:expression' (e.g. 'numpy:arange(6.0)'), or a function with an importable name that makes the
    producer: the producer is made, and every call made, in a child interpreter, each call under `timeout` seconds,
    so that a producer that hangs or crashes gets a row ("hung (over N s)", "crashed (SIGSEGV)"), not the checker's
    process. Raises ValueError when the producer cannot be made there (the expression raised, crashed or hung).

    A producer on memory a vendor runtime keeps (a GPU's) gets the stream values its convention documents and a real
    stream, made in its process by `stream` ('module:expression' giving the handle; default: its platform runtime's,
    streams.runtime), never an integer the checker invents. deadline: time.monotonic() after which no call is sent;
    the calls left get a row "not sent: the check's deadline passed" (rule X-not-checked). deleter_rows=False leaves
    out the L rows (deleters.py: a child interpreter per row)."""
    judges = [("standard", Rules(STANDARD_PROFILE), False)]
    if profile:
        judges.append(("%s profile" % profile, Rules(profile), True))
    standard = judges[0][1]
    target = _target(x)
    calls = Calls(target, standard, timeout, deadline)
    failure = calls.start()
    if failure is not None:
        raise NotMade(target, failure)
    try:
        return _check(judges, calls, Source(calls.type_name), subject or target, stream, deleter_rows)
    finally:
        calls.close()


def _check(judges, calls, source, subject, stream_maker, deleter_rows):
    standard = judges[0][1]
    extra = _check_readonly(calls, source)
    notes = ["Source: %s, read-only: %s." % (source.type_name, {None: "unknown", True: "yes", False: "no"}
                                             [source.readonly])]
    report = Report("producer", subject, [name for name, _, _ in judges], RULES, notes)
    if extra is not None:
        report.add(Row("R1", READONLY_SENT, extra[0], {name: extra[1] for name, _, _ in judges}))
    got, problems = _check_device_report(standard, calls, source)
    report.device = source.reported
    report.add(Row("D1", "__dlpack_device__()", got, {name: problems for name, _, _ in judges}))

    def usable(out):  # a plain export the copy and consistency rules can compare with
        return out if out.failure is None and out.error is None and out.struct is not None else None

    def rebase(answer):  # a fresh child holds a new producer: its plain export, for the copy rules' addresses
        source.base = usable(Outcome(answer)) if answer is not None and "unreadable" not in answer else None
        if source.base is None:
            calls.rebase = None

    source.base = usable(export(calls, {}))
    calls.rebase = rebase if source.base is not None else None
    for number, request in enumerate(requests(standard, source), 1):
        made = None
        if request.stream == MADE_STREAM:
            made = stream_maker or default_stream_maker(standard, source.reported[0])
        out = export(calls, request.kwargs(), consume=request.consume, made_stream=made)
        verdicts = {name: judge(rules, request, out, source, exact) for name, rules, exact in judges}
        report.add(Row("P%02d" % number, request.text(), _describe(standard, out, source), verdicts))
    report.add(claims.row(calls, [name for name, _, _ in judges], standard))
    columns = [name for name, _, _ in judges]
    for row in exchange_api.rows(calls, columns, standard):
        report.add(row)
    calls.close()  # its child holds the producer; each deleter row makes its own
    if not deleter_rows:
        return report
    gone = (calls.gone, "X-not-checked" if calls.gone == DEADLINE_PASSED else "P-crash") if calls.gone else None
    for row in deleters.rows(calls.config["target"], standard, columns, calls.timeout, calls.deadline, gone):
        report.add(row)
    return report
