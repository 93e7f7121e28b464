# dlmap tests — the spec's growing facts as test data, read from the YAML with plain PyYAML (not codegen/).
"""Reads spec files the way the generator documents them (list sections appended in order, `overrides` replacing
keys of earlier entries by their identity key, mapping sections from the one file that has them) and writes what
the tests need to know about the spec without trusting the generator's tables:

  --c_header OUT   a C header (C99 and C++): every device type, dtype code and width, version, platform, memory
                   kind, stream convention, flag, placeholder and error, with counts and the current version
  --sh OUT         shell assignments for the CLI tests (counts, the current version, the profile's name, one line
                   per device type: value, released or main, then every lookup name)

Deliberately independent of codegen/spec.py: a test that compares the library with these facts catches a
generator that drops, reorders or misreads entries. Validation is the generator's job; this reader only fails
loudly on what it cannot read.

A profile's `extends:` is resolved with the generator's own merge rule (codegen/profile_extends.py), among the
--base_profile files (spec_facts() passes dlmap's shipped profiles).

Usage: spec_facts.py --spec FILE [--spec FILE ...] [--base_profile FILE ...] [--c_header OUT] [--sh OUT]
"""

import argparse
import importlib
import os
import sys

import yaml

# How an overlay's `overrides` finds the entry it edits (README "Use your own spec").
IDENTITY = {"versions": "version", "flags": "name", "platforms": "name", "memory_kinds": "name",
            "stream_conventions": "name", "device_types": "value", "dtype_codes": "value",
            "exception_kinds": "name", "placeholders": "name", "errors": "id"}
MAPPINGS = ("abi", "lookup", "profile", "released_values", "exchange_api")


# libyaml's parser where PyYAML has it: the same safe loading, about nine times faster than the pure-Python one.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER) or {}


def _codegen_module(name):
    """A module of dlmap's codegen/ (profile_extends, profile_settings): beside this file where a package ships a copy
    of both (python/check), else in dlmap's codegen/."""
    try:
        return importlib.import_module("." + name, __package__) if __package__ else importlib.import_module(name)
    except ImportError:
        here = os.path.dirname(os.path.abspath(__file__))
        for directory in (here, os.path.join(os.path.dirname(os.path.dirname(here)), "codegen")):
            if os.path.exists(os.path.join(directory, name + ".py")) and directory not in sys.path:
                sys.path.insert(0, directory)
        return importlib.import_module(name)


def _profile_extends():
    return _codegen_module("profile_extends")


def profile_settings(profile):
    """{YAML key under profile: its value}, for every setting of the profile schema (codegen/profile_settings.py):
    the profile's own value, else the schema's default. `profile` is a merged `profile:` mapping (read() resolves
    `extends:`)."""
    schema = _codegen_module("profile_settings")
    return {row.key: schema.raw(profile, row) for row in schema.SETTINGS}


def shipped_profiles(paths):
    """The profile files `extends:` may name when the caller gives none: every *.yaml in a profiles/ directory
    beside or holding one of paths (dlmap's spec/profiles/ for a spec read from spec/)."""
    found = []
    for path in paths:
        directory = os.path.dirname(os.path.abspath(path))
        for candidate in (os.path.join(directory, "profiles"), directory):
            if os.path.basename(candidate) == "profiles" and os.path.isdir(candidate):
                found += [os.path.join(candidate, f) for f in sorted(os.listdir(candidate)) if f.endswith(".yaml")]
    return list(dict.fromkeys(found))


def read(paths, base_profiles=None):
    """The merged spec: {section: [entries]} for list sections, {section: mapping} for abi, lookup, profile.

    A profile's `extends: <name>` is resolved by codegen/profile_extends.py (the generator's own merge rule) among
    base_profiles (files), or shipped_profiles(paths) when None; the profile read is the merged one."""
    merged = {section: [] for section in IDENTITY}
    for path in paths:
        data = _load(path)
        for section, body in data.items():
            if section == "overrides":
                for name, items in body.items():
                    key = IDENTITY[name]
                    for override in items:
                        entry = next(e for e in merged[name] if e[key] == override[key])
                        entry.update(override)
            elif section in MAPPINGS:
                merged[section] = body
            else:
                merged[section].extend(body)
    # A device type may name its platform by an alias (under the platform lookup's case rule): the platform's name.
    fold = (lambda n: n.lower()) if (merged.get("lookup") or {}).get("platforms") == "insensitive" else (lambda n: n)
    platform_of = {fold(n): p["name"] for p in merged["platforms"] for n in [p["name"]] + p.get("aliases", [])}
    for d in merged["device_types"]:
        d["platform"] = platform_of.get(fold(d["platform"]), d["platform"])
        # A vendor's own type (`introduced: vendor`) counts as introduced in the oldest listed version, as the generator
        # has it (no version refuses it); `vendor: True` marks it.
        if d.get("introduced") == "vendor":
            d["introduced"] = min((v["version"] for v in merged["versions"]), key=version)
            d["vendor"] = True
    profile = merged.get("profile")
    if isinstance(profile, dict) and "extends" in profile:
        bases = {}
        for path in shipped_profiles(paths) if base_profiles is None else base_profiles:
            body = _load(path).get("profile") or {}
            bases.setdefault(body.get("name"), body)
        merged["profile"] = _profile_extends().resolve(profile, bases)
    # The profile's per-error kind, text and status word replace the catalogue's (README "Profiles").
    for override in (merged.get("profile") or {}).get("errors", []):
        entry = next(e for e in merged["errors"] if e["id"] == override["id"])
        entry.update({key: override[key] for key in ("kind", "message", "status", "when") if key in override})
    # The lists whose entries are public C enumerators carry their number as `value:` (codegen/spec.py PUBLIC_VALUES,
    # exactly 0…N-1): their tables are written in value order, so a table's index is the enumerator's value.
    for section in ("platforms", "memory_kinds", "stream_conventions", "exception_kinds", "placeholders"):
        merged[section].sort(key=lambda entry: entry["value"])
    return merged


def message_template(error):
    """The text an error shows, with {placeholder} fields: the profile's status word first, when it gives one."""
    return (error["status"] + ": " if "status" in error else "") + error["message"]


def version(text):
    """'1.3' → (1, 3)."""
    major, minor = text.split(".")
    return int(major), int(minor)


def device_state(d):
    """released, main (upstream: main) or vendor (introduced: vendor)."""
    return "vendor" if d.get("vendor") else "main" if d.get("upstream") == "main" else "released"


def device_names(d):
    return [d["name"]] + d.get("spellings", []) + d.get("aliases", [])


def width_names(w):
    return ([w["name"]] if "name" in w else []) + w.get("aliases", [])


# ---- C header -------------------------------------------------------------------------------------------------

def c_string(text):
    """A C string literal: printable ASCII as is (but '?', which could start a C99 trigraph), other bytes in octal."""
    out = []
    for byte in text.encode("utf-8"):
        char = chr(byte)
        if char in '"\\':
            out.append("\\" + char)
        elif 32 <= byte < 127 and char != "?":
            out.append(char)
        else:
            out.append("\\%03o" % byte)
    return '"' + "".join(out) + '"'


def c_names(names, size):
    """A NULL-terminated initializer of `size` slots."""
    return "{" + ", ".join([c_string(n) for n in names] + ["NULL"] * (size - len(names))) + "}"


def c_version(text):
    return "{%d, %d}" % version(text)


def c_header(spec, paths):
    devices, codes = spec["device_types"], spec["dtype_codes"]
    widths = [(c, w) for c in codes for w in sorted(c["widths"], key=lambda w: w["bits"])]
    errors, placeholders = spec["errors"], spec["placeholders"]
    # Room for the longest list of names (plus the NULL) in each table.
    n_device = 1 + max(len(device_names(d)) for d in devices)
    n_width = 1 + max([len(width_names(w)) for _, w in widths] + [0])
    n_alias = 1 + max(len(p.get("aliases", [])) for p in spec["platforms"])
    n_args = 1 + max(len(e.get("args", [])) for e in errors)
    current = spec["abi"]["current"]
    out = [
        "/* Generated by tests/spec_facts/spec_facts.py from %s; do not edit. */" % " ".join(paths),
        "/* The spec's entries as test data, read with PyYAML independently of the generator's tables. */",
        "#ifndef DLMAP_TESTS_SPEC_FACTS_H_",
        "#define DLMAP_TESTS_SPEC_FACTS_H_",
        "",
        "#include <stddef.h>",
        "#include <stdint.h>",
        "",
        "typedef struct spec_facts_version { uint32_t major, minor; } spec_facts_version;",
        "",
        "/* abi.current: the version dlmap stamps, and the newest listed. */",
        "#define SPEC_FACTS_CURRENT_MAJOR %du" % version(current)[0],
        "#define SPEC_FACTS_CURRENT_MINOR %du" % version(current)[1],
        "#define SPEC_FACTS_CURRENT_TEXT %s" % c_string(current),
        "#define SPEC_FACTS_PROFILE %s" % c_string(spec["profile"]["name"]),
        "",
    ]

    def table(type_name, fields, name, rows, count_macro):
        out.append("typedef struct %s {" % type_name)
        out.extend("  %s;" % f for f in fields)
        out.append("} %s;" % type_name)
        out.append("#define %s %d" % (count_macro, len(rows)))
        out.append("static const %s %s[] = {" % (type_name, name))
        out.extend("    {%s}," % ", ".join(row) for row in rows)
        out.append("};")
        out.append("")

    table("spec_facts_version_entry", ["spec_facts_version version", "const char *text", "const char *structure"],
          "spec_facts_versions",
          [[c_version(v["version"]), c_string(v["version"]), c_string(v["struct"])] for v in spec["versions"]],
          "SPEC_FACTS_VERSION_COUNT")
    table("spec_facts_device_type",
          ["int32_t value", "const char *name", "const char *names[%d] /* name, spellings, aliases; NULL-ended */"
           % n_device, "spec_facts_version introduced", "const char *platform", "const char *memory",
           "const char *stream", "int released /* 0: upstream main only, or a vendor's own */",
           "int vendor /* introduced: vendor */"],
          "spec_facts_device_types",
          [[str(d["value"]), c_string(d["name"]), c_names(device_names(d), n_device),
            c_version(d["introduced"]), c_string(d["platform"]), c_string(d["memory"]),
            c_string(d["stream"]), "1" if device_state(d) == "released" else "0",
            "1" if device_state(d) == "vendor" else "0"] for d in devices],
          "SPEC_FACTS_DEVICE_TYPE_COUNT")
    table("spec_facts_dtype_code",
          ["int code", "const char *name", "spec_facts_version introduced", "int vector_lanes", "int width_count",
           "int released /* 0: upstream main only */"],
          "spec_facts_dtype_codes",
          [[str(c["value"]), c_string(c["name"]), c_version(c["introduced"]), "1" if c["lanes"] == "vector" else "0",
            str(len(c["widths"])), "0" if c.get("upstream") == "main" else "1"] for c in codes],
          "SPEC_FACTS_DTYPE_CODE_COUNT")
    table("spec_facts_dtype_width",
          ["int code", "int bits", "const char *names[%d] /* name, aliases; NULL-ended */" % n_width,
           "spec_facts_version introduced"],
          "spec_facts_dtype_widths",
          [[str(c["value"]), str(w["bits"]), c_names(width_names(w), n_width),
            c_version(w.get("introduced", c["introduced"]))] for c, w in widths],
          "SPEC_FACTS_DTYPE_WIDTH_COUNT")
    table("spec_facts_platform",
          ["const char *name", "const char *backend", "const char *aliases[%d] /* NULL-ended */" % n_alias],
          "spec_facts_platforms",
          [[c_string(p["name"]), c_string(p["backend"]), c_names(p.get("aliases", []), n_alias)]
           for p in spec["platforms"]],
          "SPEC_FACTS_PLATFORM_COUNT")
    table("spec_facts_memory_kind", ["const char *name", "int host_accessible"], "spec_facts_memory_kinds",
          [[c_string(m["name"]), "1" if m["host_accessible"] else "0"] for m in spec["memory_kinds"]],
          "SPEC_FACTS_MEMORY_KIND_COUNT")
    table("spec_facts_stream_convention",
          ["const char *name", "const char *absent /* what stream=None means */", "const char *rule"],
          "spec_facts_stream_conventions",
          [[c_string(s["name"]), c_string(s["absent"]), c_string(s["rule"])] for s in spec["stream_conventions"]],
          "SPEC_FACTS_STREAM_CONVENTION_COUNT")
    table("spec_facts_flag", ["const char *name", "int bit", "spec_facts_version introduced"], "spec_facts_flags",
          [[c_string(f["name"]), str(f["bit"]), c_version(f["introduced"])] for f in spec["flags"]],
          "SPEC_FACTS_FLAG_COUNT")
    table("spec_facts_exception_kind", ["const char *name"], "spec_facts_exception_kinds",
          [[c_string(k["name"])] for k in spec["exception_kinds"]], "SPEC_FACTS_EXCEPTION_KIND_COUNT")
    table("spec_facts_placeholder", ["const char *name", "const char *type"], "spec_facts_placeholders",
          [[c_string(p["name"]), c_string(p["type"])] for p in placeholders], "SPEC_FACTS_PLACEHOLDER_COUNT")
    table("spec_facts_error",
          ["const char *id", "int code", "const char *kind", "const char *message /* the profile's template */",
           "const char *args[%d] /* NULL-ended */" % n_args,
           "const char *when /* the profile's, else the catalogue's */"],
          "spec_facts_errors",
          [[c_string(e["id"]), str(e["code"]), c_string(e["kind"]), c_string(message_template(e)),
            c_names(e.get("args", []), n_args), c_string(e.get("when", ""))] for e in errors],
          "SPEC_FACTS_ERROR_COUNT")
    out.append("#endif  /* DLMAP_TESTS_SPEC_FACTS_H_ */")
    return "\n".join(out) + "\n"


# ---- shell ----------------------------------------------------------------------------------------------------

def sh(spec, paths):
    def line(d):
        return " ".join([str(d["value"]), device_state(d)] + device_names(d))
    assignments = [
        ("SPEC_CURRENT", spec["abi"]["current"]),
        ("SPEC_PROFILE", spec["profile"]["name"]),
        ("SPEC_PROFILE_MODELS", spec["profile"]["models"]),
        ("SPEC_DEVICE_TYPE_COUNT", str(len(spec["device_types"]))),
        ("SPEC_DTYPE_CODE_COUNT", str(len(spec["dtype_codes"]))),
        ("SPEC_ERROR_COUNT", str(len(spec["errors"]))),
        ("SPEC_PLATFORM_COUNT", str(len(spec["platforms"]))),
        # value, "released", "main" or "vendor", then the enumerator, earlier spellings and aliases
        ("SPEC_DEVICE_TYPES", "\n".join(line(d) for d in spec["device_types"])),
    ]
    out = ["# Generated by tests/spec_facts/spec_facts.py from %s; do not edit." % " ".join(paths)]
    out += ["%s='%s'" % (name, value.replace("'", "'\\''")) for name, value in assignments]
    return "\n".join(out) + "\n"


def main(argv):
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--spec", action="append", required=True)
    parser.add_argument("--base_profile", action="append", help="a profile `extends:` may name (repeatable)")
    parser.add_argument("--c_header")
    parser.add_argument("--sh")
    args = parser.parse_args(argv)
    spec = read(args.spec, args.base_profile)
    for path, emit in ((args.c_header, c_header), (args.sh, sh)):
        if path:
            with open(path, "w", encoding="utf-8") as handle:
                handle.write(emit(spec, args.spec))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
