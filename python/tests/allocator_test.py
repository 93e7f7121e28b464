# dlmap Python binding tests — the allocator the module hands dlmap (python/allocator.c over python/block_cache.c),
# called through an extension of its own (tests/allocator_ext.c) with what the dlmap_allocator contract
# (include/dlmap/exchange.h) lets any caller ask, not only what dlmap's core asks today: blocks aligned to the
# alignment asked and at least 64 bytes, the whole size writable (AddressSanitizer checks that under --config=asan),
# NULL for a size no block can have, and release of NULL a no-op that counts nothing.
"""usage: allocator_test.py (run by run_python.sh with the extension's directory on sys.path)"""
import ctypes
import sys
import unittest

import dlmap_allocator_ext as ext

SIZE_MAX = 2 ** (8 * ctypes.sizeof(ctypes.c_size_t)) - 1


class AllocatorTest(unittest.TestCase):
    def check_block(self, size, alignment):
        live, total = ext.counts()
        address = ext.allocate(size, alignment)
        self.assertIsNotNone(address, (size, alignment))
        self.assertEqual(address % max(alignment, 64), 0, (size, alignment))
        ctypes.memset(address, 0xA5, size)
        self.assertEqual(ext.counts(), (live + 1, total + 1))
        ext.release(address)
        self.assertEqual(ext.counts(), (live, total + 1))

    def test_alignments_below_64_give_64(self):
        for alignment in (1, 2, 8, 16, 32):
            for size in (1, 64, 100, 1024):
                self.check_block(size, alignment)

    def test_alignments_above_64(self):
        for alignment in (128, 4096, 1 << 16):
            for size in (1, 64, 1000, 5000):
                self.check_block(size, alignment)

    def test_size_zero(self):
        for alignment in (16, 64, 256):
            self.check_block(0, alignment)

    def test_sizes_no_block_can_have(self):
        for size in (SIZE_MAX, SIZE_MAX - 64, SIZE_MAX - 4096):
            for alignment in (64, 4096):
                with self.subTest(size=size, alignment=alignment):
                    counts = ext.counts()
                    self.assertIsNone(ext.allocate(size, alignment))
                    self.assertEqual(ext.counts(), counts)

    def test_release_of_null(self):
        counts = ext.counts()
        ext.release(0)
        ext.block_release(0)
        self.assertEqual(ext.counts(), counts)


if __name__ == "__main__":
    unittest.main(argv=sys.argv[:1])
