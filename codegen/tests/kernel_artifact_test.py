# dlmap codegen tests — kernel_artifact_test: the PTX the library embeds against the spec's floor (issue 55).
"""The strided-copy kernels' PTX, as the build embeds it (kKernelPtx of the generated strided_copy_image.inc) and as
committed, checked against spec/platforms.yaml's runtime.kernels.ptx read with plain PyYAML: its .version and .target
never above the floor, the entry points strided_copy_params.h lists, ptxas assembling it for every target the spec
lists (where ptxas is installed; elsewhere SKIP with the reason), and the fake runtime's fixtures stating the spec's
floor and table.

Under Bazel:  bazel test //codegen/tests:kernel_artifact_test
"""

import glob
import os
import re
import shutil
import subprocess
import tempfile
import unittest

import yaml

ROOT = os.getcwd()  # run_unittest.sh starts in dlmap's root
KERNELS = os.path.join(ROOT, "src", "backends", "kernels")
FIXTURES = ("tests/gpu/fake_cuda.yaml", "tests/gpu/fake_missing_kernels.yaml")
# Pinned by issue 55: every CUDA 12 and 13 driver (ISA 8.0 and up) must load the kernels, on these GPUs at least.
MOST_ISA = (8, 0)
REQUIRED_TARGETS = ("sm_75", "sm_90", "sm_120")


def entry_points():
    """The kernels strided_copy_params.h lists (DLMAP_KERNEL_SHAPES × DLMAP_KERNEL_UNITS), which the source defines and
    the backend asks the module API for: dlmap_<shape>_<unit>, sorted."""
    with open(os.path.join(KERNELS, "strided_copy_params.h"), encoding="utf-8") as f:
        text = f.read()

    def listed(macro, item):
        body = re.search(r"#define %s\(X, \.\.\.\)((?:.*\\\n)*.*)" % macro, text).group(1)
        return re.findall(item, body)
    shapes = listed("DLMAP_KERNEL_SHAPES", r"X\([A-Z0-9_]+,\s*(\w+),")
    units = listed("DLMAP_KERNEL_UNITS", r"X\((\w+),")
    return sorted("dlmap_%s_%s" % (shape, unit) for shape in shapes for unit in units)


ENTRY_POINTS = entry_points()


def version(text):
    major, minor = text.split(".")
    return int(major), int(minor)


def spec_ptx():
    """The ptx mappings of spec/platforms.yaml's kernels, by platform."""
    with open(os.path.join(ROOT, "spec", "platforms.yaml"), encoding="utf-8") as f:
        platforms = yaml.safe_load(f)["platforms"]
    return {p["name"]: p["runtime"]["kernels"]["ptx"] for p in platforms
            if isinstance(((p.get("runtime") or {}).get("kernels") or {}).get("ptx"), dict)}


def embedded_ptx():
    """kKernelPtx's bytes (less the NUL) of each generated image in the runfiles: one per library built here."""
    images = sorted(glob.glob(os.path.join(ROOT, "src", "*_gen", "src", "generated", "strided_copy_image.inc")))
    found = []
    for path in images:
        with open(path) as f:
            text = f.read()
        body = re.search(r"kKernelPtx\[\d+\] = \{(.*?)\};", text, re.S).group(1)
        found.append((path, bytes(int(b, 16) for b in re.findall(r"0x([0-9a-f]{2})", body))[:-1]))
    return found


def header(ptx):
    """(.version as (major, minor), .target's number) of a PTX text."""
    text = ptx.decode()
    isa = re.search(r"^\.version (\d+\.\d+)$", text, re.M).group(1)
    target = re.search(r"^\.target sm_(\d+)$", text, re.M).group(1)
    return version(isa), int(target)


def find_ptxas():
    for candidate in (shutil.which("ptxas"), "/usr/local/cuda/bin/ptxas", "/usr/lib/nvidia-cuda-toolkit/bin/ptxas"):
        if candidate and os.access(candidate, os.X_OK):
            return candidate
    return None


class KernelArtifact(unittest.TestCase):
    def setUp(self):
        self.floors = spec_ptx()
        self.assertTrue(self.floors, "spec/platforms.yaml names no platform whose kernels load PTX")
        self.images = embedded_ptx()
        self.assertTrue(self.images, "no generated strided_copy_image.inc in the runfiles")

    def test_the_spec_floor_serves_every_cuda_12_and_13_driver(self):
        for name, ptx in self.floors.items():
            self.assertLessEqual(version(ptx["isa"]), MOST_ISA, name)
            for target in REQUIRED_TARGETS:
                self.assertIn(target, ptx["targets"], name)

    def test_embedded_ptx_is_the_committed_one(self):
        with open(os.path.join(KERNELS, "strided_copy.ptx"), "rb") as f:
            committed = f.read()
        for path, ptx in self.images:
            self.assertEqual(ptx, committed, path)

    def test_no_ptx_declares_more_than_the_floor(self):
        for name, floor in self.floors.items():
            lowest = int(floor["targets"][0][len("sm_"):])
            for path, ptx in self.images:
                isa, target = header(ptx)
                self.assertLessEqual(isa, version(floor["isa"]), "%s: .version above %s's floor" % (path, name))
                self.assertLessEqual(target, lowest, "%s: .target above %s's lowest" % (path, name))

    def test_every_kernel_is_an_entry_point(self):
        for path, ptx in self.images:
            entries = sorted(re.findall(r"^\.visible \.entry (\w+)\(", ptx.decode(), re.M))
            self.assertEqual(entries, ENTRY_POINTS, path)

    def test_the_fixtures_state_the_spec_floor(self):
        want = dict(self.floors["cuda"], driver_version=None)
        for fixture in FIXTURES:
            with open(os.path.join(ROOT, fixture), encoding="utf-8") as f:
                overlay = yaml.safe_load(f)
            ptx = overlay["overrides"]["platforms"][0]["runtime"]["kernels"]["ptx"]
            self.assertEqual(dict(ptx, driver_version=None), want, fixture)

    def test_ptxas_assembles_it_for_every_target(self):
        ptxas = find_ptxas()
        if ptxas is None:
            print("SKIP: no ptxas here (PATH, /usr/local/cuda/bin): the PTX was not assembled")
            self.skipTest("no ptxas (PATH, /usr/local/cuda/bin)")
        targets = sorted({t for floor in self.floors.values() for t in floor["targets"]}, key=lambda t: int(t[3:]))
        results = []
        with tempfile.TemporaryDirectory() as tmp:
            for path, ptx in self.images[:1]:  # every image embeds the committed bytes (checked above)
                source = os.path.join(tmp, "strided_copy.ptx")
                with open(source, "wb") as f:
                    f.write(ptx)
                for target in targets:
                    run = subprocess.run([ptxas, "-arch=" + target, "-o", os.path.join(tmp, target + ".cubin"), source],
                                         stdout=subprocess.PIPE, stderr=subprocess.STDOUT, universal_newlines=True)
                    results.append((target, run.returncode, run.stdout.strip()))
        for target, rc, out in results:
            print("ptxas -arch=%s: %s" % (target, "ok" if rc == 0 else "FAILED: " + out))
        self.assertEqual([t for t, rc, _ in results if rc != 0], [])


if __name__ == "__main__":
    unittest.main()
