# dlmap conformance checker — the producer check's device-claim row (issue 48): whether the device a producer's tensor
# names is where its memory is. Only a platform's runtime can say where an address lives, and only where it is loaded in
# the producer's process, so the row is judged there (calls.py "claim"): the producer is imported through dlmap, whose
# import asks the runtime and refuses a claim the memory contradicts with its catalogue errors; that error, with its
# text, is the row's failure. Where no runtime is loaded (or none has a device) the row is skipped with the reason.
from .report import Row

RULE = "P-device-claim"
RULE_TEXT = ("the device a tensor names (type and id) is where its memory is, as the platform's runtime says when it is "
             "loaded in the producer's process: judged by dlmap's import, which refuses a claim the memory contradicts")
# dlmap's catalogue errors that say a claim and the memory disagree (spec/errors.yaml): each of the profile's
# import.device_claims (the bytes past the allocation included), and a device id past the runtime's devices.
CLAIM_ERRORS = ("device_claim_device_memory", "device_claim_host_memory", "device_claim_wrong_device",
                "device_claim_outside_allocation", "device_id_out_of_range")
SENT = "dlmap.from_dlpack(x): its device claim against the runtime's pointer query"


def runtimes(rules):
    """{platform: its spec runtime entry (libraries, symbols)} of every platform the spec describes a runtime for."""
    return {name: entry["runtime"] for name, entry in rules.platforms.items() if entry.get("runtime")}


def row(calls, columns, rules):
    """The row D2: the child's answer to "claim", judged the same in every column."""
    answer = calls.ask({"op": "claim"})
    if "unchecked" in answer:
        return Row("D2", SENT, answer["unchecked"], {c: [("X-not-checked", answer["unchecked"])] for c in columns})
    if "failure" in answer or "unreadable" in answer:
        got = answer.get("failure") or "the answer could not be read (%s)" % answer["unreadable"]
        return Row("D2", SENT, got, {c: [("P-crash", got)] if "failure" in answer else [] for c in columns},
                   skipped="unreadable" in answer)
    if "skipped" in answer:
        return Row("D2", SENT, "skipped: %s" % answer["skipped"], {c: [] for c in columns}, skipped=True)
    if "imported" in answer:
        got = "imported on %s:%d; the runtime agrees" % (rules.device_name(answer["imported"][0]),
                                                         answer["imported"][1])
        return Row("D2", SENT, got, {c: [] for c in columns})
    error = answer["error"]
    got = "%s%s: %s" % (error["name"], " (%s)" % error["dlmap_id"] if error["dlmap_id"] else "", error["message"])
    if error["dlmap_id"] in CLAIM_ERRORS:
        return Row("D2", SENT, got, {c: [(RULE, error["dlmap_id"])] for c in columns})
    # dlmap refused the tensor for another reason (rows above judge those): the claim itself was not judged.
    return Row("D2", SENT, "skipped: dlmap's import refused it before judging the claim: %s" % got,
               {c: [] for c in columns}, skipped=True)
