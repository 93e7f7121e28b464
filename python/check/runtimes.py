# dlmap conformance checker — a platform's vendor runtime inside the checker's child processes, found by the spec's own
# library names and entry points (platforms.yaml runtime.libraries and runtime.symbols, handed over by the parent):
# whether the process has loaded one already (the producer check's device-claim row is judged only then, as dlmap's
# import checks claims only then), and a runtime that starts with a device, for the consumer check's crafted producers
# that lie about device memory. Plain ctypes: imported by calls.py and crafted.py, which run without the checker's
# other modules.
import ctypes
import os


def loaded(libraries):
    """The first of `libraries` (sonames) this process has loaded already, else None; loads nothing (RTLD_NOLOAD)."""
    for name in libraries:
        try:
            ctypes.CDLL(name, mode=os.RTLD_NOLOAD)
            return name
        except OSError:
            continue
    return None


def loaded_platforms(runtimes):
    """{platform: soname} of the platforms in `runtimes` ({platform: spec runtime entry}) whose runtime this process
    has loaded."""
    found = {}
    for platform, runtime in sorted(runtimes.items()):
        name = loaded(runtime["libraries"])
        if name is not None:
            found[platform] = name
    return found


class Runtime:
    """A started runtime: its library and device count, and the spec's entry points that allocate device memory."""

    def __init__(self, library, symbols, devices):
        self.library, self.symbols, self.devices = library, symbols, devices

    def call(self, op, *args):
        """The spec's `op` entry point called with args; its status (0: success)."""
        function = getattr(self.library, self.symbols[op])
        function.restype = ctypes.c_int
        return function(*args)

    def device_memory(self, nbytes, device=0):
        """nbytes of device memory on `device` (the spec's set_device, then malloc); its address. Never freed: it lives
        as long as the child process that lies about it. Raises RuntimeError when the runtime refuses."""
        status = self.call("set_device", ctypes.c_int(device))
        pointer = ctypes.c_void_p()
        if status == 0:
            status = self.call("malloc", ctypes.byref(pointer), ctypes.c_size_t(max(nbytes, 1)))
        if status != 0 or not pointer.value:
            raise RuntimeError("the runtime's %s / %s returned %d" % (self.symbols["set_device"],
                                                                     self.symbols["malloc"], status))
        return pointer.value


def start(runtime):
    """The first of the spec's libraries for a runtime entry that loads and reports a device, the ones this process
    loaded already first (the order dlmap's backend tries them in); None when none does (no library, no driver, no
    device)."""
    names = runtime["libraries"]
    ordered = [n for n in names if loaded([n])] + [n for n in names if not loaded([n])]
    for name in ordered:
        try:
            library = ctypes.CDLL(name)
        except OSError:
            continue
        count = ctypes.c_int(0)
        found = Runtime(library, runtime["symbols"], 0)
        try:
            status = found.call("device_count", ctypes.byref(count))
        except AttributeError:  # a library of that name without the spec's entry point
            continue
        if status == 0 and count.value > 0:
            found.devices = count.value
            return found
    return None
