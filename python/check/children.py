# dlmap conformance checker — the child interpreters each case runs in (consumer.py, deleters.py, matrix.py,
# producer.py). A child is forked from a fork server (fork_server.py) that has imported the modules the child would
# import first, so that a case costs a fork instead of an interpreter start and the imports (PyYAML's spec load, torch,
# NumPy: most of the checker's time before). The child is still a process of its own that runs its script as
# `python script.py ARGS` would, from a server that imported nothing else of the parent's. Where the server cannot fork
# safely (a module started a thread), crashed or hung importing, or DLMAP_CHECK_FORK_SERVER=0, each child is a plain
# `python script.py ARGS`.
import atexit
import json
import os
import select
import signal
import socket
import subprocess
import sys
import tempfile
import time

READY_TIMEOUT_S = 120  # the server's own start, the modules' imports: past it (a peer that hangs on import), none
_HERE = os.path.dirname(os.path.abspath(__file__))
_SERVERS = {}  # (environment, working directory, modules) -> _Server, or None where it cannot fork
_MOST_SERVERS = 8  # servers kept at once (the oldest goes): each is an interpreter holding its modules


class _Server:
    def __init__(self, env, modules, ready_timeout):
        self._sock, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._process = subprocess.Popen(
                [sys.executable, os.path.join(_HERE, "fork_server.py"), str(theirs.fileno()), json.dumps(modules)],
                env=env, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),))
        finally:
            theirs.close()
        self._messages = []  # read, not yet asked for
        try:  # a module that crashes or hangs on import: no server (the children then meet it themselves)
            first = self._next(time.monotonic() + ready_timeout)
        except OSError:
            first = None
        self.forks = bool(first and first.get("ready"))

    def _next(self, deadline):
        """The next message (None at the deadline; OSError when the server is gone)."""
        left = deadline - time.monotonic()
        if left <= 0 or not select.select([self._sock], [], [], left)[0]:
            return None
        data = self._sock.recv(1 << 16)
        if not data:
            raise OSError("the checker's fork server ended")
        return json.loads(data)

    def _wait_for(self, wanted, deadline):
        """The first message for which wanted(message) holds (those read on the way are kept), or None at the
        deadline."""
        for i, message in enumerate(self._messages):
            if wanted(message):
                return self._messages.pop(i)
        while True:
            message = self._next(deadline)
            if message is None or wanted(message):
                return message
            self._messages.append(message)

    def start(self, script, args, fds):
        socket.send_fds(self._sock, [json.dumps({"run": script, "args": args}).encode()], fds)
        started = self._wait_for(lambda m: "started" in m, time.monotonic() + READY_TIMEOUT_S)
        if started is None:
            raise OSError("the checker's fork server did not start a child")
        return started["started"]

    def ended(self, pid, deadline):
        """The child's exit code (-signal when a signal ended it), or None if it still runs at the deadline."""
        message = self._wait_for(lambda m: m.get("ended") == pid, deadline)
        return None if message is None else message["code"]

    def kill(self, pid):
        self._sock.send(json.dumps({"kill": pid}).encode())

    def close(self):
        self._sock.close()
        if self.forks:  # a server that never said it forks may still be importing: it goes at once
            try:
                self._process.wait(timeout=10)
                return
            except subprocess.TimeoutExpired:
                pass
        self._process.kill()
        self._process.wait()


def _server(env, modules, ready_timeout):
    """The fork server for env and modules (started on first use), or None: none can fork, or none is wanted."""
    if os.environ.get("DLMAP_CHECK_FORK_SERVER", "1") == "0" or not hasattr(os, "pidfd_open"):
        return None
    key = (tuple(sorted(env.items())), os.getcwd(), tuple(modules))
    if key not in _SERVERS:
        if len(_SERVERS) >= _MOST_SERVERS:  # the oldest goes
            oldest = _SERVERS.pop(next(iter(_SERVERS)))
            if oldest is not None:
                oldest.close()
        server = _Server(env, list(modules), ready_timeout)
        if not server.forks:
            server.close()
            server = None
        _SERVERS[key] = server
    return _SERVERS[key]


def _forget(server):
    """A server that failed a request is not asked again (its key then starts plain children)."""
    for key, known in _SERVERS.items():
        if known is server:
            _SERVERS[key] = None
    server.close()


@atexit.register
def _close_servers():
    for server in _SERVERS.values():
        if server is not None:
            server.close()
    _SERVERS.clear()


def module_of(target):
    """The top-level module a `module:expression` target imports first ('' for anything else)."""
    return target.split(":", 1)[0].split(".", 1)[0] if isinstance(target, str) and ":" in target else ""


class Child:
    """A running child: pid, poll(), wait(timeout), kill(); returncode as subprocess gives it (-signal)."""

    def __init__(self, script, args, env, modules=(), stdout=None, stderr=None, pass_fds=(),
                 start_timeout=READY_TIMEOUT_S):
        """args: strings, or {"fd": i} for pass_fds[i] as the child numbers it. stdout/stderr: file objects (default:
        discarded). stdin is /dev/null. start_timeout: how long a new fork server may take to import the modules."""
        modules = [m for m in modules if m]
        self.returncode = None
        self._server = _server(env, modules, start_timeout)
        self._process = None
        null = open(os.devnull, "r+b")
        try:
            out = (stdout or null).fileno()
            err = (stderr or null).fileno()
            if self._server is not None:
                try:
                    self.pid = self._server.start(script, args, [null.fileno(), out, err] + list(pass_fds))
                except OSError:
                    _forget(self._server)
                    self._server = None
            if self._server is None:
                argv = [str(pass_fds[a["fd"]]) if isinstance(a, dict) else a for a in args]
                self._process = subprocess.Popen([sys.executable, script] + argv, env=env, stdin=null, stdout=out,
                                                 stderr=err, pass_fds=tuple(pass_fds))
                self.pid = self._process.pid
        finally:
            null.close()

    def wait(self, timeout=None):
        if self.returncode is not None:
            return self.returncode
        if self._process is not None:
            self.returncode = self._process.wait(timeout)
            return self.returncode
        deadline = time.monotonic() + (timeout if timeout is not None else 1e9)
        code = self._server.ended(self.pid, deadline)
        if code is None:
            raise subprocess.TimeoutExpired([self.pid], timeout)
        self.returncode = code
        return code

    def poll(self):
        try:
            return self.wait(0)
        except subprocess.TimeoutExpired:
            return None

    def kill(self):
        if self.returncode is not None:
            return
        if self._process is not None:
            self._process.kill()
            return
        try:
            self._server.kill(self.pid)
        except OSError:  # the server is gone: it killed its children on its way out
            pass


def run(script, args, env, timeout, modules=()):
    """Runs script to its end like subprocess.run(capture_output=True, text=True, errors="replace", timeout=...):
    a CompletedProcess, or subprocess.TimeoutExpired after the child was killed."""
    with tempfile.TemporaryFile() as out, tempfile.TemporaryFile() as err:
        child = Child(script, args, env, modules, stdout=out, stderr=err)
        try:
            code = child.wait(timeout)
        except subprocess.TimeoutExpired:
            child.kill()
            child.wait()
            raise
        texts = []
        for f in (out, err):
            f.seek(0)
            texts.append(f.read().decode("utf-8", "replace"))
    return subprocess.CompletedProcess([script] + list(args), code, texts[0], texts[1])


def signal_name(code):
    """'SIGSEGV' for a child ended by signal 11 (code -11), 'signal N' for a number Python does not name."""
    try:
        return signal.Signals(-code).name
    except ValueError:
        return "signal %d" % -code
