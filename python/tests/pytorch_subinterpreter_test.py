# dlmap Python binding tests — pytorch_subinterpreter_test: the pytorch profile's module (//python/pytorch), whose
# __dlpack_device__ answers with a DLDeviceType IntEnum (dlpack_device.enum), imported again in a sub-interpreter.
"""The enum is made once per process, by the first import: a second interpreter's import publishes that same enum as
its module's DLDeviceType, and that interpreter's arrays report their device with it."""

import unittest

import dlmap
import testing


class ProfileTest(unittest.TestCase):
    def test_profile(self):
        self.assertEqual(dlmap.profile(), "pytorch")


class SubInterpreterImportTest(unittest.TestCase):
    def test_second_import_publishes_the_same_enum(self):
        # in a child with a deadline: a sub-interpreter that deadlocks or crashes fails this test, not the runner
        rc, out, err = testing.run_child("""
            import ctypes, sys
            import dlmap, testing
            run, how = testing.subinterpreter_runner()
            if run is None:
                print("SKIP:", how)
                sys.exit(0)
            main_enum = dlmap.DLDeviceType
            slots = (ctypes.c_uint64 * 3)()  # what the sub-interpreter reports: enum id, device type, is an enum
            run(f'''
                import ctypes
                import dlmap
                slots = (ctypes.c_uint64 * 3).from_address({ctypes.addressof(slots)})
                device_type, _ = dlmap.empty(2).__dlpack_device__()
                slots[0] = id(dlmap.DLDeviceType)
                slots[1] = int(device_type)
                slots[2] = isinstance(device_type, dlmap.DLDeviceType)
            ''')
            print(slots[0] == id(main_enum), slots[1], slots[2])
        """, timeout=60)
        self.assertEqual(rc, 0, err[-3000:])
        if out.startswith("SKIP:"):
            self.skipTest(out.strip())
        self.assertEqual(out, f"True {testing.device_type_value('kDLCPU')} 1\n", err[-3000:])


if __name__ == "__main__":
    unittest.main()
