# dlmap Python binding tests — the conformance checker's judges (python/conformance.c: dlmap._judge_tensor,
# dlmap._judge_version, dlmap._judge_device_type) refuse arguments they cannot turn into a DLTensor or a version, and
# pass on the library's verdict (src/check_tensor.c) for a device type that is not in the spec or not yet in the
# tensor's version. The checker only ever calls them with values it read from a producer's tensor; these are the
# values a crafted producer or a checker bug could hand over.
import re
import unittest

import dlmap
from testing import spec_yaml

NOT_A_VERSION = "version must be None or (major, minor)"
VERSION_REQUIRED = "version must be (major, minor)"
# A plain float32 CPU tensor with strides, no flags, in DLPack 1.0: _judge_tensor's arguments, which the tests vary.
GOOD = (1, (2, 32, 1), 1, False, 0, (1, 0))


def judge(**changes):
    names = ["device_type", "dtype", "ndim", "strides_null", "flags", "version"]
    args = dict(zip(names, GOOD), **changes)
    return dlmap._judge_tensor(*(args[name] for name in names))


def later_device():
    """(value, name, introduced) of a spec device type introduced after DLPack 1.0."""
    for device in spec_yaml("devices.yaml")["device_types"]:
        if device["introduced"] not in ("vendor",) and tuple(map(int, device["introduced"].split("."))) > (1, 0):
            return device["value"], device["name"], device["introduced"]
    raise AssertionError("spec/devices.yaml lists no device type after DLPack 1.0")


class JudgeTensorTest(unittest.TestCase):
    def test_a_good_tensor_has_no_problems(self):
        self.assertEqual(judge(), [])
        self.assertEqual(judge(version=None), [], "a legacy tensor (no version)")

    def test_arguments_of_the_wrong_type(self):
        with self.assertRaises(TypeError):
            judge(device_type="cpu")
        with self.assertRaises(TypeError):
            judge(dtype=(2, 32))
        with self.assertRaisesRegex(TypeError, f"^{re.escape(NOT_A_VERSION)}$"):
            judge(version=[1, 0])
        with self.assertRaises(TypeError):
            judge(version=(1, "0"))  # PyArg_ParseTuple's own refusal of the minor

    def test_a_dtype_outside_dldatatype(self):
        # DLDataType is (uint8 code, uint8 bits, uint16 lanes): each field below 0 and past its width.
        for dtype in [(-1, 32, 1), (256, 32, 1), (2, -1, 1), (2, 256, 1), (2, 32, -1), (2, 32, 65536)]:
            with self.subTest(dtype=dtype):
                with self.assertRaisesRegex(ValueError, r"^dtype \(%d, %d, %d\) does not fit DLDataType$" % dtype):
                    judge(dtype=dtype)
        self.assertEqual(judge(dtype=(255, 255, 65535), device_type=1)[0][0], "P-dtype", "the widest values fit")


class JudgeVersionTest(unittest.TestCase):
    def test_a_version_is_required(self):
        with self.assertRaisesRegex(TypeError, f"^{re.escape(VERSION_REQUIRED)}$"):
            dlmap._judge_version(None)
        with self.assertRaisesRegex(TypeError, f"^{re.escape(NOT_A_VERSION)}$"):
            dlmap._judge_version("1.0")
        with self.assertRaises(TypeError):
            dlmap._judge_version((1,))
        self.assertIsNone(dlmap._judge_version((1, 0)))


class JudgeDeviceTypeTest(unittest.TestCase):
    def test_arguments_of_the_wrong_type(self):
        with self.assertRaises(TypeError):
            dlmap._judge_device_type("kDLCPU")
        with self.assertRaisesRegex(TypeError, f"^{re.escape(NOT_A_VERSION)}$"):
            dlmap._judge_device_type(1, [1, 0])

    def test_verdicts_in_a_version(self):
        value, name, introduced = later_device()
        self.assertIsNone(dlmap._judge_device_type(1, (1, 0)))
        self.assertIsNone(dlmap._judge_device_type(value, tuple(map(int, introduced.split(".")))))
        self.assertEqual(dlmap._judge_device_type(9999, (1, 0)), "device type 9999 is not in the spec")
        major, minor = introduced.split(".")
        self.assertEqual(dlmap._judge_device_type(value, (1, 0)), f"{name} needs ({major}, {minor}), the tensor is (1, 0)")

    def test_verdicts_without_a_version(self):
        # A legacy tensor has no version: a device type counts when the spec lists it, whenever it was introduced.
        value, _, _ = later_device()
        self.assertIsNone(dlmap._judge_device_type(1))
        self.assertIsNone(dlmap._judge_device_type(value, None))
        self.assertEqual(dlmap._judge_device_type(9999), "device type 9999 is not in the spec")


if __name__ == "__main__":
    unittest.main()
