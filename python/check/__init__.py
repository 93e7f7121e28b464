# dlmap conformance checker — `dlmap.check`: point it at any DLPack producer or consumer and get a row-by-row verdict
# against the rules of dlmap's spec (spec/*.yaml) and a profile (spec/profiles/*.yaml). Pure Python over ctypes; ships
# beside the `dlmap` extension, which is the package's __init__ (python/check/BUILD builds the package directory).
"""DLPack conformance checks.

    dlmap.check.producer('module:expression', profile=None, timeout=60)
                                            -> Report   makes the producer in a child interpreter, calls its __dlpack__ /
                                                         __dlpack_device__ every way the protocol allows (each call
                                                         under the deadline) and judges each capsule
    dlmap.check.consumer(fn, profile=None)  -> Report   feeds fn crafted producers, each in a child interpreter

A Report has .rows, .passed(column=None) and .markdown(). `python3 -m dlmap.check --help` is the command line.
"""
from .consumer import consumer
from .producer import producer
from .report import Report, Row

__all__ = ["producer", "consumer", "Report", "Row"]
