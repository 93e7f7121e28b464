# dlmap hardening — spec loader property test (python3-hypothesis): mutated specs load cleanly or raise SpecError.
"""Property: for any mutation of the default spec (keys dropped, values replaced by other types, entries
duplicated, random strings and numbers, random overlay files, raw text edits that break the YAML), spec.load
either returns a Spec or raises spec.SpecError — never any other exception, which would reach users of the
generator and of `dlmap spec check` as a Python traceback.

Run by hand:  /usr/bin/python3 tests/hardening/spec_property_test.py   (Debian's python3 with python3-hypothesis)
Under Bazel:  bazel test //tests/hardening:spec_property_test
Environment:  DLMAP_SPEC_EXAMPLES  examples per property (default 60; tools/hardening.sh uses more)
              DLMAP_SPEC_RANDOM=1  a fresh random seed instead of the fixed, derandomised run
"""

import copy
import os
import sys
import tempfile
import traceback
import unittest

import yaml

try:
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st
except ImportError:  # pragma: no cover - a clear message instead of a traceback
    sys.stderr.write("spec_property_test: needs python3-hypothesis (apt-get install python3-hypothesis) under %s\n"
                     % sys.executable)
    sys.exit(2)

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.environ.get("DLMAP_ROOT") or os.path.dirname(os.path.dirname(HERE))
CODEGEN_DIR = os.path.join(ROOT, "codegen")
SPEC_DIR = os.path.join(ROOT, "spec")
sys.path.insert(0, CODEGEN_DIR)

import spec  # noqa: E402  (the generator's loader, under test)

DEFAULT_FILES = ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml", "errors.yaml", "profiles/jax.yaml")
EXAMPLES = int(os.environ.get("DLMAP_SPEC_EXAMPLES", "60"))
RANDOM = os.environ.get("DLMAP_SPEC_RANDOM") == "1"
SETTINGS = settings(max_examples=EXAMPLES, deadline=None, database=None, derandomize=not RANDOM,
                    suppress_health_check=list(HealthCheck), print_blob=True)

TEXTS = {name: open(os.path.join(SPEC_DIR, name), encoding="utf-8").read() for name in DEFAULT_FILES}
DATA = {name: yaml.safe_load(text) for name, text in TEXTS.items()}
STATS = {"loaded": 0, "spec_error": 0}

# ---- the property ---------------------------------------------------------------------------------------------


def _dump(data):
    return yaml.safe_dump(data, sort_keys=False, allow_unicode=True)


def check_load(texts, extra=None):
    """Writes the files (name → text) and loads them; only a Spec or a SpecError may come back."""
    with tempfile.TemporaryDirectory(prefix="dlmap_spec_prop_") as tmp:
        paths = []
        for name in DEFAULT_FILES:
            path = os.path.join(tmp, name)
            os.makedirs(os.path.dirname(path), exist_ok=True)
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(texts[name])
            paths.append(path)
        if extra is not None:
            path = os.path.join(tmp, "overlay.yaml")
            with open(path, "w", encoding="utf-8", errors="surrogatepass") as handle:
                handle.write(extra)
            paths.append(path)
        try:
            spec.load(paths)
            STATS["loaded"] += 1
        except spec.SpecError as error:
            STATS["spec_error"] += 1
            message = str(error)
            assert message.strip(), "a SpecError without a message"
        except Exception:  # noqa: BLE001 - exactly what the property forbids
            files = "".join("--- %s ---\n%s\n" % (name, texts[name]) for name in DEFAULT_FILES
                            if texts[name] != TEXTS[name])
            if extra is not None:
                files += "--- overlay.yaml ---\n%s\n" % extra
            raise AssertionError("spec.load raised a non-SpecError exception:\n%s\nchanged files:\n%s"
                                 % (traceback.format_exc(), files[:6000]))


# ---- strategies -------------------------------------------------------------------------------------------------

SCALARS = (st.none() | st.booleans() | st.integers(min_value=-2**70, max_value=2**70)
           | st.floats(allow_nan=True, allow_infinity=True) | st.text(max_size=12)
           | st.sampled_from(["1.3", "0.0", "9.9", "01.2", "1.10000", "kDLCPU", "cpu", "cuda", "float32", "int",
                              "legacy", "versioned", "none", "vector", "scalar", "insensitive", "host", "device",
                              "BufferError", "{ndim}", "{", "}", "{{", "x {nbytes} y", "2001-13-40", "0x1F",
                              "kDLCUDA", "gpu", "MemoryError", "out_of_memory", ""]))
VALUES = st.recursive(SCALARS, lambda children: st.lists(children, max_size=3)
                      | st.dictionaries(st.text(max_size=8) | st.sampled_from(["name", "value", "id", "bits"]),
                                        children, max_size=3), max_leaves=6)


def _containers(node, path=()):
    """Every (path, container) in a YAML tree, the root included."""
    out = []
    if isinstance(node, (dict, list)):
        out.append((path, node))
        items = node.items() if isinstance(node, dict) else enumerate(node)
        for key, child in items:
            out.extend(_containers(child, path + (key,)))
    return out


@st.composite
def structural_mutation(draw):
    """1-4 edits of the parsed default spec, dumped back as YAML."""
    data = copy.deepcopy(DATA)
    for _ in range(draw(st.integers(min_value=1, max_value=4))):
        name = draw(st.sampled_from(DEFAULT_FILES))
        containers = _containers(data[name])
        _, node = draw(st.sampled_from(containers))
        op = draw(st.sampled_from(["drop", "replace", "duplicate", "add_key", "retype", "swap", "clear"]))
        if isinstance(node, dict) and node:
            key = draw(st.sampled_from(sorted(node, key=repr)))
            if op == "drop":
                del node[key]
            elif op in ("replace", "retype"):
                node[key] = draw(VALUES)
            elif op == "duplicate" and isinstance(node[key], list) and node[key]:
                node[key].append(copy.deepcopy(draw(st.sampled_from(node[key]))))
            elif op == "add_key":
                node[draw(st.text(max_size=10) | st.sampled_from(["aliases", "note", "runtime", "values",
                                                                   "overrides", "related", "args"]))] = draw(VALUES)
            elif op == "swap" and len(node) > 1:
                other = draw(st.sampled_from(sorted(node, key=repr)))
                node[key], node[other] = node[other], node[key]
            elif op == "clear":
                node[key] = type(node[key])() if isinstance(node[key], (dict, list, str)) else None
        elif isinstance(node, list) and node:
            index = draw(st.integers(min_value=0, max_value=len(node) - 1))
            if op == "drop":
                del node[index]
            elif op in ("replace", "retype"):
                node[index] = draw(VALUES)
            elif op == "duplicate":
                node.insert(index, copy.deepcopy(node[index]))
            elif op == "swap":
                other = draw(st.integers(min_value=0, max_value=len(node) - 1))
                node[index], node[other] = node[other], node[index]
            elif op == "clear":
                node.clear()
            else:
                node.append(draw(VALUES))
    return {name: _dump(data[name]) for name in DEFAULT_FILES}


@st.composite
def text_mutation(draw):
    """Raw edits of one file's text: lines dropped, duplicated (duplicate keys), replaced or cut, bytes inserted."""
    texts = dict(TEXTS)
    name = draw(st.sampled_from(DEFAULT_FILES))
    lines = texts[name].split("\n")
    for _ in range(draw(st.integers(min_value=1, max_value=3))):
        if not lines:
            lines = [""]
        index = draw(st.integers(min_value=0, max_value=len(lines) - 1))
        op = draw(st.sampled_from(["drop", "duplicate", "replace", "insert", "truncate", "indent"]))
        if op == "drop":
            del lines[index]
        elif op == "duplicate":
            lines.insert(index, lines[index])
        elif op == "replace":
            lines[index] = draw(st.text(max_size=30) | st.sampled_from(
                ["  - {", "key: [", "- *anchor", "x: &a [*a]", "  value: !!python/object:os.system ls",
                 "  introduced: 2001-13-40", "  introduced: 2020-02-30 25:61:61", "  doc: !!binary AAA=",
                 "  value: !!int x", "<<: 3", "  bits: !!float nan", "\t- tab", "? [a, b]\n: c", "\x00", "\ufeff"]))
        elif op == "insert":
            column = draw(st.integers(min_value=0, max_value=len(lines[index])))
            lines[index] = lines[index][:column] + draw(st.text(max_size=5)) + lines[index][column:]
        elif op == "truncate":
            lines = lines[:index]
        else:
            lines[index] = "   " + lines[index]
    texts[name] = "\n".join(lines)
    return texts


# Scalars YAML parses but PyYAML may fail to construct, and other hostile values for a `key: value` line.
HOSTILE_VALUES = ["2001-13-40", "2020-02-30", "2001-01-01 25:00:00", "!!timestamp x", "!!int x", "!!int 0b", "0x_",
                  "!!float x", "!!bool maybe", "!!binary AAA", "!!binary ====", "!!map [1]", "!!seq {a: 1}",
                  "!!set {a, b}", "!!omap [a: 1]", "!!null x", "!!str", "&a [*a]", "*undefined", "!!merge x",
                  "!!python/name:os.system", "[" * 2000 + "]" * 2000, "{" * 2000, "1e400", ".nan", "~", "[]", "{}",
                  "|", ">-\n  folded", "'unterminated", "\"\\q\"", "@reserved", "`reserved", "%TAG", "? complex"]


@st.composite
def value_mutation(draw):
    """`key: value` lines of one file get a hostile scalar or flow value (the value's own text, YAML-wise)."""
    texts = dict(TEXTS)
    name = draw(st.sampled_from(DEFAULT_FILES))
    lines = texts[name].split("\n")
    candidates = [i for i, line in enumerate(lines) if ": " in line and not line.lstrip().startswith("#")]
    for _ in range(draw(st.integers(min_value=1, max_value=2))):
        index = draw(st.sampled_from(candidates))
        head = lines[index].split(": ", 1)[0]
        lines[index] = "%s: %s" % (head, draw(st.sampled_from(HOSTILE_VALUES) | st.text(max_size=12)))
    texts[name] = "\n".join(lines)
    return texts


@st.composite
def overlay(draw):
    """A random overlay file after the default spec: new entries, overrides, sections repeated."""
    sections = draw(st.dictionaries(
        st.sampled_from(list(spec.LIST_SECTIONS) + list(spec.MAP_SECTIONS) + ["overrides", "bogus"]),
        VALUES, max_size=3))
    if draw(st.booleans()):
        section = draw(st.sampled_from(sorted(spec.IDENTITY)))
        key = spec.IDENTITY[section]
        entries = DATA[next(n for n in DEFAULT_FILES if section in DATA[n])][section]
        target = draw(st.sampled_from(entries))
        override = {key: target.get(key) if isinstance(target, dict) else None}
        override.update(draw(st.dictionaries(st.sampled_from(sorted(target) if isinstance(target, dict) else ["x"]),
                                             VALUES, max_size=2)))
        sections["overrides"] = {section: [override]}
    if draw(st.booleans()):
        section = draw(st.sampled_from(list(spec.LIST_SECTIONS)))
        entries = DATA[next(n for n in DEFAULT_FILES if section in DATA[n])][section]
        sections[section] = [copy.deepcopy(draw(st.sampled_from(entries)))]
    return _dump(sections)


# ---- the tests ---------------------------------------------------------------------------------------------------


class SpecLoaderProperty(unittest.TestCase):
    def test_default_spec_loads(self):
        before = STATS["loaded"]
        check_load(TEXTS)
        self.assertEqual(STATS["loaded"], before + 1)

    @SETTINGS
    @given(structural_mutation())
    def test_structural_mutations(self, texts):
        check_load(texts)

    @SETTINGS
    @given(text_mutation())
    def test_text_mutations(self, texts):
        check_load(texts)

    @SETTINGS
    @given(value_mutation())
    def test_value_mutations(self, texts):
        check_load(texts)

    @SETTINGS
    @given(overlay())
    def test_overlays(self, extra):
        check_load(TEXTS, extra)

    # Inputs that once raised something other than SpecError (see RELIABILITY.md); kept as fixed regressions.
    def test_regressions(self):
        for name, old, new in REGRESSIONS:
            texts = dict(TEXTS)
            self.assertIn(old, texts[name])
            texts[name] = texts[name].replace(old, new, 1)
            check_load(texts)


# (file, text to replace, replacement) — each once raised a non-SpecError exception from spec.load.
REGRESSIONS = [
    # PyYAML constructor errors escaped _read as ValueError / KeyError / AttributeError / TypeError.
    ("devices.yaml", 'introduced: "0.1"', "introduced: 2001-13-40"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: 2001-01-01 25:00:00"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: !!timestamp x"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: !!int x"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: 0x_"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: !!float x"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: !!bool maybe"),
    ("devices.yaml", 'introduced: "0.1"', "introduced: !!map [1]"),
    # PyYAML composes nested flow collections recursively: RecursionError.
    ("devices.yaml", 'introduced: "0.1"', "introduced: " + "[" * 3000 + "]" * 3000),
    ("errors.yaml", "    args: [min_version, max_version]", "    args: " + "{" * 3000 + "["),
]


if __name__ == "__main__":
    result = unittest.main(exit=False, verbosity=2).result
    print("spec_property_test: %d spec loads succeeded, %d raised SpecError, 0 other exceptions"
          % (STATS["loaded"], STATS["spec_error"]) if result.wasSuccessful() else "spec_property_test: FAILED")
    sys.exit(0 if result.wasSuccessful() else 1)
