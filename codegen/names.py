# dlmap codegen — names: how a spec name becomes a C name; the one place both the loader and the emitters ask.
"""Naming rules shared by spec.py (which checks that generated C names are unique and not reserved) and the emitters
(which write them). A rule written twice drifts: the loader would accept a spec whose C names collide.
"""

import re


def upper_snake(name):
    """BufferError → BUFFER_ERROR, NotImplementedError → NOT_IMPLEMENTED_ERROR, cuda → CUDA."""
    return re.sub(r"(?<=[a-z0-9])(?=[A-Z])", "_", name).upper()


def enumerator(name):
    """The C enumerator suffix of a DLPack name: kDLCUDAHost → CUDAHOST, kDLFloat8_e4m3fn → FLOAT8_E4M3FN."""
    stem = name[3:] if name.startswith("kDL") else name
    return stem.upper()


def status_enumerator(error_id):
    """The dlmap_status enumerator of an error id: max_version_too_old → DLMAP_ERR_MAX_VERSION_TOO_OLD."""
    return "DLMAP_ERR_" + error_id.upper()
