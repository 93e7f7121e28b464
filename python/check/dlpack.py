# dlmap conformance checker — ctypes views of the DLPack structs and the PyCapsule calls the checker needs to read
# what a producer returned, to consume it the way a consumer does, and to build crafted capsules for consumers.
# Imported as `dlmap.check.dlpack` by the checker and as a plain `dlpack` module by crafted.py in child interpreters;
# python/tests/testing.py loads it by path: the one ctypes definition of the DLPack structs in the tree.
import ctypes


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


# The deleter is kept as a plain address so that the checker can put its own counting deleter in its place.
class DLManagedTensor(ctypes.Structure):
    _fields_ = [("dl_tensor", DLTensor), ("manager_ctx", ctypes.c_void_p), ("deleter", ctypes.c_void_p)]


class DLManagedTensorVersioned(ctypes.Structure):
    _fields_ = [
        ("version", DLPackVersion),
        ("manager_ctx", ctypes.c_void_p),
        ("deleter", ctypes.c_void_p),
        ("flags", ctypes.c_uint64),
        ("dl_tensor", DLTensor),
    ]


# Both structs' deleters take the struct's own address.
DELETER = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
CAPSULE_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)


def _pyapi(name, restype, *argtypes):
    """A private prototype for a C-API function (ctypes.pythonapi's attributes are shared with other code)."""
    return ctypes.PYFUNCTYPE(restype, *argtypes)((name, ctypes.pythonapi))


_is_capsule = _pyapi("PyCapsule_IsValid", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_get_name = _pyapi("PyCapsule_GetName", ctypes.c_char_p, ctypes.py_object)
_capsule_get_pointer = _pyapi("PyCapsule_GetPointer", ctypes.c_void_p, ctypes.py_object, ctypes.c_char_p)
_capsule_set_name = _pyapi("PyCapsule_SetName", ctypes.c_int, ctypes.py_object, ctypes.c_char_p)
_capsule_new = _pyapi("PyCapsule_New", ctypes.py_object, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p)
_capsule_raw_is_valid = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_capsule_raw_get_pointer = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))


def capsule_name(obj):
    """The capsule's name as text ('' for a NULL name), or None when obj is not a capsule."""
    if type(obj).__name__ != "PyCapsule":
        return None
    name = _capsule_get_name(obj)
    return "" if name is None else name.decode("utf-8", "replace")


def capsule_pointer(capsule, name):
    return _capsule_get_pointer(capsule, name.encode())


def rename(capsule, name):
    """Renames a capsule; the name must have static storage, so it is interned here for the process's lifetime."""
    _capsule_set_name(capsule, _static_name(name))


_NAMES = {}


def _static_name(name):
    """A C string that lives as long as the process (PyCapsule keeps the pointer, not a copy)."""
    if name not in _NAMES:
        _NAMES[name] = ctypes.create_string_buffer(name.encode())
    return ctypes.cast(_NAMES[name], ctypes.c_char_p)


def new_capsule(pointer, name, destructor):
    """A capsule over `pointer` named `name` whose destructor is the CAPSULE_DESTRUCTOR `destructor` (kept alive by
    the caller)."""
    return _capsule_new(pointer, _static_name(name), ctypes.cast(destructor, ctypes.c_void_p))


_capsule_set_context = _pyapi("PyCapsule_SetContext", ctypes.c_int, ctypes.py_object, ctypes.c_void_p)
_incref = _pyapi("Py_IncRef", None, ctypes.py_object)


def _guarded_destructor():
    """dlmap's C capsule destructor that keeps a pending exception (None where this dlmap lacks it)."""
    try:
        import dlmap
        return dlmap._guarded_capsule_destructor()
    except (ImportError, AttributeError):
        return None


def new_capsule_calling(pointer, name, callback):
    """A capsule over `pointer` named `name` whose destructor calls callback(capsule address), and what the caller
    must keep alive. A consumer may drop a capsule with its exception set; a ctypes destructor cannot run then (Python
    >= 3.12 loses the exception to a SystemError), so dlmap's C destructor keeps it around the call, as DLPack's
    reference destructor does; the capsule's context holds the callback."""
    address = _guarded_destructor()
    if address is None:
        destructor = CAPSULE_DESTRUCTOR(callback)
        return new_capsule(pointer, name, destructor), destructor
    capsule = _capsule_new(pointer, _static_name(name), address)
    _incref(callback)  # the context's reference, which the destructor releases
    _capsule_set_context(capsule, id(callback))
    return capsule, None


def raw_capsule_pointer(address, name):
    """For a capsule destructor given the capsule's address: its pointer when it still carries `name`, else None."""
    if not _capsule_raw_is_valid(address, name.encode()):
        return None
    return _capsule_raw_get_pointer(address, name.encode())


def int_array(values):
    return (ctypes.c_int64 * max(len(values), 1))(*values)


def read_ints(pointer, count):
    return [pointer[i] for i in range(count)] if pointer else None


# The C exchange API (DLPack 1.2/1.3): the table a producer type publishes, and its functions' prototypes. Functions
# that take Python objects are called with the GIL held (PYFUNCTYPE: a -1 with an exception set raises it here); the
# allocator, which a consumer may call without the GIL, is called with it released.
EXCHANGE_API_ATTRIBUTE = "__dlpack_c_exchange_api__"  # 1.3: a PyCapsule named EXCHANGE_API_CAPSULE
EXCHANGE_API_CAPSULE = "dlpack_exchange_api"
EXCHANGE_API_ATTRIBUTE_1_2 = "__c_dlpack_exchange_api__"  # 1.2: the table's address as an int


class DLPackExchangeAPIHeader(ctypes.Structure):
    _fields_ = [("version", DLPackVersion), ("prev_api", ctypes.c_void_p)]


EXCHANGE_API_FUNCTIONS = ("managed_tensor_allocator", "managed_tensor_from_py_object_no_sync",
                          "managed_tensor_to_py_object_no_sync", "dltensor_from_py_object_no_sync",
                          "current_work_stream")


class DLPackExchangeAPI(ctypes.Structure):
    _fields_ = [("header", DLPackExchangeAPIHeader)] + [(f, ctypes.c_void_p) for f in EXCHANGE_API_FUNCTIONS]


SET_ERROR = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_char_p, ctypes.c_char_p)
ALLOCATOR = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.POINTER(DLTensor), ctypes.POINTER(ctypes.c_void_p), ctypes.c_void_p,
                             SET_ERROR)
FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(ctypes.c_void_p))
TO_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.POINTER(ctypes.c_void_p))
DLTENSOR_FROM_PY_OBJECT = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.py_object, ctypes.POINTER(DLTensor))
CURRENT_WORK_STREAM = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_int32, ctypes.c_int32, ctypes.POINTER(ctypes.c_void_p))

_steal = _pyapi("Py_DecRef", None, ctypes.c_void_p)


def take_object(address):
    """The object behind a new reference a C function handed out (its address), that reference now Python's."""
    obj = ctypes.cast(ctypes.c_void_p(address), ctypes.py_object).value  # a second reference
    _steal(address)
    return obj


def new_table_capsule(address):
    """The 1.3 form of a C exchange API table: a PyCapsule named EXCHANGE_API_CAPSULE, with no destructor (the table
    lives as long as the process)."""
    return _capsule_new(address, _static_name(EXCHANGE_API_CAPSULE), None)
