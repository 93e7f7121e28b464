# dlmap CI drill — the upstream-style spec edits, one variant at a time, made as the README recipes say (text edits
# to spec/*.yaml and spec/profiles/jax.yaml that keep the files' comments and layout).
"""Usage: variants.py VARIANT WORKSPACE     (VARIANT: one of the letters below; prints what it changed)

The variants build on each other in the order tools/drill/drill.sh runs them (b, a, c, d, e, f). New values are
derived from the spec as it stands (the next free value, the current version), so the drill keeps working after
real upstream entries land:

  b  device type kDLDrillAccel introduced in the current version, no version bump (as DLPack did for 19–21)
  a  a new DLPack version (current + 0.1), abi.current moved to it, and device type kDLDrillNext introduced in it
  c  dtype code kDLDrillFloat with two widths, their names and an alias
  d  error drill_unraised with a new placeholder and an existing one, raised nowhere
  e  an alias for platform cuda and one for device type kDLCUDA
  f  kDLDrillAccel made exchangeable on the host: platform cpu, memory host, stream none (facts), and listed in the
     jax profile's dl_device, sources and import lists (the array_api profile serves it through the cpu backend)
"""

import os
import re
import sys

import yaml

# The names the drill adds, for drill.sh's end-to-end check of variant f.
ACCEL = "kDLDrillAccel"


def read(path):
    with open(path, encoding="utf-8") as handle:
        return handle.read()


def write(path, text):
    with open(path, "w", encoding="utf-8") as handle:
        handle.write(text)


def replace_once(path, old, new):
    """Replaces the one occurrence of `old`; a spec whose layout moved on fails here, naming the file and the text."""
    text = read(path)
    if text.count(old) != 1:
        sys.exit("variants.py: %s: expected exactly one %r, found %d" % (path, old, text.count(old)))
    write(path, text.replace(old, new))


def append_to_section(path, section, items):
    """Appends YAML list items (text, two-space indented) at the end of a top-level list section."""
    lines = read(path).split("\n")
    try:
        start = lines.index(section + ":")
    except ValueError:
        sys.exit("variants.py: %s: no top-level section '%s:'" % (path, section))
    end = next((i for i in range(start + 1, len(lines)) if lines[i] and not lines[i][0].isspace()
                and not lines[i].startswith("#")), len(lines))
    while end > start + 1 and not lines[end - 1].strip():
        end -= 1  # keep the blank lines that separate the next section
    lines[end:end] = items.rstrip("\n").split("\n")
    write(path, "\n".join(lines))


class Spec:
    """The workspace's spec as it stands, for the next free values."""

    def __init__(self, root):
        self.root = root
        load = lambda name: yaml.safe_load(read(self.path(name)))
        self.versions = load("versions.yaml")
        self.devices = load("devices.yaml")["device_types"]
        self.dtypes = load("dtypes.yaml")["dtype_codes"]
        self.errors = load("errors.yaml")["errors"]
        self.placeholders = load("errors.yaml")["placeholders"]

    def path(self, name):
        return os.path.join(self.root, "spec", name)

    @property
    def current(self):
        return self.versions["abi"]["current"]

    def next_device_value(self):
        return max(d["value"] for d in self.devices) + 1


def variant_b(spec):
    value = spec.next_device_value()
    append_to_section(spec.path("devices.yaml"), "device_types", """\
  - value: %d
    name: %s
    aliases: [drill_accel]
    introduced: "%s"
    platform: none
    memory: device
    stream: opaque
    doc: Drill accelerator memory (tools/drill, variant b).""" % (value, ACCEL, spec.current))
    return "device type %s = %d introduced in %s" % (ACCEL, value, spec.current)


def variant_a(spec):
    major, minor = (int(part) for part in spec.current.split("."))
    new = "%d.%d" % (major, minor + 1)
    append_to_section(spec.path("versions.yaml"), "versions", """\
  - version: "%s"
    struct: versioned
    note: The drill's next release (tools/drill, variant a).""" % new)
    replace_once(spec.path("versions.yaml"), 'current: "%s"' % spec.current, 'current: "%s"' % new)
    value = spec.next_device_value()
    append_to_section(spec.path("devices.yaml"), "device_types", """\
  - value: %d
    name: kDLDrillNext
    aliases: [drill_next]
    introduced: "%s"
    platform: none
    memory: device
    stream: opaque
    doc: Drill device memory of the next release (tools/drill, variant a).""" % (value, new))
    return "DLPack %s listed, abi.current %s -> %s, device type kDLDrillNext = %d introduced in %s" % (
        new, spec.current, new, value, new)


def variant_c(spec):
    code = max(c["value"] for c in spec.dtypes) + 1
    append_to_section(spec.path("dtypes.yaml"), "dtype_codes", """\
  - value: %d
    name: kDLDrillFloat
    introduced: "%s"
    lanes: vector
    widths:
      - {bits: 8, name: drill_float8, aliases: [drill_f8]}
      - {bits: 16, name: drill_float16}
    doc: Drill floating point (tools/drill, variant c).""" % (code, spec.current))
    return "dtype code kDLDrillFloat = %d (drill_float8 alias drill_f8, drill_float16) introduced in %s" % (
        code, spec.current)


def variant_d(spec):
    code = max(e["code"] for e in spec.errors) + 1
    path = spec.path("errors.yaml")
    append_to_section(path, "placeholders",
                      '  - {name: drill_detail, value: %d, type: str, doc: "What the drill error reports (tools/drill)."}'
                      % len(spec.placeholders))  # the next free dlmap_placeholder value
    append_to_section(path, "errors", """\
  - id: drill_unraised
    code: %d
    kind: ValueError
    message: "Drill error on device type {dl_device_type}: {drill_detail}."
    args: [dl_device_type, drill_detail]
    meaning: An error the drill adds to the catalogue (tools/drill, variant d); no C code raises it.
    when: Never; it proves that a new catalogue entry needs no C change.
    fix: Nothing to fix.""" % code)
    return "error drill_unraised = %d with placeholders {dl_device_type} and the new {drill_detail}" % code


def variant_e(spec):
    replace_once(spec.path("platforms.yaml"), "aliases: [nvidia]", "aliases: [nvidia, drill_nvidia]")
    replace_once(spec.path("devices.yaml"), "aliases: [cuda, gpu]", "aliases: [cuda, gpu, drill_cuda]")
    return "platform alias drill_nvidia (cuda), device type alias drill_cuda (kDLCUDA)"


def variant_f(spec):
    accel = next(d for d in spec.devices if d["name"] == ACCEL)
    replace_once(spec.path("devices.yaml"), """\
    name: %s
    aliases: [drill_accel]
    introduced: "%s"
    platform: none
    memory: device
    stream: opaque""" % (ACCEL, accel["introduced"]), """\
    name: %s
    aliases: [drill_accel]
    introduced: "%s"
    platform: cpu
    memory: host
    stream: none""" % (ACCEL, accel["introduced"]))
    # The jax profile lists JAX's device types by name: dl_device.accept, sources and import.accept.
    path = spec.path("profiles/jax.yaml")
    pattern = re.compile(r"^(\s*(?:accept|sources): \[[^\]]*)\]", re.M)
    text, count = pattern.subn(lambda m: m.group(1) + ", %s]" % ACCEL, read(path))
    if count != 3:
        sys.exit("variants.py: %s: expected 3 device lists (dl_device.accept, sources, import.accept), found %d"
                 % (path, count))
    write(path, text)
    return "%s = %d on platform cpu in host memory; listed in jax's dl_device, sources and import lists" % (
        ACCEL, accel["value"])


VARIANTS = {"a": variant_a, "b": variant_b, "c": variant_c, "d": variant_d, "e": variant_e, "f": variant_f}


def main(argv):
    if len(argv) != 2 or argv[0] not in VARIANTS:
        sys.exit("usage: variants.py {%s} WORKSPACE" % ",".join(sorted(VARIANTS)))
    print(VARIANTS[argv[0]](Spec(argv[1])))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
