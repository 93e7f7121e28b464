# dlmap conformance checker — children_test: the child interpreters the checker runs its cases in (children.py),
# forked from a fork server (fork_server.py) or, where none can fork, started plainly, give what a fresh
# `python script.py ARGS` gives: exit status, signal, output, passed pipes, a hang stopped at its timeout, and no child
# is left behind.
import json
import os
import subprocess
import sys
import tempfile
import textwrap
import time
import unittest

from dlmap.check import children

SCRIPT = textwrap.dedent("""\
    import json, os, sys, time
    what = sys.argv[1]
    print(json.dumps({"pid": os.getpid(), "argv": sys.argv[1:], "modules": sorted(m for m in sys.modules
                      if m.startswith("children_test_"))}))
    sys.stderr.write("last line on stderr\\n")
    if what == "crash":
        import ctypes
        ctypes.string_at(0)
    elif what == "exit":
        sys.exit(3)
    elif what == "hang":
        time.sleep(600)
    elif what == "pipe":
        os.write(int(sys.argv[2]), b"through the pipe")
    """)


class ChildrenTest(unittest.TestCase):
    @classmethod
    def setUpClass(cls):
        cls.directory = tempfile.TemporaryDirectory(prefix="dlmap-children-test-")
        cls.script = os.path.join(cls.directory.name, "child.py")
        with open(cls.script, "w", encoding="utf-8") as f:
            f.write(SCRIPT)
        modules = {"children_test_plain": "X = 1\n",
                   "children_test_crashes": "import ctypes\nctypes.string_at(0)\n",
                   "children_test_threads": "import threading, time\n"
                                            "threading.Thread(target=time.sleep, args=(60,), daemon=True).start()\n"}
        for name, text in modules.items():
            with open(os.path.join(cls.directory.name, name + ".py"), "w", encoding="utf-8") as f:
                f.write(text)
        cls.env = dict(os.environ, PYTHONPATH=os.pathsep.join([cls.directory.name] + sys.path))
        if "ASAN_OPTIONS" in cls.env:  # under ASan (its runtime preloaded) a segfault stays one, as in the checker
            cls.env["ASAN_OPTIONS"] += ":handle_segv=0"

    @classmethod
    def tearDownClass(cls):
        children._close_servers()
        cls.directory.cleanup()

    def run_child(self, what, modules, timeout=60):
        return children.run(self.script, [what], self.env, timeout, modules)

    def check_the_four_endings(self, modules, forked):
        ok = self.run_child("ok", modules)
        self.assertEqual(ok.returncode, 0, ok.stderr)
        said = json.loads(ok.stdout)
        self.assertEqual(said["argv"], ["ok"])
        self.assertEqual(ok.stderr, "last line on stderr\n")
        # a forked child has the server's modules already; a plain one imported none of them
        self.assertEqual(said["modules"], ["children_test_plain"] if forked else [])
        self.assertEqual(self.run_child("crash", modules).returncode, -11)
        self.assertEqual(children.signal_name(-11), "SIGSEGV")
        self.assertEqual(self.run_child("exit", modules).returncode, 3)
        with self.assertRaises(subprocess.TimeoutExpired):
            self.run_child("hang", modules, timeout=1)
        return said["pid"]

    def test_forked_from_a_server_that_imported_the_modules(self):
        first = self.check_the_four_endings(["children_test_plain"], forked=True)
        server = children._SERVERS[(tuple(sorted(self.env.items())), os.getcwd(), ("children_test_plain",))]
        self.assertIsNotNone(server)
        self.assertNotEqual(json.loads(self.run_child("ok", ["children_test_plain"]).stdout)["pid"], first)

    def test_a_module_that_crashes_or_starts_a_thread_means_plain_children(self):
        for module in ("children_test_crashes", "children_test_threads"):
            self.check_the_four_endings([module], forked=False)
            self.assertIsNone(children._SERVERS[(tuple(sorted(self.env.items())), os.getcwd(), (module,))])

    def test_a_pipe_reaches_the_child_under_its_own_number(self):
        for modules in (["children_test_plain"], ["children_test_crashes"]):
            read, write = os.pipe()
            try:
                child = children.Child(self.script, ["pipe", {"fd": 0}], self.env, modules, pass_fds=(write,))
                os.close(write)
                self.assertEqual(child.wait(60), 0)
                self.assertEqual(os.read(read, 100), b"through the pipe")
            finally:
                os.close(read)

    def test_a_killed_child_reads_as_killed_and_no_hung_child_outlives_the_run(self):
        child = children.Child(self.script, ["hang"], self.env, ["children_test_plain"])
        self.assertIsNone(child.poll())
        child.kill()
        self.assertEqual(child.wait(60), -9)
        hung = children.Child(self.script, ["hang"], self.env, ["children_test_plain"])
        children._close_servers()  # as at the checker's exit: the server kills what still runs
        deadline = 60
        while deadline > 0 and os.path.exists("/proc/%d" % hung.pid) and "Z" not in _state(hung.pid):
            time.sleep(0.1)
            deadline -= 0.1
        self.assertTrue(not os.path.exists("/proc/%d" % hung.pid) or "Z" in _state(hung.pid), "the hung child lives")

    def test_none_forks_when_asked_not_to(self):
        os.environ["DLMAP_CHECK_FORK_SERVER"] = "0"
        try:
            self.assertIsNone(children._server(self.env, ["children_test_plain"], 60))
        finally:
            del os.environ["DLMAP_CHECK_FORK_SERVER"]


def _state(pid):
    try:
        with open("/proc/%d/stat" % pid) as f:
            return f.read().rsplit(")", 1)[1].split()[0]
    except OSError:
        return "gone"


if __name__ == "__main__":
    unittest.main()
