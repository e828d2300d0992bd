"""`minimlc tune`, `--tuning-db` and `run --profile` from the command line."""

from __future__ import annotations

import importlib.util
import json
import re
from pathlib import Path

import pytest
from cli_run import minimlc


@pytest.mark.slow
def test_tune_then_run_tuned_and_profiled(mlp_path: Path, tmp_path: Path) -> None:
    db, trace, curve = tmp_path / "db.jsonl", tmp_path / "trace.json", tmp_path / "curve.png"
    plot = ["--plot", str(curve)] if importlib.util.find_spec("matplotlib") else []
    result = minimlc("tune", str(mlp_path), "--trials", "2", "--db", str(db), "--no-verify", *plot)
    assert result.returncode == 0, result.stderr
    assert "weighted us" in result.stdout and "% peak" in result.stdout and "2/2 trials" in result.stdout
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
