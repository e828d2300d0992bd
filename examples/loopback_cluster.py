"""A Ray cluster on this machine's loopback, for trying distributed tuning (and for its tests and bench): a head with
no CPUs of its own and `minimlc worker`s of one core each, every one in a session of its own so that `kill` takes a
worker away as a machine going down would, its Ray node and the actors it started included.

    with LoopbackCluster(folder) as cluster:      # folder: a short path, Ray's socket paths live under it
        cluster.start_workers("worker0", "worker1")
        ...  minimlc tune model.onnx --runner ray --ray-address {cluster.address} ...
        cluster.kill("worker1")

Needs the distributed extra (`pip install 'minimlc[distributed]'`): the `ray` and `minimlc` scripts of this Python.
"""

from __future__ import annotations

import contextlib
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from types import TracebackType

SCRIPTS = Path(sys.executable).parent
FAST_FAILURE = {"RAY_health_check_period_ms": "500", "RAY_health_check_failure_threshold": "2"}
"""The head notices a worker gone within about a second (Ray's default is tens of seconds)."""


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def session_members(session: int) -> list[int]:
    """The live processes of `session` (field 6 of /proc/PID/stat, counted after the command's closing parenthesis)."""
    members = []
    for stat in Path("/proc").glob("[0-9]*/stat"):
        with contextlib.suppress(OSError):
            fields = stat.read_text().rsplit(")", 1)[1].split()
            if int(fields[3]) == session and fields[0] != "Z":
                members.append(int(stat.parent.name))
    return members


class LoopbackCluster:
    """A Ray head on 127.0.0.1 and `minimlc worker`s timing for `target_key` (the host's CPU by default), each
    logging to `folder/NAME.log`."""

    def __init__(self, folder: Path, target_key: str | None = None):
        from minimlc.lowering.target import target_from_name

        self.folder, self.port = folder, free_port()
        self.address = f"127.0.0.1:{self.port}"
        self.target_key = target_key or target_from_name("host").cpu
        self.env = {**os.environ, **FAST_FAILURE, "RAY_USAGE_STATS_ENABLED": "0"}
        self.processes: dict[str, subprocess.Popen[bytes]] = {}
        head = [str(SCRIPTS / "ray"), "start", "--head", "--block", "--port", str(self.port)]
        head += ["--node-ip-address", "127.0.0.1", "--num-cpus", "0", "--include-dashboard=false"]
        head += ["--object-store-memory", str(80 * 10**6), "--temp-dir", str(folder / "ray"), "--disable-usage-stats"]
        self._start("head", head)
        self._wait_for("head", "Ray runtime started")

    def start_workers(self, *names: str) -> None:
        """`minimlc worker`s of one core each, started at once."""
        command = [str(SCRIPTS / "minimlc"), "worker", "--ray-address", self.address, "--target-key", self.target_key]
        for name in names:
            self._start(name, command)
        for name in names:
            self._wait_for(name, "Ray runtime started")

    def kill(self, name: str) -> None:
        """Every process of the worker's session: Ray's raylet starts each actor in a process group of its own,
        which a group kill would leave answering."""
        process = self.processes.pop(name)
        while members := session_members(process.pid):
            for pid in members:
                with contextlib.suppress(ProcessLookupError):
                    os.kill(pid, signal.SIGKILL)
            time.sleep(0.05)
        process.wait()

    def log(self, name: str) -> str:
        return (self.folder / f"{name}.log").read_text(errors="replace")

    def close(self) -> None:
        for name in list(self.processes):
            self.kill(name)

    def __enter__(self) -> LoopbackCluster:
        return self

    def __exit__(
        self, kind: type[BaseException] | None, error: BaseException | None, trace: TracebackType | None
    ) -> None:
        self.close()

    def _start(self, name: str, command: list[str]) -> None:
        with (self.folder / f"{name}.log").open("wb") as log:
            self.processes[name] = subprocess.Popen(
                command, stdout=log, stderr=subprocess.STDOUT, env=self.env, start_new_session=True
            )

    def _wait_for(self, name: str, marker: str, limit: float = 60.0) -> None:
        deadline = time.monotonic() + limit
        while marker not in self.log(name):
            if self.processes[name].poll() is not None:
                self.close()
                raise RuntimeError(f"{name} ended before it started:\n{self.log(name)}")
            if time.monotonic() > deadline:
                self.close()
                raise TimeoutError(f"{name} did not start within {limit:g} s:\n{self.log(name)}")
            time.sleep(0.2)
