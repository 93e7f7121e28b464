# dlmap conformance checker — the GPU step of gpu/check.sh: checks CUDA arrays of JAX, PyTorch and CuPy as producers
# and their from_dlpack as consumers (whichever import and see a CUDA device; the others are skipped with the reason),
# and dlmap's own CUDA arrays under its profile. Writes each table to DIR and prints one line per check in
# gpu/check.sh's format: a peer's table is INFO (its conformance is reported, not required); dlmap's is PASS or FAIL.
# usage: python3 -m dlmap.check.gpu_peers DIR       exit 0 unless a dlmap row fails
import os
import sys

os.environ.setdefault("XLA_PYTHON_CLIENT_PREALLOCATE", "false")  # JAX shares the GPU with PyTorch and CuPy here

from .consumer import consumer  # noqa: E402  (after the environment JAX reads at import)
from .producer import producer  # noqa: E402


def line(status, text):
    print("%-4s  %s" % (status, text), flush=True)


# Each peer's maker returns (its CUDA array, its from_dlpack); the producer check makes the array again in its child
# interpreter from "dlmap.check.gpu_peers:<maker>()[0]".
def _jax():
    import jax
    import jax.numpy as jnp
    gpus = [d for d in jax.devices() if d.platform == "gpu"]
    if not gpus:
        raise RuntimeError("JAX sees no GPU (backend %s)" % jax.default_backend())
    return jax.device_put(jnp.arange(6.0), gpus[0]), "jax.dlpack:from_dlpack"


def _torch():
    import torch
    if not torch.cuda.is_available():
        raise RuntimeError("torch.cuda.is_available() is False")
    return torch.arange(6.0, device="cuda"), "torch:from_dlpack"


def _cupy():
    import cupy
    return cupy.arange(6.0), "cupy:from_dlpack"


PEERS = (("jax", _jax), ("torch", _torch), ("cupy", _cupy))


def _write(directory, name, report):
    with open(os.path.join(directory, name), "w", encoding="utf-8") as handle:
        handle.write(report.markdown())


def main(directory):
    os.makedirs(directory, exist_ok=True)
    status = 0
    for name, make in PEERS:
        try:
            array, consume = make()
        except Exception as error:  # not installed, no GPU build, no device: say why and go on
            line("SKIP", "conformance %s: %s: %s" % (name, type(error).__name__, str(error).splitlines()[0][:160]
                                                      if str(error) else ""))
            continue
        del array  # the producer check makes its own, in a child interpreter
        report = producer("dlmap.check.gpu_peers:%s()[0]" % make.__name__, subject="%s CUDA arange(6.0)" % name)
        _write(directory, "%s_cuda_producer.md" % name, report)
        line("INFO", "conformance %s producer (CUDA): %d rows pass, %d fail (%s)" % (
            (name,) + report.counts("standard") + (os.path.join(directory, "%s_cuda_producer.md" % name),)))
        report = consumer(consume)
        _write(directory, "%s_consumer.md" % name, report)
        line("INFO", "conformance %s consumer: %d rows pass, %d fail" % ((name,) + report.counts("standard")))
    import dlmap
    target = "dlmap:empty((2, 3), 'float64', device=(2, 0))"
    try:
        dlmap.empty((2, 3), "float64", device=(2, 0))  # whether this build and machine can allocate there
    except Exception as error:
        line("SKIP", "conformance dlmap (CUDA): cannot allocate on kDLCUDA: %s" % type(error).__name__)
        return status
    column = "%s profile" % dlmap.profile()
    report = producer(target, profile=dlmap.profile(), subject="dlmap CUDA empty((2, 3), 'float64')")
    _write(directory, "dlmap_%s_cuda_producer.md" % dlmap.profile(), report)
    passed, failed = report.counts(column)
    line("PASS" if not failed else "FAIL", "conformance dlmap producer (CUDA) under its %s: %d rows pass, %d fail"
         % (column, passed, failed))
    return 1 if failed else status


if __name__ == "__main__":
    sys.exit(main(sys.argv[1]))
