# dlmap conformance checker — runs in a child interpreter for one producer × consumer pair of the matrix (matrix.py):
# makes each value family with the producer library, hands it to the consumer library's from_dlpack (with the family's
# keyword arguments), and compares what came back with what went in, each read through its library's own attributes
# and ctypes, not DLPack (shape, dtype, every element's bytes, shared or copied data, read-only state). One JSON line per family
# is appended to the answer file as soon as it is known, so that a crash or hang is the family after the last line.
# usage: matrix_calls.py CONFIG_JSON ANSWER_PATH   (CONFIG: producer, consumer, first: the first family's index)
import gc
import json
import sys

try:
    from . import matrix_families  # imported as dlmap.check.matrix_calls
except ImportError:
    import matrix_families  # run as a script, with this directory on sys.path


def run(producer, consumer, family):
    """One family: {"na": why} (the producer library cannot make it), {"refused": kind, "message": …}, or the
    comparison {"ok": bool, "problems": […]}."""
    try:
        value = matrix_families.make(producer, family)
    except matrix_families.NotMade as why:
        return {"na": str(why)}
    sent = matrix_families.describe(producer, value)
    kwargs = family.get("kwargs", {})
    try:
        result = matrix_families.consume(consumer, value, kwargs)
    except Exception as error:  # a clean refusal is a result
        return {"refused": type(error).__name__, "message": str(error)[:160]}
    got = matrix_families.describe(consumer, result)
    problems = []
    for field in ("shape", "dtype"):
        if got[field] != sent[field]:
            problems.append("%s %s, sent %s" % (field, got[field], sent[field]))
    if not problems and got["elements"] != sent["elements"]:
        problems.append("different values")
    shared = got["address"] == sent["address"] and sent["elements"]
    if kwargs.get("copy") is True and shared:
        problems.append("copy=True shares the producer's data")
    if kwargs.get("copy") is False and sent["elements"] and not shared:
        problems.append("copy=False copied")
    if family.get("read_only") and shared and matrix_families.writable(consumer, result):
        problems.append("a writable view of read-only data")
    del result, value
    gc.collect()
    return {"ok": not problems, "problems": problems, "shared": bool(shared)}


def main(config_json, answer_path):
    config = json.loads(config_json)
    families = matrix_families.FAMILIES
    with open(answer_path, "a", encoding="utf-8") as answers:
        for index in range(config["first"], len(families)):
            try:
                outcome = run(config["producer"], config["consumer"], families[index])
            except Exception as error:  # the checker could not read what came back: said, not raised
                outcome = {"unreadable": "%s: %s" % (type(error).__name__, str(error)[:160])}
            answers.write(json.dumps(dict(outcome, index=index)) + "\n")
            answers.flush()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[2])
