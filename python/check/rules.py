# dlmap conformance checker — the rules a DLPack exchange is judged by, read at run time from the spec's YAML (the
# files shipped beside this module, read by tests/spec_facts/spec_facts.py) and one profile: capsule names per struct,
# version ranges, flag bits, dtype codes and widths, device types, stream conventions, error kinds.
# Nothing here restates a table the spec holds; the checker's own logic only says which spec rule applies when.
import inspect
import os

import yaml

from . import spec_facts

FACT_FILES = ("versions.yaml", "platforms.yaml", "devices.yaml", "dtypes.yaml", "errors.yaml")
# The profile that encodes the Array API standard's protocol; the "standard" verdicts are judged by it.
STANDARD_PROFILE = "array_api"
# A request's stream that is a real stream the check made in the producer's process (streams.py), not an integer the
# checker names: its handle exists only there.
MADE_STREAM = "a stream the check made"
# The spec the package's module was built from, file by file in the generator's order (check_package.bzl).
BUILT_DIR = "built"
BUILT_LIST = "spec.txt"


def spec_dir():
    """Where the spec's YAML lives: $DLMAP_CHECK_SPEC, else the copy shipped in this package."""
    return os.environ.get("DLMAP_CHECK_SPEC") or os.path.join(os.path.dirname(os.path.abspath(__file__)), "spec")


def version(text):
    return spec_facts.version(text)


def show_version(v):
    return "(%d, %d)" % tuple(v)


class UnknownProfile(ValueError):
    """A profile name that is neither the built spec's nor a shipped one; the text lists the available names."""


# libyaml's parser where PyYAML has it (Debian's python3-yaml does): the same safe loading, about nine times faster
# than the pure-Python one. Every checker child that imports a module building Rules() reads the whole spec.
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def _load(path):
    with open(path, encoding="utf-8") as handle:
        return yaml.load(handle, Loader=_LOADER) or {}


class Spec:
    """The YAML in a spec directory: the built spec's files (when the package has them, else dlmap's facts) and the
    profiles `--profile` may name, by their `name:`."""

    def __init__(self, directory=None):
        self.directory = directory or spec_dir()
        built = os.path.join(self.directory, BUILT_DIR)
        listing = os.path.join(built, BUILT_LIST)
        self.built_profile = None  # (name, path) of the built spec's profile
        if os.path.exists(listing):
            with open(listing, encoding="utf-8") as handle:
                self.built = [os.path.join(built, line.strip()) for line in handle if line.strip()]
        else:
            self.built = [os.path.join(self.directory, f) for f in FACT_FILES]
        self.facts = []  # the built spec without its profile (facts and overlays, in order)
        for path in self.built:
            body = _load(path).get("profile")
            if body is None:
                self.facts.append(path)
            else:
                self.built_profile = (body.get("name"), path)
        # The shipped profiles, by name: what a profile's `extends:` resolves among, and what --profile may name.
        self.shipped = {}
        profiles = os.path.join(self.directory, "profiles")
        for f in sorted(os.listdir(profiles)) if os.path.isdir(profiles) else []:
            if f.endswith(".yaml"):
                path = os.path.join(profiles, f)
                self.shipped.setdefault((_load(path).get("profile") or {}).get("name", f[:-len(".yaml")]), path)

    def names(self):
        """Every profile name --profile takes: the built spec's first, then the shipped ones."""
        names = [self.built_profile[0]] if self.built_profile else []
        return names + sorted(n for n in self.shipped if n not in names)

    def profile_path(self, profile):
        """The file of a profile by name (the built spec's own wins over a shipped one of that name)."""
        if self.built_profile and self.built_profile[0] == profile:
            return self.built_profile[1]
        if profile in self.shipped:
            return self.shipped[profile]
        raise UnknownProfile("unknown profile %r (available: %s)" % (profile, ", ".join(self.names()) or "none"))

    def read(self, profile):
        """The merged spec under `profile`: the built spec's facts and overlays with that profile's file."""
        paths = self.facts + [self.profile_path(profile)]
        if "base_profiles" in inspect.signature(spec_facts.read).parameters:  # a reader that resolves `extends:`
            return spec_facts.read(paths, base_profiles=list(self.shipped.values()))
        return spec_facts.read(paths)


def profile_names(directory=None):
    """The profile names the checker can judge by here (see Spec.names)."""
    return Spec(directory).names()


def built_profile(directory=None):
    """The name of the profile the package's module was built with, or None without a built spec."""
    found = Spec(directory).built_profile
    return found[0] if found else None


class Rules:
    """The spec's facts plus one profile, in the forms the checks ask for."""

    def __init__(self, profile=STANDARD_PROFILE, directory=None):
        spec = Spec(directory).read(profile)
        self.profile_name = spec["profile"]["name"]
        self.profile = spec["profile"]
        # Every setting of the profile schema by its YAML key, defaults filled in (codegen/profile_settings.py).
        self.settings = spec_facts.profile_settings(self.profile)
        self.versions = [(version(v["version"]), v["struct"]) for v in spec["versions"]]
        abi = spec["abi"]
        self.current = version(abi["current"])
        # struct → (first version, first version past it, capsule name, consumed capsule name)
        self.structs = {key: (version(abi[key]["introduced"]), version(abi[key]["until"]), abi[key]["capsule"],
                              abi[key]["consumed"]) for key in ("legacy", "versioned")}
        # The newest version each struct carries: what a legacy tensor is judged as under strict version gating.
        self.newest = {s: max(v for v, struct in self.versions if struct == s) for s in ("legacy", "versioned")}
        self.flags = {f["bit"]: (f["name"], version(f["introduced"])) for f in spec["flags"]}
        self.flag_bit = {f["name"]: f["bit"] for f in spec["flags"]}
        self.dtypes = {c["value"]: c for c in spec["dtype_codes"]}
        self.devices = {d["value"]: d for d in spec["device_types"]}
        self.platforms = {p["name"]: p for p in spec["platforms"]}
        self.streams = {s["name"]: s for s in spec["stream_conventions"]}
        self.errors = {e["id"]: e for e in spec["errors"]}

    # ---- structs and versions ---------------------------------------------------------------------------------

    def struct_of_capsule(self, name):
        """'legacy' / 'versioned' for an unconsumed capsule name, else None."""
        return next((s for s, (_, _, capsule, _) in self.structs.items() if capsule == name), None)

    def profile_answer(self, max_version, readonly=False):
        """What the profile's export gives a consumer's max_version: ('struct', name) or ('error', error id); for
        max_version=None from a read-only array, export.max_version.absent_read_only where the profile sets it."""
        if max_version is None:
            return ("struct", self.settings["export.max_version.absent_read_only" if readonly
                                            else "export.max_version.absent"])
        for entry in self.profile["export"]["max_version"]["ranges"]:
            if "until" not in entry or tuple(max_version) < version(entry["until"]):
                return ("error", entry["error"]) if "error" in entry else ("struct", entry["struct"])
        raise AssertionError("profile max_version ranges end without an open range")

    def too_old(self):
        """The newest listed version below the first the profile serves, with that range's error: the request the
        profile must refuse (None when it refuses none)."""
        for entry in self.profile["export"]["max_version"]["ranges"]:
            if "error" in entry:
                below = [v for v, _ in self.versions if v < version(entry["until"])]
                return (max(below), entry["error"]) if below else None
        return None

    def tensor_version(self, struct, stamped):
        """The version a tensor's values must be expressible in: a versioned tensor's own; for a legacy one the newest
        legacy version under strict gating, or None (anything the spec knows) under the profile's `known`."""
        if struct == "versioned":
            return tuple(stamped)
        return self.newest["legacy"] if self.settings["export.version_gating"] == "strict" else None

    # ---- values -----------------------------------------------------------------------------------------------
    # Whether a tensor's flags, strides, dtype and device type are spec values expressible in its version is the
    # library's judgement (dlmap._judge_tensor, src/check_tensor.c), which dlmap_check_export applies too; it reads the
    # built spec's facts, the ones these rules read (a $DLMAP_CHECK_SPEC elsewhere does not change it). What stays
    # here is what a profile decides (the struct, the version a legacy tensor is judged in, read-only and stream
    # policy): the checker judges by any shipped profile (--profile), not only the one the module was built with, so
    # that part cannot come from the module.

    def device_name(self, device_type):
        entry = self.devices.get(device_type)
        return "%s (%d)" % (entry["name"], device_type) if entry else str(device_type)

    # ---- streams ----------------------------------------------------------------------------------------------

    def stream_probes(self, device_type=None):
        """The stream values to send a producer on `device_type`.

        Host memory: every integer some convention names or that starts its handles, and one
        below every convention's range; no runtime sees a stream there, so each only tests the producer's refusal.
        Any other memory (device, pinned, managed: a GPU-class producer) only the values its own convention documents
        (spec/platforms.yaml stream_conventions `values`): such a producer hands an integer to its runtime as a stream
        handle, and an integer that names no stream can crash it. Its handle row sends a stream the check made
        (MADE_STREAM), never an invented handle."""
        if not self.runtime_class(device_type):
            values = {-2}
            for convention in self.streams.values():
                values.update(int(v) for v in (convention.get("values") or {}))
                if convention.get("handles_above") is not None:
                    values.add(convention["handles_above"] + 1)
            return sorted(values)
        convention = self.streams[self.devices[device_type]["stream"]]
        return sorted(int(v) for v in (convention.get("values") or {}))

    def runtime_class(self, device_type):
        """Whether a producer on device_type keeps its data through a vendor runtime (any memory but the host's),
        whose stream arguments are real handles."""
        entry = self.devices.get(device_type)
        return entry is not None and entry["memory"] != "host"

    def stream_no_sync(self, stream):
        """export.stream_no_sync: whether the profile accepts `stream` on every device type, as a value some stream
        convention reads as no_sync (-1)."""
        values = [(int(k), v) for c in self.streams.values() for k, v in (c.get("values") or {}).items()]
        return bool(self.settings["export.stream_no_sync"]) and (stream, "no_sync") in values

    def stream_allowed(self, device_type, stream):
        """Whether `stream` is valid for the device type's convention (None always is; MADE_STREAM, a real stream,
        wherever the convention takes handles)."""
        if stream is None:
            return True
        convention = self.streams[self.devices[device_type]["stream"]]
        above = convention.get("handles_above")
        if stream == MADE_STREAM:
            return above is not None
        meaning = {int(k): v for k, v in (convention.get("values") or {}).items()}.get(stream)
        if meaning is not None:
            return meaning != "invalid"
        # handles_from: an integer above handles_above but below it names no stream (stream_not_a_handle)
        return above is not None and stream > above and stream >= convention.get("handles_from", above + 1)

    # ---- errors -----------------------------------------------------------------------------------------------

    def kinds(self, error_ids):
        """The exception kinds this profile raises for any of the error ids."""
        return sorted({self.errors[i]["kind"] for i in error_ids})

    def other_device(self, own_type):
        """A device type to ask `dl_device` for: for host memory the first device-memory type whose platform has a
        backend, for any other memory the first host type."""
        own = self.devices.get(own_type)
        want_device = own is None or own["memory"] == "host"
        for value, entry in self.devices.items():
            platform = self.platforms.get(entry["platform"])
            served = platform is not None and platform["backend"] != "none"
            if value != own_type and served and entry["memory"] == ("device" if want_device else "host"):
                return value
        return None
