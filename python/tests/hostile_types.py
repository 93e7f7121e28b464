# dlmap Python binding tests — hostile producer *types* for the property test (issue 23): classes that change while
# dlmap looks them up. Both sides live here: the strategies and the property (test_case, for hostile_property_test.py)
# and the scenario a child interpreter builds and runs (run, called by hostile.py for kind "types").
"""A producer whose class dict holds str-subclass keys colliding with the names dlmap looks up (__dlpack__,
__dlpack_device__, the exchange-API attributes), whose __eq__ mutates the class (deletes a method, reassigns
__bases__ or x.__class__, plants an exchange table, replaces __getattribute__, raises) and then collects garbage and
refills the freed memory with junk; or a producer that is itself a class, whose metaclass' __getattribute__ serves
__dlpack__ and mutates things the same way while doing so. The layout decides the path dlmap takes: a plain class
(bound methods), an int subclass without instance dict whose methods are C method descriptors (dlmap's descriptor
fast path; those descriptors are not DLPack methods, so calling them raises their own TypeError), or the class
object itself (attribute lookup through the metaclass). dlmap must give a result or a clean error, and the usual
promises hold (hostile.py checks them)."""
import functools
import gc
import importlib.util
import weakref

NAMES = ["__dlpack__", "__dlpack_device__", "__dlpack_c_exchange_api__", "__c_dlpack_exchange_api__"]
ACTIONS = ["nothing", "raise", "del_dlpack", "del_device", "set_bases", "set_class", "plant_capsule", "plant_int",
           "getattribute"]
LAYOUTS = ["plain", "plain", "slots", "class_object"]
METHODS = ["fresh", "int"]  # slots layout: C method descriptors nothing else holds, or int's own


# ---- the child's side ------------------------------------------------------------------------------------------------

_spray = []
_live = [False]  # colliders act only while dlmap runs, not while the classes are being built


def _refill():
    """Junk where freed objects were: descriptor-sized bytes, and tuples (MROs) whose items point at 0x41 bytes."""
    junk = b"\x41" * 1024
    _spray.extend(b"\x41" * 40 + bytes([i % 256]) for i in range(5000))
    _spray.extend(tuple([junk] * n) for n in range(1, 8) for _ in range(30))


def _fresh_descriptor(name):
    """A C method descriptor that only its holder will reference: from a new copy of _struct (new heap types)."""
    spec = importlib.util.find_spec("_struct")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.Struct.__dict__[name]


def _collider(name, act, repeat):
    """A str subclass key whose hash is name's: a dict lookup of name compares it through __eq__, which acts."""
    armed = [True]

    class Key(str):
        def __hash__(self):
            return hash(name)

        def __eq__(self, other):
            if _live[0] and armed and str.__eq__(other, name):
                if not repeat:
                    armed.clear()
                act()
            return False

    return Key("collider_" + name)


def _act(action, hostile, cls_ref, owner_ref, x_holder, siblings, gc_after):
    """The mutation a collider or a metaclass __getattribute__ performs, on weak references (so that the class can die
    meanwhile), then optionally a collection and a refill."""
    from testing import dlmap

    def act():
        cls, owner = cls_ref(), owner_ref()
        try:
            if action == "raise":
                raise hostile.Hostile("from a colliding key's __eq__")
            if cls is not None and action in ("del_dlpack", "del_device"):
                target = owner if owner is not None else cls
                attr = "__dlpack__" if action == "del_dlpack" else "__dlpack_device__"
                for holder in type.mro(target):
                    if attr in vars(holder) and holder is not object:
                        delattr(holder, attr)
                        break
            elif cls is not None and action == "set_bases":
                cls.__bases__ = siblings["bases"]
            elif action == "set_class" and x_holder:
                x_holder[0].__class__ = siblings["class"]
            elif cls is not None and action == "plant_capsule":
                cls.__dlpack_c_exchange_api__ = dlmap.Array.__dlpack_c_exchange_api__
            elif cls is not None and action == "plant_int":
                cls.__c_dlpack_exchange_api__ = 8
            elif cls is not None and action == "getattribute":
                cls.__getattribute__ = lambda self, name: object.__getattribute__(self, name)
        except hostile.Hostile:
            raise
        except (AttributeError, TypeError):
            pass  # the mutation was refused (layout, read-only attribute): the lookup goes on regardless
        finally:
            del cls, owner
        if gc_after:
            gc.collect()
            _refill()

    return act


def build(spec, hostile):
    """The producer object a "types" scenario describes (see the module docstring), and what must outlive the call."""
    base = hostile._producer(spec["python"])
    layout = spec["layout"]
    colliders = spec["colliders"]
    x_holder, siblings = [], {}
    cls_ref = owner_ref = lambda: None  # noqa: E731 - filled in once the class exists

    def ref_cls():
        return cls_ref()

    def ref_owner():
        return owner_ref()

    def dict_with(where):
        return {_collider(c["name"], _act(c["action"], hostile, ref_cls, ref_owner, x_holder, siblings, c["gc"]),
                          c["repeat"]): 1 for c in colliders if c["where"] == where}

    if layout == "slots":
        methods = {"__slots__": ()}
        for attr, choice in (("__dlpack__", spec["dlpack"]), ("__dlpack_device__", spec["device"])):
            methods[attr] = _fresh_descriptor("pack" if attr == "__dlpack__" else "unpack") if choice == "fresh" \
                else (int.bit_length if attr == "__dlpack__" else int.as_integer_ratio)
        mid = type("Mid", (int,), dict(dict_with("base"), __slots__=()))
        siblings["bases"] = (type("Other", (int,), {"__slots__": ()}),)
        siblings["class"] = type("D", (int,), {"__slots__": ()})

        def make():  # the class is reachable only through the instance
            cls = type("C", (mid,), dict(dict_with("class"), **methods))
            return cls, cls(1)
    elif layout == "plain":
        mid = type("Mid", (base,), dict_with("base"))
        siblings["bases"] = (type("Other", (base,), {}),)
        siblings["class"] = type("D", (base,), {})

        def make():
            cls = type("C", (mid,), dict_with("class"))
            return cls, cls()
    else:  # class_object: x is a class; its metaclass serves the producer's methods through __getattribute__
        instance = base()
        meta_action = _act(spec["meta_action"], hostile, ref_cls, ref_owner, x_holder, siblings, spec["meta_gc"])

        def meta_getattribute(cls, name):
            if name in ("__dlpack__", "__dlpack_device__"):
                if _live[0]:
                    meta_action()
                return functools.partial(getattr(type(instance), name), instance)
            return type.__getattribute__(cls, name)

        meta_mid = type("MetaMid", (type,), dict_with("base"))
        siblings["bases"] = (type("MetaOther", (type,), {}),)
        siblings["class"] = type("MetaD", (type,), {})

        def make():
            meta = type("Meta", (meta_mid,), dict(dict_with("class"), __getattribute__=meta_getattribute))
            return meta, meta("Producer", (), {})
    cls, x = make()
    cls_ref = weakref.ref(cls)
    owner_ref = weakref.ref(x) if layout == "class_object" else cls_ref
    x_holder.append(x)
    del cls
    return x, (base, siblings, x_holder)


def run(spec, hostile):
    """Builds the producer, hands it to dlmap.from_dlpack and classifies the outcome: (result, array or None)."""
    from testing import dlmap
    x, keep = build(spec, hostile)
    x_holder = keep[2]
    del x
    kwargs = {k: hostile.value(v) for k, v in spec.get("kwargs", {}).items()}
    _live[0] = True
    result, out = hostile._call(dlmap.from_dlpack, x_holder[0], **kwargs)
    _live[0] = False
    if out is not None:
        result["via"] = out.via
    elif spec["layout"] == "slots" and result.get("type") == "TypeError" and result.get("dlmap_id") is None:
        result["hostile"] = True  # the descriptors' own refusal: int's methods and Struct's are no DLPack methods
    x_holder.clear()
    gc.collect()
    return result, out


# ---- the property (hostile_property_test.py) -------------------------------------------------------------------------


def test_case(run_child, settings, producers):
    """The TestCase hostile_property_test.py runs: one property over these scenarios, with issue 23's reproducers as
    explicit examples."""
    import unittest

    from hypothesis import example, given
    from hypothesis import strategies as st

    colliders = st.lists(st.fixed_dictionaries({
        "name": st.sampled_from(NAMES), "action": st.sampled_from(ACTIONS), "where": st.sampled_from(["class", "base"]),
        "gc": st.booleans(), "repeat": st.booleans()}), max_size=3)
    tensor = {"device": [1, 0], "dtype": [2, 32, 1], "shape": [4], "strides": None, "byte_offset": 0,
              "version": [1, 3], "flags": 0, "data": "buffer", "deleter": "count", "name": "right"}
    python = {"tensor": tensor, "answer": "capsule", "not_capsule": 42, "report": "truthful", "legacy_only": False,
              "struct": "as_asked"}

    class HostileTypesTest(unittest.TestCase):
        @settings
        @given(python=producers(), layout=st.sampled_from(LAYOUTS), colliders=colliders,
               dlpack=st.sampled_from(METHODS), device=st.sampled_from(METHODS),
               meta_action=st.sampled_from(ACTIONS), meta_gc=st.booleans())
        # lookup_methods: __dlpack__'s descriptor deleted (and freed) while __dlpack_device__ is looked up.
        @example(python=python, layout="slots", colliders=[{"name": "__dlpack_device__", "action": "del_dlpack",
                                                            "where": "class", "gc": True, "repeat": False}],
                 dlpack="fresh", device="int", meta_action="nothing", meta_gc=False)
        # integer_form: __bases__ reassigned (the MRO tuple freed) while the walk reads it.
        @example(python=python, layout="plain", colliders=[{"name": "__c_dlpack_exchange_api__", "action": "set_bases",
                                                            "where": "class", "gc": True, "repeat": False}],
                 dlpack="int", device="int", meta_action="nothing", meta_gc=False)
        def test_types_that_change_under_lookup(self, python, layout, colliders, dlpack, device, meta_action, meta_gc):
            result = run_child({"kind": "types", "python": python, "layout": layout, "colliders": colliders,
                                "dlpack": dlpack, "device": device, "meta_action": meta_action, "meta_gc": meta_gc})
            if layout == "plain" and not colliders:
                self.assertEqual(result["outcome"], run_child(dict(python, kind="from_dlpack", kwargs={},
                                                                   deleter_raises=False))["outcome"])

    return HostileTypesTest
