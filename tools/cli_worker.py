"""`minimlc worker`: join a Ray cluster as a machine that times tuning candidates for one target CPU.

    ray start --head --port 6379 --num-cpus 0                                  # the head, where minimlc tune runs
    minimlc worker --ray-address HEAD:6379 --target-key znver3 --cores 2       # on each measuring machine
    minimlc tune model.onnx --trials 256 --db tuning.jsonl --runner ray --ray-address HEAD:6379 --target-key znver3

The worker first checks that this host can run code built for the target (it refuses, naming the features the
CPU lacks), takes `--cores` of this host's cores that no other `minimlc worker` here holds and pins itself to
them, then runs a Ray node (`ray start --block`) offering one unit of `minimlc-target-KEY` per core: the tuner's
actors, one per core set, are placed by that resource (`tuner/ray_runner.py`). It runs until stopped (Ctrl-C).
"""

from __future__ import annotations

import argparse
import importlib.util
import json
import os
import shutil
import socket
import tempfile

from minimlc.tools import cli_options

OBJECT_STORE_BYTES = 100 * 2**20
"""The node's object store: candidates are object code of a few kilobytes to a few megabytes."""


def add_parser(commands: argparse._SubParsersAction) -> None:
    """The `worker` subcommand."""
    worker = commands.add_parser("worker", help="join a Ray cluster to time tuning candidates for a target CPU")
    worker.add_argument("--ray-address", required=True, metavar="HOST:PORT", help="the Ray head's address")
    worker.add_argument(
        "--target-key", required=True, metavar="CPU", help="the target CPU this worker times candidates of (znver3)"
    )
    worker.add_argument(
        "--cores", type=cli_options.positive_int, default=1, help="cores of this host to time candidates on (1)"
    )
    worker.set_defaults(command=run_worker)


def run_worker(args: argparse.Namespace) -> int:
    """Check the target and the address, pin to free cores, then run the Ray node until it is stopped."""
    from minimlc.lowering.target import TargetNotRunnableError, target_from_name
    from minimlc.tuner.ray_runner import check_reachable, claim_cores, target_resource

    if importlib.util.find_spec("ray") is None:
        raise cli_options.UsageError("minimlc worker needs Ray: pip install 'minimlc[distributed]'")
    try:
        target = target_from_name(args.target_key)
    except ValueError as error:
        raise cli_options.UsageError(f"--target-key: {error}") from None
    try:
        target.check_runs_on_host()
    except TargetNotRunnableError as error:
        raise TargetNotRunnableError(f"not joining as a worker: {error}") from None
    check_reachable(args.ray_address)
    cores, locks = claim_cores(args.cores, "worker", os.sched_getaffinity(0))
    os.sched_setaffinity(0, cores)  # the node's processes, and the actors it starts, inherit it
    print(
        f"minimlc worker: {socket.gethostname()} cores {cores} time target {args.target_key} for the Ray cluster at "
        f"{args.ray_address}",
        flush=True,
    )
    # The node's sockets and logs: two nodes on one host cannot share them; the folder of the first core this worker
    # holds is its own (a worker killed before it could clean up leaves one folder per core, not one per run).
    folder = os.path.join(tempfile.gettempdir(), f"mlcw-cpu{cores[0]}")
    shutil.rmtree(folder, ignore_errors=True)
    os.makedirs(folder)
    try:
        return _ray_node(args.ray_address, target_resource(args.target_key), len(cores), folder)
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        for lock in locks:
            lock.close()


def _ray_node(address: str, resource: str, cores: int, folder: str) -> int:
    """`ray start --block` joining `address` with `cores` units of `resource`, its sockets and logs in `folder` (a
    short path: a socket's is limited), in this process (its node's processes end with it)."""
    from ray.scripts.scripts import cli

    arguments = [
        "start",
        "--address",
        address,
        "--block",
        "--num-cpus",
        str(cores),
        "--resources",
        json.dumps({resource: cores}),
        "--object-store-memory",
        str(OBJECT_STORE_BYTES),
        "--temp-dir",
        folder,
        "--dashboard-agent-listen-port",
        "0",
        "--disable-usage-stats",
    ]
    try:
        cli.main(args=arguments, prog_name="ray", standalone_mode=False)
    except SystemExit as exit_:
        return exit_.code if isinstance(exit_.code, int) else 1
    return 0
