# dlmap Python binding — the six rows NumPy 2.5 changed (issue 50), on the module of either NumPy profile: `numpy`
# (NumPy 2.5: ValueError for a stream, BufferError for import refusals) and `numpy_2_4` (NumPy 2.4: RuntimeError for
# all six); the texts are the same. The kinds are pinned by hand per release, as NumPy raises them (contract texts);
# the module says which profile it is, and that profile's `models:` range must be the release the kinds are pinned for.
import array
import unittest

import dlmap
from testing import DlmapTestCase, Producer

# release range → the kind of each row (N-E7 the stream, N-I12 device, N-I13 lanes, N-I14 dtype twice, N-I11 ndim)
KINDS = {
    "numpy >= 2.5": {"stream": ValueError, "import": BufferError},
    "numpy >= 2.4, < 2.5": {"stream": RuntimeError, "import": RuntimeError},
}


def producer(dtype=(2, 32, 1), **kwargs):
    return Producer(array.array("f", range(6)), dtype, (6,), **kwargs)


class SixRows(DlmapTestCase):

    def setUp(self):
        super().setUp()
        self.assertIn(dlmap.profile(), ("numpy", "numpy_2_4"))
        self.kinds = KINDS[dlmap.profile_models()]

    def test_stream(self):
        """N-E7: x.__dlpack__(stream=1), and a stream that is no int."""
        a = dlmap.empty(3, "float32")
        for stream in (1, "0"):
            self.assertRaisesExactly(self.kinds["stream"], "NumPy only supports stream=None.", a.__dlpack__,
                                     stream=stream)

    def test_import_refusals(self):
        """N-I12 a kDLCUDA tensor, N-I13 lanes 4, N-I14 bfloat16 and int4, N-I11 ndim 65."""
        rows = [(producer(device=(2, 0)), "Unsupported device in DLTensor."),
                (producer(dtype=(2, 32, 4)), "Unsupported lanes in DLTensor dtype."),
                (producer(dtype=(4, 16, 1)), "Unsupported dtype in DLTensor."),
                (producer(dtype=(0, 4, 1)), "Unsupported dtype in DLTensor."),
                (producer(ndim=65), "maxdims of DLPack tensor is higher than the supported maxdims.")]
        for x, text in rows:
            with self.subTest(text=text, dtype=x.dtype, device=x.device):
                self.assertRaisesExactly(self.kinds["import"], text, dlmap.from_dlpack, x)


if __name__ == "__main__":
    unittest.main()
