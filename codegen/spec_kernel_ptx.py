# dlmap codegen — load and validate runtime.kernels.ptx: the committed PTX's floor and what each driver JIT-compiles.
"""platforms[i].runtime.kernels.ptx (schema: the top of spec/platforms.yaml).

`ptx: false` says the platform loads no PTX; a mapping says the committed PTX is tried first and states its floor
(the highest ISA it may declare, the GPUs it must assemble for) and, per CUDA release, the highest PTX ISA that
release's driver JIT-compiles, with the entry point that asks the driver for its release. spec.py calls load() and
keeps the result on RuntimeKernels.ptx_floor; emit.py writes it as rows; the C side compares, it never computes.
"""

import re
from dataclasses import dataclass
from typing import List

_VERSION = re.compile(r"^([0-9]+)\.([0-9])$")
_TARGET = re.compile(r"^sm_([0-9]+)$")
_IDENT = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


@dataclass
class DriverIsa:
    """One CUDA release: the value its driver's driver_version entry point reports, and the PTX ISA it JIT-compiles."""
    release: str         # "12.4"
    driver_version: int  # 12040
    isa: str             # "8.4"


@dataclass
class KernelPtx:
    """The committed PTX's floor: the most it may declare, and the drivers that load it."""
    isa: str                       # "7.0": the highest .version the artifact may declare
    targets: List[str]             # ascending; targets[0] is the artifact's .target
    driver_version: str            # C symbol: f(int *version)
    driver_isa: List[DriverIsa]    # oldest first


def isa_tenths(text):
    """"8.4" → 84: PTX ISA and release numbers compare as integers of tenths (the minor is one digit)."""
    major, minor = _VERSION.match(text).groups()
    return int(major) * 10 + int(minor)


def target_number(target):
    """"sm_120" → 120."""
    return int(_TARGET.match(target).group(1))


def _version(where, entry, key):
    value = entry.get(key)
    if not isinstance(value, str) or not _VERSION.match(value):
        where.fail("key '%s' must be a version string \"M.N\" (quoted), got %r" % (key, value))
    return value


def _targets(where, body):
    targets = body["targets"]
    if not isinstance(targets, list) or not targets or \
            any(not isinstance(t, str) or not _TARGET.match(t) for t in targets):
        where.fail("key 'targets' must be a non-empty list of sm_XY names, got %r" % (targets,))
    numbers = [target_number(t) for t in targets]
    if numbers != sorted(set(numbers)):
        where.fail("key 'targets': %s is not ascending without repeats; the first is the artifact's .target"
                   % ", ".join(targets))
    return targets


def _driver_isa(where, rows, make_where):
    if not isinstance(rows, list) or not rows:
        where.fail("key 'driver_isa' must be a non-empty list of {release, driver_version, isa}")
    table: List[DriverIsa] = []
    for j, row in enumerate(rows):
        rwhere = make_where(j)
        if not isinstance(row, dict) or set(row) != {"release", "driver_version", "isa"}:
            rwhere.fail("must be a mapping with exactly the keys release, driver_version, isa, got %r" % (row,))
        value = row["driver_version"]
        if type(value) is not int or not 0 < value < 2**31:
            rwhere.fail("key 'driver_version' must be a positive integer, got %r" % (value,))
        entry = DriverIsa(_version(rwhere, row, "release"), value, _version(rwhere, row, "isa"))
        if table and (value <= table[-1].driver_version or isa_tenths(entry.release) <= isa_tenths(table[-1].release)):
            rwhere.fail("release %s (%d) does not follow %s (%d); list releases oldest first"
                        % (entry.release, value, table[-1].release, table[-1].driver_version))
        if table and isa_tenths(entry.isa) < isa_tenths(table[-1].isa):
            rwhere.fail("isa %s is below %s's %s: a newer driver JIT-compiles every ISA an older one does"
                        % (entry.isa, table[-1].release, table[-1].isa))
        table.append(entry)
    return table


def load(where, body, sub_where):
    """The `ptx` key's value: None for false, else a KernelPtx. sub_where(section, index) names a place below it."""
    if body is False:
        return None
    if not isinstance(body, dict) or set(body) != {"isa", "targets", "driver_version", "driver_isa"}:
        where.fail("key 'ptx' must be false or a mapping with exactly the keys isa, targets, driver_version, "
                   "driver_isa (the PTX's floor), got %r" % (body if not isinstance(body, dict) else sorted(body),))
    sub = sub_where("ptx", None)
    isa = _version(sub, body, "isa")
    targets = _targets(sub, body)
    symbol = body["driver_version"]
    if not isinstance(symbol, str) or not _IDENT.match(symbol):
        sub.fail("key 'driver_version' must be a C symbol, got %r" % (symbol,))
    table = _driver_isa(sub, body["driver_isa"], lambda j: sub_where("ptx.driver_isa", j))
    if isa_tenths(table[-1].isa) < isa_tenths(isa):
        sub.fail("key 'isa': no release in driver_isa JIT-compiles ISA %s (the newest, %s, stops at %s)"
                 % (isa, table[-1].release, table[-1].isa))
    return KernelPtx(isa, targets, symbol, table)

