"""Tuning on a Ray cluster: a real head and two `minimlc worker`s on loopback, the Ray runner's records against local
measurements, a worker killed mid-run, the tuner killed and rerun, and the refusals (a target this CPU cannot run, a
bad address)."""

from __future__ import annotations

import io
import re
import shlex
import shutil
import signal
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import onnx
import pytest
from loopback_cluster import SCRIPTS, LoopbackCluster
from tuning_models import matmul_8x64x64

from minimlc.frontend.onnx import import_model
from minimlc.lowering.strategy.tuning_db import TuningDatabase
from minimlc.lowering.target import target_from_name
from minimlc.tuner.tasks import extract_tasks
from minimlc.tuner.tuner import tune

pytest.importorskip("ray", reason="the distributed extra (ray) is not installed")

HOST = target_from_name("host")
FAST = ("--peak-gflops", "50", "--cache", "warm", "--no-verify", "--timeout", "20")


def matmul_model(path: Path) -> Path:
    onnx.save(matmul_8x64x64(), path)
    return path


@pytest.fixture
def cluster() -> Iterator[LoopbackCluster]:
    folder = Path(tempfile.mkdtemp(prefix="mlcray"))  # short: Ray's socket paths live under it
    started = None
    try:
        started = LoopbackCluster(folder)
        started.start_workers("worker0", "worker1")
        yield started
    finally:
        if started is not None:
            started.close()
        shutil.rmtree(folder, ignore_errors=True)


def tune_command(model: Path, db: Path, address: str, trials: int) -> list[str]:
    return [
        str(SCRIPTS / "minimlc"), "tune", str(model), "--trials", str(trials), "--db", str(db), *FAST,
        "--runner", "ray", "--ray-address", address,
    ]  # fmt: skip


def records_when(
    db: Path, count: int, process: subprocess.Popen[Any], log: Path | None = None, limit: float = 90.0
) -> list[str]:
    """The database's lines once it holds `count` (the tuning still running) and, with the tuner's `log`, both
    workers have timed a candidate: which worker Ray hands the first candidates is not the test's to choose."""
    deadline = time.monotonic() + limit
    while (
        not db.exists()
        or len(db.read_text().splitlines()) < count
        or (log is not None and len(timed_by(log.read_text())) < 2)
    ):
        assert process.poll() is None, process.communicate()
        assert time.monotonic() < deadline
        time.sleep(0.02)
    return db.read_text().splitlines()


@pytest.mark.slow
def test_tuning_on_a_ray_cluster_survives_a_lost_worker_and_a_killed_tuner(
    cluster: LoopbackCluster, tmp_path: Path
) -> None:
    model, db, log = matmul_model(tmp_path / "matmul.onnx"), tmp_path / "ray.jsonl", tmp_path / "tune.log"
    with log.open("w") as out:
        tuner = subprocess.Popen(tune_command(model, db, cluster.address, 14), stdout=out, stderr=subprocess.STDOUT)
    finished = records_when(db, 6, tuner, log)
    tuner.send_signal(signal.SIGSTOP)  # the worker dies with trials left, however fast this machine times them
    cluster.kill("worker1")
    tuner.send_signal(signal.SIGCONT)
    assert tuner.wait(timeout=150) == 0, log.read_text()
    text = log.read_text()
    assert "Traceback" not in text
    lines = db.read_text().splitlines()
    assert lines[: len(finished)] == finished  # nothing lost
    assert len(lines) == 14  # every trial done
    workers = timed_by(text)
    assert len(workers) == 2, text
    lost, survivor = sorted(workers.items(), key=lambda item: item[1])
    assert lost[1] + survivor[1] == 14, text  # both workers timed candidates, one core each
    assert re.search(rf"ray: lost worker {lost[0]} \((ActorDiedError|ActorUnavailableError)", text), text
    assert survivor[1] >= 14 - len(finished) - 2, text  # what was left ran on the other (2 in flight per worker)

    (task,) = extract_tasks(import_model(str(model)), HOST)
    records = TuningDatabase(db).records
    assert all(task.space.fits(record.config) for record in records)
    assert all((record.latency or 0) > 0 or "lost worker" in (record.error or "") for record in records)
    local_db = tmp_path / "local.jsonl"  # the local runner on the same model: records of the same kind
    tune(model, local_db, trials=2, cache="warm", verify=False, peak_gflops=50, out=io.StringIO())
    local = TuningDatabase(local_db).records
    kind = {(r.key, r.target, r.rule, r.kernel, r.flops, r.model, r.cache) for r in local}
    assert {(r.key, r.target, r.rule, r.kernel, r.flops, r.model, r.cache) for r in records} == kind
    assert records[0].config == local[0].config == task.space.default()  # each run times the default first
    assert local[0].latency is not None
    assert records[0].latency is not None
    assert 1 / 4 < records[0].latency / local[0].latency < 4, (records[0], local[0])  # a loaded machine

    killed = subprocess.Popen(tune_command(model, db, cluster.address, 30), stdout=subprocess.DEVNULL)
    records_when(db, 16, killed)
    killed.kill()
    killed.wait()
    kept = len(TuningDatabase(db).records)
    again = subprocess.run(tune_command(model, db, cluster.address, 1), capture_output=True, text=True)
    assert again.returncode == 0, again.stderr
    assert f"reused {kept} records" in again.stdout
    assert len(TuningDatabase(db).records) == kept + 1


def timed_by(output: str) -> dict[str, int]:
    """How many candidates each worker had timed at the last progress line of `output`."""
    lines = re.findall(r"timed by (.*)", output)
    return {name: int(count) for name, count in (item.split() for item in lines[-1].split(", "))} if lines else {}


def test_a_worker_refuses_a_target_its_cpu_cannot_run() -> None:
    missing = target_from_name("sapphirerapids").missing_on_host()
    if not missing:
        pytest.skip("this host runs AVX-512 code")
    result = subprocess.run(
        [str(SCRIPTS / "minimlc"), "worker", "--ray-address", "127.0.0.1:1", "--target-key", "sapphirerapids"],
        capture_output=True,
        text=True,
    )
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    (line,) = result.stderr.splitlines()
    assert line.startswith("minimlc: error: not joining as a worker:"), line
    assert missing[0] in line, line


def test_a_bad_ray_address_is_one_line(tmp_path: Path) -> None:
    model = matmul_model(tmp_path / "matmul.onnx")
    worker = [str(SCRIPTS / "minimlc"), "worker", "--target-key", HOST.cpu, "--ray-address"]
    for command, message in (
        (tune_command(model, tmp_path / "db.jsonl", "127.0.0.1:1", 1), "cannot reach the Ray cluster at 127.0.0.1:1"),
        ([*worker, "nowhere"], "a Ray address is HOST:PORT, not 'nowhere'"),
    ):
        result = subprocess.run(command, capture_output=True, text=True)
        assert result.returncode == 1
        assert "Traceback" not in result.stderr
        (line,) = result.stderr.splitlines()
        assert line.startswith("minimlc: error: "), line
        assert message in line, line


def test_the_readmes_cluster_commands_parse() -> None:
    """The README's cluster block: its `minimlc` lines are valid command lines, as the test above runs them (its
    `ray start` line has the options the cluster fixture's head is started with)."""
    from minimlc.tools.minimlc_cli import _argument_parser

    readme = (Path(__file__).resolve().parents[2] / "README.md").read_text()
    (block,) = [block for block in re.findall(r"```sh\n(.*?)```", readme, flags=re.DOTALL) if "minimlc worker" in block]
    commands = [shlex.split(line.split("#")[0]) for line in block.splitlines()]
    parsed = [_argument_parser().parse_args(words[1:]) for words in commands if words[0] == "minimlc"]
    assert [args.command.__name__ for args in parsed] == ["run_worker", "tune_model"]
    assert parsed[1].runner == "ray"
    assert parsed[1].ray_address == parsed[0].ray_address
