# dlmap conformance checker — the fork server (children.py starts one per environment and set of modules): a child
# interpreter that imports the modules its children would import first (the peer under check, the checker's crafted
# producers: torch alone takes a second or more to import), then, for each child asked of it, forks a copy of itself
# that runs the child's script as a fresh interpreter would (`python script.py ARGS`: its own standard streams,
# __main__, sys.argv, sys.path[0], an ordinary exit that finalises the interpreter). A crash or hang stays in that copy.
# It forks only while it has one thread (forking a process with other threads copies locks they may hold): otherwise it
# says so and the checker starts plain child interpreters instead.
# Protocol (a SOCK_SEQPACKET socket, one JSON message each way per packet):
#   parent: {"run": script, "args": [str or {"fd": i}]} with fds [stdin, stdout, stderr, extra...] ({"fd": i} is the
#           number extra[i] has in the child), or {"kill": pid}; closing the socket ends the server.
#   server: {"ready": bool} once, then {"started": pid} per run, {"ended": pid, "code": exit code or -signal} per child.
# usage: fork_server.py SOCKET_FD MODULES_JSON
import importlib
import json
import os
import select
import signal
import socket
import sys


def _send(sock, message):
    sock.send(json.dumps(message).encode())


def _import_quietly(names):
    """Imports each module the way the child will find it (PYTHONPATH, not this directory); one that fails to import
    is left for the child, which then meets the same failure itself."""
    here = sys.path.pop(0)
    for name in names:
        try:
            importlib.import_module(name)
        except BaseException:  # noqa: B036 — whatever the module raises, the child raises it again
            pass
    sys.path.insert(0, here)


def _serve(sock):
    """Forks a child per request; returns (request, fds) in the child, None when the parent closed the socket."""
    running = {}  # pidfd -> pid
    while True:
        ready, _, _ = select.select([sock] + list(running), [], [])
        for pidfd in [r for r in ready if r is not sock]:
            pid = running.pop(pidfd)
            _, status = os.waitpid(pid, 0)
            os.close(pidfd)
            _send(sock, {"ended": pid, "code": os.waitstatus_to_exitcode(status)})
        if sock not in ready:
            continue
        data, fds, _, _ = socket.recv_fds(sock, 1 << 20, 64)
        if not data:  # the parent is done (or gone): no child outlives the server
            for pidfd in running:
                signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            return None
        request = json.loads(data)
        if "kill" in request:
            for pidfd, pid in running.items():
                if pid == request["kill"]:
                    signal.pidfd_send_signal(pidfd, signal.SIGKILL)
            continue
        sys.stdout.flush()
        sys.stderr.flush()
        pid = os.fork()
        if pid == 0:
            sock.close()
            for pidfd in running:
                os.close(pidfd)
            return request, fds
        for fd in fds:
            os.close(fd)
        running[os.pidfd_open(pid)] = pid
        _send(sock, {"started": pid})


def _become(request, fds):
    """In the forked child: the script's standard streams, arguments and sys.path[0]; then runs it as __main__."""
    for number, fd in enumerate(fds[:3]):
        os.dup2(fd, number)
        os.close(fd)
    extra = fds[3:]
    script = request["run"]
    sys.argv = [script] + [str(extra[a["fd"]]) if isinstance(a, dict) else a for a in request["args"]]
    sys.path[0] = os.path.dirname(os.path.abspath(script))
    import runpy
    runpy.run_path(script, run_name="__main__")


def main():
    sock = socket.socket(fileno=int(sys.argv[1]))
    _import_quietly(json.loads(sys.argv[2]))
    forks = len(os.listdir("/proc/self/task")) == 1
    try:
        os.close(os.pidfd_open(os.getpid()))  # Linux 5.3 and later: how the server waits for its children
    except OSError:
        forks = False
    _send(sock, {"ready": forks})
    served = _serve(sock) if forks else None
    if served is None:
        os._exit(0)  # the server's own modules are not finalised: nothing of its state is a child's result
    return served


if __name__ == "__main__":
    _become(*main())
