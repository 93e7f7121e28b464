# dlmap conformance checker — the producer's C exchange API rows (DLPack 1.2/1.3, dlpack#175): the table its type
# publishes, found and called in the producer's child interpreter (exchange_calls.py), each function judged against
# what the Python protocol's __dlpack__ hands out for the same value. A type that publishes no table gets one skipped
# row saying so; a part that crashes or hangs is that part's row, and the parts after it run in a fresh child.
from .dlpack import EXCHANGE_API_ATTRIBUTE, EXCHANGE_API_CAPSULE
from .report import Row
from .rules import show_version

RULES = {
    "E-table": "a type that publishes the C exchange API puts it on the type as a PyCapsule named "
               "\"dlpack_exchange_api\" (__dlpack_c_exchange_api__, DLPack 1.3) or as an int "
               "(__c_dlpack_exchange_api__, 1.2); its chain holds a table of the major the consumer reads, in which only "
               "dltensor_from_py_object_no_sync may be NULL",
    "E-chain": "the prev_api chain goes to ever older majors and ends in NULL: no cycle, no unbounded walk",
    "E-export": "managed_tensor_from_py_object_no_sync returns 0 and a DLManagedTensorVersioned of the table's major "
                "with the tensor, flags and data __dlpack__(max_version=current) hands out for the same value, and a "
                "deleter the consumer runs once",
    "E-to-object": "managed_tensor_to_py_object_no_sync takes the tensor: it returns an object, and the tensor's "
                   "deleter runs once, when that object is released, not before",
    "E-allocator": "managed_tensor_allocator returns a tensor of the prototype's shape, dtype and device (compact "
                   "strides), calling no error callback; for a prototype it cannot serve it returns -1 having called "
                   "the error callback exactly once with a kind and a message, and leaves no Python exception set",
    "E-non-owning": "dltensor_from_py_object_no_sync, where not NULL, fills the DLTensor __dlpack__ describes, taking "
                    "no reference (or refuses, with an exception, a value a bare DLTensor cannot describe: read-only)",
    "E-stream": "current_work_stream returns 0 for the producer's own device",
}

NONE_PUBLISHED = "none (the table is optional)"
_COMPARED = ("version", "flags", "device", "dtype", "ndim", "shape", "strides", "address")


def _call(calls, part, current):
    return calls.ask({"op": "exchange", "part": part, "current": list(current)})


def _ended(answer):
    """The failure text of an answer that is no result (crashed, hung, not sent, unreadable), else None."""
    for key in ("unchecked", "failure"):
        if key in answer:
            return answer[key]
    if "unreadable" in answer:
        return "the answer could not be read (%s)" % answer["unreadable"]
    return None


def _failed(answer, rule):
    """(got, violations) for an answer that is a raise, a status other than 0, or no result; None otherwise."""
    text = _ended(answer)
    if text is not None:
        return text, [("X-not-checked" if "unchecked" in answer else "P-crash", text)]
    if answer.get("missing"):
        return "NULL", [(rule, "the function is NULL")]
    if "raised" in answer:
        return "raised %s" % answer["raised"]["name"], [(rule, "raised %s: %s" % (
            answer["raised"]["name"], answer["raised"]["message"][:120]))]
    if answer.get("status", 0) != 0 or answer.get("out_null"):
        return "returned %s" % answer.get("status"), [(rule, "returned %s%s" % (
            answer.get("status"), " with no tensor" if answer.get("out_null") else ""))]
    return None


def _differences(tensor, protocol):
    """The fields where the table's tensor and the protocol's differ, as text."""
    if "error" in protocol or "failure" in protocol:
        return ["__dlpack__(max_version=current) gave no tensor to compare with"]
    diffs = []
    for field in _COMPARED:
        a, b = tensor.get(field), protocol.get(field)
        if field == "strides" and protocol.get("strides_null") and a is not None:
            b = a if _compact(tensor) else None
        if a != b:
            diffs.append("%s %s, __dlpack__ %s" % (field, a, b))
    return diffs


def _compact(tensor):
    """Whether a tensor's strides are the compact row-major ones of its shape (what NULL strides mean)."""
    expected, step = [], 1
    for extent in reversed(tensor.get("shape") or []):
        expected.insert(0, step)
        step *= max(extent, 1)
    return tensor.get("strides") == expected


def _table_row(rules, found):
    form = found["form"]
    if form == "none":
        return None, None
    readable = rules.structs["versioned"][0][0]
    chain = found.get("chain", [])
    if form == "capsule":
        got = 'capsule "%s"' % found["name"]
    elif form == "int":
        got = "int (the 1.2 form)"
    else:
        got = "a %s" % found["what"]
    got += " " + " → ".join(show_version(v) for v in chain) if chain else ""
    v = []
    if form == "other" or (form == "capsule" and found["name"] != EXCHANGE_API_CAPSULE):
        v.append(("E-table", "%s is neither the 1.3 capsule nor the 1.2 int" % got))
    elif "null" not in found:
        v.append(("E-table", "no table of major %d in the chain" % readable))
    else:
        missing = [f for f in found["null"] if f != "dltensor_from_py_object_no_sync"]
        if missing:
            v.append(("E-table", "NULL %s" % ", ".join(missing)))
    chain_v = []
    if found.get("ended") == "cycle":
        chain_v.append(("E-chain", "prev_api cycles back to a table already read"))
    elif found.get("ended") == "long":
        chain_v.append(("E-chain", "more than %d tables" % len(chain)))
    if any(chain[i][0] <= chain[i + 1][0] for i in range(len(chain) - 1)):
        chain_v.append(("E-chain", "a prev_api table is not of an older major"))
    return got, v + chain_v


def _from_row(answer, readable):
    failed = _failed(answer, "E-export")
    if failed is not None:
        return failed
    tensor = answer["tensor"]
    v = []
    if tensor["version"][0] != readable:
        v.append(("E-export", "version %s from a table of major %d" % (show_version(tensor["version"]), readable)))
    diffs = _differences(tensor, answer["protocol"])
    if diffs:
        v.append(("E-export", "; ".join(diffs)))
    if tensor["has_deleter"] and answer["deleter_calls"] != 1:
        v.append(("E-export", "the deleter ran %d times for one call" % answer["deleter_calls"]))
    return "%s, same as __dlpack__" % show_version(tensor["version"]) if not diffs else \
        show_version(tensor["version"]), v


def _to_row(answer):
    failed = _failed(answer, "E-to-object")
    if failed is not None:
        return failed
    v = []
    if answer["has_deleter"] and answer["while_held"] != 0:
        v.append(("E-to-object", "the deleter ran while the object held the tensor"))
    if answer["has_deleter"] and answer["after_release"] != 1:
        v.append(("E-to-object", "the deleter ran %d times once the object was released" % answer["after_release"]))
    return "a %s; deleter %d then %d" % (answer["type"], answer["while_held"], answer["after_release"]), v


def _allocator_rows(answer):
    if "no_prototype" in answer:
        return [(answer["no_prototype"], [("E-allocator", answer["no_prototype"])])] * 2
    failed = _failed(answer, "E-allocator")
    if failed is not None:
        return [failed] * 2
    served, refused, asked = answer["served"], answer["unservable"], answer["asked"]
    v = []
    if served["status"] != 0 or "tensor" not in served:
        v.append(("E-allocator", "returned %d%s" % (served["status"], ": %s" % served["errors"][0][1]
                                                     if served["errors"] else "")))
        got = "returned %d" % served["status"]
    else:
        tensor = served["tensor"]
        for field in ("shape", "dtype", "device"):
            if tensor.get(field) != asked[field]:
                v.append(("E-allocator", "%s %s, asked %s" % (field, tensor.get(field), asked[field])))
        if tensor.get("strides") is not None and not _compact(tensor):
            v.append(("E-allocator", "strides %s are not compact" % tensor["strides"]))
        if served["errors"]:
            v.append(("E-allocator", "called the error callback on success"))
        got = "shape (2, 3), version %s" % show_version(tensor["version"])
    if served["exception_left"]:
        v.append(("E-allocator", "left a Python exception set"))
    r = []
    if refused["status"] == 0:
        r.append(("E-allocator", "returned 0 for an element count that overflows 64 bits"))
    elif len(refused["errors"]) != 1 or not all(refused["errors"][0]):
        r.append(("E-allocator", "called the error callback %d times%s" % (
            len(refused["errors"]), "" if len(refused["errors"]) != 1 else " with an empty kind or message")))
    if refused["exception_left"]:
        r.append(("E-allocator", "left a Python exception set"))
    kind = refused["errors"][0][0] if refused["errors"] else "no error"
    return [(got, v), ("returned %d, %s" % (refused["status"], kind), r)]


def _non_owning_row(answer):
    if answer.get("null"):
        return "NULL (allowed)", []
    text = _ended(answer)
    if text is not None:
        return _failed(answer, "E-non-owning")
    if "raised" in answer:
        read_only = answer["protocol"].get("flags", 0) & 1
        name = answer["raised"]["name"]
        return "raised %s" % name, [] if read_only else [("E-non-owning", "raised %s where __dlpack__ exports the "
                                                                          "value" % name)]
    failed = _failed(answer, "E-non-owning")
    if failed is not None:
        return failed
    v = []
    protocol = dict(answer["protocol"])
    protocol.pop("version", None)
    diffs = _differences(dict(answer["tensor"], version=None), dict(protocol, version=None))
    diffs = [d for d in diffs if not d.startswith("flags")]  # a bare DLTensor has none
    if diffs:
        v.append(("E-non-owning", "; ".join(diffs)))
    if answer["references"] != 0:
        v.append(("E-non-owning", "took %d references to the object" % answer["references"]))
    return "filled, same as __dlpack__" if not diffs else "filled", v


def _stream_row(answer):
    if "no_device" in answer:
        return "__dlpack_device__ raised %s" % answer["no_device"], [("E-stream", "no device to ask for")]
    failed = _failed(answer, "E-stream")
    if failed is not None:
        return failed
    return "0, stream %s" % ("NULL" if not answer["stream"] else hex(answer["stream"])), []


def rows(calls, columns, rules):
    """The C exchange API rows of the producer in `calls`' child, with the same verdicts in every column (the C API's
    rules are DLPack's, whatever a profile says of the Python protocol)."""
    current, readable = rules.current, rules.structs["versioned"][0][0]
    sent = "type(x).%s" % EXCHANGE_API_ATTRIBUTE
    found = _call(calls, "find", current)
    text = _ended(found)
    if text is not None:
        return [Row("E1", sent, text, {c: [("X-not-checked" if "unchecked" in found else "P-crash", text)]
                                         for c in columns})]
    got, v = _table_row(rules, found)
    if got is None:
        return [Row("E1", sent, NONE_PUBLISHED, {c: [] for c in columns})]  # optional: conformant either way
    out = [Row("E1", sent, got, {c: list(v) for c in columns})]
    if "null" not in found:
        return out
    # Each part: its row ids and what each sends, the child's part, and the judge giving (got, violations) per row.
    parts = [(["E2"], ["managed_tensor_from_py_object_no_sync(x), then its deleter"], "from_py_object",
              lambda a: [_from_row(a, readable)]),
             (["E3"], ["managed_tensor_to_py_object_no_sync(that tensor), then the object released"], "to_py_object",
              lambda a: [_to_row(a)]),
             (["E4", "E5"], ["managed_tensor_allocator((2, 3), x's dtype and device)",
                             "managed_tensor_allocator((2^62, 2^62)): cannot be served"], "allocate", _allocator_rows),
             (["E6"], ["dltensor_from_py_object_no_sync(x, &DLTensor)"], "dltensor_from_py_object",
              lambda a: [_non_owning_row(a)]),
             (["E7"], ["current_work_stream(x's device)"], "current_work_stream", lambda a: [_stream_row(a)])]
    for ids, sents, part, judge in parts:
        for row_id, what, (got, v) in zip(ids, sents, judge(_call(calls, part, current))):
            out.append(Row(row_id, what, got, {c: list(v) for c in columns}))
    return out
