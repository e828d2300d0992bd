"""A fork server for the lit suite's `mini-opt` runs: `mini-opt`'s imports, dialects and passes load once, and each
RUN line's `mini-opt` is a child forked from that process, running the real `minimlc.tools.mini_opt.main` with the
caller's arguments, working folder, environment and standard streams. Start-up (0.4 s of a 0.5 s run's CPU, about
400 runs) is paid once; a child costs what its parsing, passes and printing cost.

    python tests/lit_fork_server.py SOCKET     # the server: imports, then forks a child per request
    client(SOCKET)                             # the client: a `mini-opt` script of tests/test_filecheck.py calls it

The client passes its three standard streams as file descriptors over a Unix socket, with its arguments, folder and
environment as JSON; the child makes them its own (`dup2`), runs `main`, and sends back the exit status, which the
client exits with. A child that dies without one (a signal) gives status 1 and a line on standard error. The server
imports modules and nothing else (no threads, no LLVM state), so a child starts as a fresh `mini-opt` would after its
imports; the console script itself is run by the CLI tests (`tests/tools/test_mini_opt.py`).
"""

from __future__ import annotations

import json
import os
import signal
import socket
import sys
import threading
import traceback

_HEADER = 8
"""Bytes of the request's length, which comes with the three file descriptors."""


def client(path: str) -> int:
    """Run `mini-opt` with this process's arguments and streams in a child of the server on the Unix socket `path`;
    its exit status."""
    payload = json.dumps({"argv": sys.argv[1:], "cwd": os.getcwd(), "env": dict(os.environ)}).encode()
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as connection:
        connection.connect(path)
        socket.send_fds(connection, [len(payload).to_bytes(_HEADER, "little")], [0, 1, 2])
        connection.sendall(payload)
        reply = _receive(connection, 4)
    if len(reply) < 4:
        print("mini-opt (lit fork server): the child died without an exit status", file=sys.stderr)
        return 1
    return int.from_bytes(reply, "little", signed=True)


def serve(path: str) -> None:
    """Load `mini-opt` with every dialect and pass, then fork a child per connection on the Unix socket `path`."""
    from minimlc.dialects import get_all_dialects
    from minimlc.lowering import get_all_passes
    from minimlc.tools import mini_opt  # noqa: F401

    for load in [*get_all_dialects().values(), *get_all_passes().values()]:
        load()
    assert threading.active_count() == 1, "the server must not fork with threads running"
    signal.signal(signal.SIGTERM, _stop)
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as listener:
        listener.bind(path)
        listener.listen(64)
        print("ready", flush=True)
        try:
            while True:
                connection, _ = listener.accept()
                header, fds, _, _ = socket.recv_fds(connection, _HEADER, 3)
                request = json.loads(_receive(connection, int.from_bytes(header, "little")))
                if os.fork() == 0:
                    listener.close()
                    _child(connection, fds, request)
                connection.close()
                for fd in fds:
                    os.close(fd)
                _reap(os.WNOHANG)
        except _Stopped:
            _reap(0)  # waited for, so that their CPU time counts as this process's children's


class _Stopped(Exception):
    """SIGTERM: stop serving."""


def _stop(*_: object) -> None:
    raise _Stopped


def _reap(flags: int) -> None:
    """Wait for the children that have ended (WNOHANG), or for all of them (0)."""
    try:
        while os.waitpid(-1, flags)[0]:
            pass
    except ChildProcessError:
        pass


def _child(connection: socket.socket, fds: list[int], request: dict) -> None:
    """Become the client's `mini-opt`: its streams, folder, environment and arguments; send the exit status."""
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    for target, fd in enumerate(fds):
        os.dup2(fd, target)
        os.close(fd)
    os.chdir(request["cwd"])
    os.environ.clear()
    os.environ.update(request["env"])
    sys.argv = ["mini-opt", *request["argv"]]
    from minimlc.tools.mini_opt import main

    try:
        status = main()
    except SystemExit as exit:
        status = exit.code if isinstance(exit.code, int) else (0 if exit.code is None else 1)
        if isinstance(exit.code, str):
            print(exit.code, file=sys.stderr)
    except BaseException:
        traceback.print_exc()
        status = 1
    for stream in (sys.stdout, sys.stderr):
        try:
            stream.flush()
        except OSError:
            pass
    connection.sendall(int(status).to_bytes(4, "little", signed=True))
    os._exit(0)


def _receive(connection: socket.socket, size: int) -> bytes:
    data = b""
    while len(data) < size and (chunk := connection.recv(size - len(data))):
        data += chunk
    return data


if __name__ == "__main__":
    serve(sys.argv[1])
