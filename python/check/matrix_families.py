# dlmap conformance checker — the matrix's value families and libraries (matrix.py, matrix_calls.py): each family is
# made by an expression per producer library, so that a failing row reproduces in one line, and handed to a consumer
# library's from_dlpack with the family's keyword arguments. A library that cannot make a family (NumPy has no
# bfloat16, PyTorch no negative strides nor read-only tensors) leaves that row "n/a" with the reason.
import ctypes
import importlib

LIBRARIES = ("numpy", "torch", "dlmap")


class NotMade(Exception):
    """The producer library cannot make this family."""


def read_only(array):
    """A NumPy array made read-only (the read-only family's producer)."""
    array.flags.writeable = False
    return array


def _dtypes():
    out = []
    for name in ("bool", "int8", "uint8", "int16", "uint16", "int32", "int64", "float16", "float32", "float64",
                 "complex64", "complex128"):
        out.append({"name": name, "numpy": "numpy.arange(6).astype(numpy.%s).reshape(2, 3)" % (
            "bool_" if name == "bool" else name)})
    for name in ("bfloat16", "float8_e4m3fn", "float8_e5m2"):  # no NumPy dtype: PyTorch makes them
        out.append({"name": name, "torch": "torch.arange(6.0).to(torch.%s).reshape(2, 3)" % name})
    # sub-byte: two float4 values packed in each byte (PyTorch 2.8 on), made by viewing bytes
    out.append({"name": "float4_e2m1fn_x2 (packed, sub-byte)",
                "torch": "torch.arange(6, dtype=torch.uint8).view(torch.float4_e2m1fn_x2).reshape(2, 3)"})
    return out


BASE = "numpy.arange(6.0).reshape(2, 3)"
FAMILIES = _dtypes() + [
    {"name": "transposed (3, 2)", "numpy": BASE + ".T"},
    {"name": "negative strides", "numpy": "numpy.arange(6.0)[::-1]"},
    {"name": "zero strides (broadcast (2, 3))", "numpy": "numpy.broadcast_to(numpy.arange(3.0), (2, 3))"},
    {"name": "read-only", "numpy": "dlmap.check.matrix_families.read_only(%s)" % BASE, "read_only": True},
    {"name": "0-d", "numpy": "numpy.array(1.5)"},
    {"name": "empty (0, 3)", "numpy": "numpy.zeros((0, 3))"},
    {"name": "from_dlpack(x, copy=True)", "numpy": BASE, "kwargs": {"copy": True}},
    {"name": "from_dlpack(x, copy=False)", "numpy": BASE, "kwargs": {"copy": False}},
    {"name": "from_dlpack(x, device=(1, 0))", "numpy": BASE, "kwargs": {"device": (1, 0)}},
]


def expression(library, family):
    """The expression that makes `family` with `library`: a NumPy or PyTorch original, or dlmap's import of it."""
    if library == "numpy":
        if "numpy" not in family:
            raise NotMade("NumPy has no %s" % family["name"])
        return family["numpy"]
    if library == "torch":
        if family.get("read_only"):
            raise NotMade("PyTorch tensors cannot be read-only")
        return family.get("torch") or "torch.from_numpy(%s)" % family["numpy"]
    return "dlmap.from_dlpack(%s)" % (family.get("numpy") or family["torch"])


def _namespace(text):
    names = {}
    for module in ("numpy", "torch", "dlmap", "dlmap.check.matrix_families"):
        if module + "." in text or module + "(" in text:
            names[module.split(".")[0]] = importlib.import_module(module.split(".")[0])
            importlib.import_module(module)
    return names


def make(library, family):
    text = expression(library, family)
    try:
        return eval(text, _namespace(text))  # the family's own expression (this module's table)
    except Exception as error:
        raise NotMade("%s raised %s: %s" % (text, type(error).__name__, str(error)[:120])) from None


def consume(library, value, kwargs):
    return importlib.import_module(library).from_dlpack(value, **kwargs)


def consumer_call(library, family):
    args = "".join(", %s=%r" % kv for kv in family.get("kwargs", {}).items())
    return "%s.from_dlpack(x%s)" % (library, args)


def writable(library, result):
    """Whether the consumer's result lets its user write the data."""
    if library == "numpy":
        return bool(result.flags.writeable)
    if library == "dlmap":
        return not result.readonly
    return True  # a PyTorch tensor is always writable


def reproduction(producer, consumer, family):
    """One line that replays the row."""
    make_text = expression(producer, family)
    modules = sorted({producer, consumer} | {m for m in LIBRARIES if m + "." in make_text})
    imports = ", ".join(modules + (["dlmap.check.matrix_families"] if "matrix_families" in make_text else []))
    return "python3 -c 'import %s; x = %s; %s'" % (imports, make_text, consumer_call(consumer, family))


def describe(library, value):
    """What an array of `library` holds, read through the library's own attributes and the checker's ctypes, not
    through DLPack: shape, dtype name, first element's address and every element's bytes in row-major order."""
    shape = [int(n) for n in value.shape]
    if library == "numpy":
        address, itemsize = value.__array_interface__["data"][0], value.itemsize
        strides, dtype = list(value.strides), value.dtype.name
    elif library == "torch":
        address, itemsize = value.data_ptr(), value.element_size()
        strides, dtype = [s * itemsize for s in value.stride()], str(value.dtype).replace("torch.", "")
    else:
        count = 1
        for n in shape:
            count *= n
        address, itemsize, dtype = value.data_ptr, (value.nbytes // count if count else 0), value.dtype
        strides = [s * itemsize for s in value.strides]
    elements, index = [], [0] * len(shape)
    count = 1
    for n in shape:
        count *= n
    for _ in range(count):
        offset = sum(i * s for i, s in zip(index, strides))
        elements.append(ctypes.string_at(address + offset, itemsize).hex())
        for axis in reversed(range(len(shape))):
            index[axis] += 1
            if index[axis] < shape[axis]:
                break
            index[axis] = 0
    return {"shape": shape, "dtype": dtype, "address": address, "elements": elements}
