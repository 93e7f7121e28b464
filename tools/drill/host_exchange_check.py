# dlmap CI drill — end-to-end host exchange of the named device types through the `dlmap` Python module on the
# PYTHONPATH: an array allocated on each type is filled through the buffer protocol, exported with __dlpack__ and
# imported back with dlmap.from_dlpack (the profile decides how the consumer asks), and a host array is exported to
# the type with dl_device. The suite runs it on kDLCPU; tools/drill/drill.sh adds the device type variant f makes
# exchangeable.
# usage: host_exchange_check.py NAME...   (device type names as dlmap.empty's device= takes them)
import struct
import sys

import dlmap

SHAPE = (2, 3)


def fill(array):
    flat = memoryview(array).cast("B")
    for i in range(SHAPE[0] * SHAPE[1]):
        struct.pack_into("f", flat, 4 * i, 0.5 + i)


def values(array):
    return list(memoryview(array).cast("B").cast("f"))


class Exported:
    """A producer whose __dlpack__ is the host array's, exported to `device` with dl_device."""

    def __init__(self, array, device):
        self.array, self.device = array, device

    def __dlpack__(self, **kwargs):
        kwargs.pop("dl_device", None)
        return self.array.__dlpack__(dl_device=self.device, **kwargs)

    def __dlpack_device__(self):
        return self.device


def check(name):
    """Returns the list of failures for one device type."""
    problems = []
    a = dlmap.empty(SHAPE, "float32", device=name)
    fill(a)
    device = a.__dlpack_device__()
    b = dlmap.from_dlpack(a)
    if (b.device, b.shape, values(b)) != (device, SHAPE, values(a)):
        problems.append("from_dlpack gave %r %r %r, expected %r %r %r"
                        % (b.device, b.shape, values(b), device, SHAPE, values(a)))
    host = dlmap.empty(SHAPE, "float32")
    fill(host)
    c = dlmap.from_dlpack(Exported(host, device))
    if (c.device, values(c)) != (device, values(host)):
        problems.append("__dlpack__(dl_device=%r) gave %r %r" % (device, c.device, values(c)))
    return device, problems


def main(names):
    if not names:
        sys.exit("usage: host_exchange_check.py DEVICE_TYPE_NAME...")
    failed = False
    for name in names:
        device, problems = check(name)
        for problem in problems:
            print("FAIL %s: %s" % (name, problem))
        if not problems:
            print("PASS %s %r: exported and imported through the Python module under profile %s"
                  % (name, device, dlmap.profile()))
        failed = failed or bool(problems)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
