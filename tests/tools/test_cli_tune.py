"""`minimlc tune`, `--tuning-db` and `run --profile` from the command line."""

from __future__ import annotations

import importlib.util
import json
import os
import re
import signal
import subprocess
import threading
import time
from pathlib import Path

import onnx
import pytest
from cli_run import SCRIPTS, assert_one_line_error, minimlc

from minimlc.lowering.strategy.tuning_db import Record, TuningDatabase


@pytest.mark.slow
def test_tune_then_run_tuned_and_profiled(mlp_path: Path, tmp_path: Path) -> None:
    db, trace, curve = tmp_path / "db.jsonl", tmp_path / "trace.json", tmp_path / "curve.png"
    plot = ["--plot", str(curve)] if importlib.util.find_spec("matplotlib") else []
    result = minimlc("tune", str(mlp_path), "--trials", "2", "--db", str(db), "--no-verify", *plot)
    assert result.returncode == 0, result.stderr
    assert "weighted ms" in result.stdout and "% peak" in result.stdout and "2/2 trials" in result.stdout
    assert re.search(r"peak \d+\.\d GFLOP/s per core \(FMA loop\) x 1 threads", result.stdout)
    assert "their schedules can save at most" in result.stdout
    assert "in the model" not in result.stdout
    assert len(db.read_text().splitlines()) == 2
    assert not plot or curve.stat().st_size > 0
    again = minimlc("tune", str(mlp_path), "--trials", "1", "--db", str(db))
    assert again.returncode == 0, again.stderr
    assert "reused" in again.stdout
    assert "tuned kernel(s) in the model" in again.stdout or "no kernel's best config differs" in again.stdout

    run = minimlc("run", str(mlp_path), "--tuning-db", str(db), "--profile", "--profile-json", str(trace))
    assert run.returncode == 0, run.stderr
    assert "kernel profile over 20 runs" in run.stdout and "GFLOP/s" in run.stdout
    assert re.search(r"at the peak \(\d+\.\d GFLOP/s\) .* save at most \d+\.\d%", run.stdout)  # the peak, measured
    events = json.loads(trace.read_text())
    assert sum(event["name"] == "model_run" for event in events) == 20


def test_bad_tuning_options_are_reported(mlp_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.jsonl"
    db.write_text("[1, 2]\n")
    for command in (["run", str(mlp_path)], ["compile", str(mlp_path), "--emit", "schedule"]):
        result = minimlc(*command, "--tuning-db", str(db))
        assert result.returncode == 1
        assert f"{db}:1: expected a JSON object, got list" in result.stderr
    result = minimlc("tune", str(mlp_path), "--trials", "0", "--db", str(db))
    assert result.returncode == 2 and "--trials" in result.stderr
    for command in (["tune", str(mlp_path), "--trials", "1", "--db", str(db)], ["run", str(mlp_path), "--profile"]):
        result = minimlc(*command, "--peak-gflops", "0")
        assert result.returncode == 2 and "--peak-gflops: must be positive, got 0" in result.stderr


@pytest.mark.parametrize("option", [["--passes-after", "graph:graph-bf16-products"], ["--load-plugin", "toy.py"]])
def test_tune_refuses_pipeline_passes(mlp_path: Path, tmp_path: Path, option: list[str]) -> None:
    """tune builds each task's pipeline itself: a pass or plugin it would not apply is refused, not ignored."""
    result = minimlc("tune", str(mlp_path), "--trials", "1", "--db", str(tmp_path / "db.jsonl"), *option)
    assert result.returncode == 2
    assert f"unrecognized arguments: {' '.join(option)}" in result.stderr
    assert not (tmp_path / "db.jsonl").exists()


def test_the_cpu_profile_clock_needs_one_thread(mlp_path: Path) -> None:
    refused = minimlc("run", str(mlp_path), "--profile", "--profile-clock", "cpu", "--threads", "2")
    assert refused.returncode == 1
    assert "--profile-clock cpu times the calling thread: use it with --profile --threads 1" in refused.stderr
    run = minimlc("run", str(mlp_path), "--profile", "--profile-clock", "cpu", "--threads", "1", "--repeat", "3")
    assert run.returncode == 0, run.stderr
    assert "kernel profile over 3 runs" in run.stdout


def test_the_given_peak_is_one_cores_times_the_threads(mlp_path: Path) -> None:
    """`--peak-gflops` means one core's peak in `run` as in `tune`: the profile divides by it times the threads."""
    for threads, peak in (("1", "50.0"), ("2", "100.0")):
        run = minimlc("run", str(mlp_path), "--profile", "--peak-gflops", "50", "--threads", threads, "--repeat", "2")
        assert run.returncode == 0, run.stderr
        assert f"at the peak ({peak} GFLOP/s)" in run.stdout


FAST = ("--peak-gflops", "50", "--cache", "warm", "--no-verify")
"""Options that skip what these tests do not look at: measuring the peak, calibrating the cache state, the check."""


def test_tune_resumes_from_a_database_cut_short(mlp_path: Path, tmp_path: Path) -> None:
    """A tuning killed while appending leaves half a line: the next run warns, skips it and goes on, on a new line."""
    db = tmp_path / "db.jsonl"
    record = Record("k" * 24, "cpu", "gemm", "gemm_0", 10, {"mr": 1}, 1e-6).to_json()
    db.write_text(f"{record}\n{record[:50]}")
    result = minimlc("tune", str(mlp_path), "--trials", "1", "--db", str(db), *FAST)
    assert result.returncode == 0, result.stderr
    assert f"minimlc: warning: {db}:2: skipped a record cut short" in result.stderr
    assert "Traceback" not in result.stderr
    lines = db.read_text().splitlines()
    assert lines[:2] == [record, record[:50]] and len(lines) == 3
    assert json.loads(lines[2])["kernel"] == "gemm_0"


def test_tune_fixes_symbolic_dimensions_with_input_shape(mlp_path: Path, tmp_path: Path) -> None:
    model = onnx.load(mlp_path)
    for value in (*model.graph.input, *model.graph.output):
        value.type.tensor_type.shape.dim[0].dim_param = "N"
    onnx.save(model, tmp_path / "mlp_n.onnx")
    db = tmp_path / "db.jsonl"
    refused = minimlc("tune", str(tmp_path / "mlp_n.onnx"), "--trials", "1", "--db", str(db), *FAST)
    assert_one_line_error(refused, "symbolic dimension 'N' at axis 0; pass --input-shape input=D,D,...")
    result = minimlc(
        "tune", str(tmp_path / "mlp_n.onnx"), "--input-shape", "input=4,784", "--trials", "1", "--db", str(db), *FAST
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"gemm_0 .* \| +802816 \|", result.stdout), result.stdout  # 2 x 4 x 784 x 128 FLOP: batch 4


def test_a_database_path_under_a_file_is_refused_before_any_work(mlp_path: Path, tmp_path: Path) -> None:
    result = minimlc("tune", str(mlp_path), "--trials", "1", "--db", str(mlp_path / "t.jsonl"))
    assert_one_line_error(result, f"--db {mlp_path / 't.jsonl'}: '{mlp_path}' is a file, not a directory")
    assert result.stdout == ""  # no peak measured, no task table


def test_candidates_that_time_out_print_no_traceback(mlp_path: Path, tmp_path: Path) -> None:
    db = tmp_path / "db.jsonl"
    result = minimlc("tune", str(mlp_path), "--trials", "3", "--db", str(db), "--timeout", "0.001", *FAST)
    assert result.returncode == 0, result.stderr
    assert "Traceback" not in result.stderr and "BrokenPipeError" not in result.stderr
    assert all(json.loads(line)["error"] == "timed out after 0.001 s" for line in db.read_text().splitlines())


def test_ctrl_c_stops_tune_and_says_what_it_kept(mlp_path: Path, tmp_path: Path) -> None:
    """SIGINT to the process group, as Ctrl-C sends it, once the first progress line is out: no traceback (from
    the tuner or its measuring worker), the records kept, exit 130."""
    db = tmp_path / "db.jsonl"
    rc, stderr = interrupted(["tune", str(mlp_path), "--trials", "500", "--db", str(db), *FAST], "stdout", " trials, ")
    assert rc == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    kept = len(TuningDatabase(db).records)
    assert kept >= 1
    assert stderr.strip().splitlines()[-1] == (
        f"minimlc: interrupted: {kept} record(s) kept in {db} ({kept} from this run); run the same command to go on"
    )


def test_ctrl_c_stops_run_repeat_quietly(mlp_path: Path) -> None:
    rc, stderr = interrupted(["run", str(mlp_path), "--no-cache", "--repeat", "1000000000"], "stderr", "  load ")
    assert rc == 130, stderr
    assert "Traceback" not in stderr and "KeyboardInterrupt" not in stderr, stderr
    assert stderr.strip().splitlines()[-1] == "minimlc: interrupted"


def interrupted(args: list[str], stream: str, marker: str, limit: float = 120.0) -> tuple[int, str]:
    """Run `minimlc ARGS` in a process group of its own, wait (at most `limit` seconds) for a line of `stream`
    holding `marker`, then send the group SIGINT, as Ctrl-C does; returns the exit status and all of stderr. Sent
    again every 10 s while the process lives, as a user presses Ctrl-C again: a SIGINT that lands while a C
    extension initialises (numpy.random, imported lazily) can vanish without a trace (seen once in 20 runs)."""
    texts: dict[str, list[str]] = {"stdout": [], "stderr": []}
    seen = threading.Event()
    with subprocess.Popen(
        [str(SCRIPTS / "minimlc"), *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        start_new_session=True,
        preexec_fn=_sigint_default,
    ) as process:

        def read(name: str) -> None:
            for line in getattr(process, name):
                texts[name].append(line)
                if name == stream and marker in line:
                    seen.set()

        readers = [threading.Thread(target=read, args=(name,), daemon=True) for name in texts]
        for reader in readers:
            reader.start()
        deadline = time.monotonic() + limit
        try:
            while not seen.wait(timeout=0.1):
                if process.poll() is not None or time.monotonic() > deadline:
                    pytest.fail(f"no {marker!r} line from minimlc {' '.join(args)}: {''.join(texts['stderr'])}")
            returncode = None
            for _ in range(6):
                os.killpg(process.pid, signal.SIGINT)
                try:
                    returncode = process.wait(timeout=10)
                    break
                except subprocess.TimeoutExpired:
                    continue
            assert returncode is not None, "SIGINT did not stop minimlc"
        finally:
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
            for reader in readers:
                reader.join(timeout=10)
    return returncode, "".join(texts["stderr"])


def _sigint_default() -> None:
    """In the child: SIGINT's default action, which a shell gives the commands it starts (a pytest-xdist worker
    ignores SIGINT, and an ignored signal stays ignored across exec)."""
    signal.signal(signal.SIGINT, signal.SIG_DFL)
