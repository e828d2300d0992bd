"""The README's commands and code work as written (the install commands themselves are what CI runs)."""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import numpy as np
import pytest

from minimlc.tools.conformance import light_model_paths

ROOT = Path(__file__).resolve().parents[1]
README = (ROOT / "README.md").read_text()


def code_blocks(language: str) -> list[str]:
    return re.findall(rf"```{language}\n(.*?)```", README, flags=re.DOTALL)


def test_ci_runs_the_readmes_two_commands() -> None:
    """CI installs as a user does (a wheel, not `-e`), runs the quick start, then the test command."""
    ci = (ROOT / ".ci" / "run").read_text()
    quick_start, test_command = (block.strip() for block in code_blocks("sh")[:2])
    assert "pip install ." in quick_start and "minimlc run examples/mlp.onnx" in quick_start
    assert 'pip install ".[test]"' in test_command and "pytest" in test_command
    assert "-e" not in (quick_start + test_command).split()
    assert f"\n{quick_start} || exit 1\n" in ci
    assert f"\n{test_command}\n" in ci


def test_python_api_snippet_runs(tmp_path: Path) -> None:
    (snippet,) = code_blocks("python")
    (tmp_path / "examples").mkdir()
    subprocess.run(
        [sys.executable, str(ROOT / "examples" / "make_mlp.py"), "examples/mlp.onnx"], cwd=tmp_path, check=True
    )
    result = subprocess.run([sys.executable, "-c", snippet], cwd=tmp_path, capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    assert result.stdout.strip() == "input (1, 784)"


def test_benchmark_command_runs() -> None:
    assert ".venv/bin/python bench/bench_mlp.py" in README
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_mlp.py"), "--runs", "3", "--warmup", "1", "--batches", "1"],
        capture_output=True,
        text=True,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert re.search(r"^\s+1\s+[\d.]+", result.stdout, flags=re.MULTILINE), result.stdout


def test_models_benchmark_lines_use_real_options() -> None:
    lines = [line for line in code_blocks("sh")[-1].splitlines() if "bench/bench_models.py" in line]
    assert len(lines) == 3, lines
    result = subprocess.run(
        [sys.executable, str(ROOT / "bench" / "bench_models.py"), "--help"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    for option in re.findall(r"--[a-z-]+", " ".join(lines)):
        assert f"{option} " in result.stdout, option
    light_models = {path.stem.removeprefix("light_") for path in light_model_paths()}
    for names in re.findall(r"--models (\S+)", " ".join(lines)):
        assert set(names.split(",")) <= light_models | {"mlp", "matmul", "conv_relu"}, names


@pytest.mark.slow
def test_extending_commands_run(tmp_path: Path) -> None:
    """The "Extending minimlc" block, run as written, except that `pip install` goes to a temporary folder put on
    PYTHONPATH (so the test venv is left without the plugin) and `.venv/bin/` is the running interpreter's."""
    (block,) = [block for block in code_blocks("sh") if "examples/plugin" in block]
    subprocess.run([sys.executable, str(ROOT / "examples" / "make_mlp.py"), "examples/mlp.onnx"], cwd=ROOT, check=True)
    scripts = Path(sys.executable).parent
    pip_install = f"{sys.executable} -m pip install -q --no-deps --target {tmp_path}"
    script = block.replace(".venv/bin/pip install", "PIP_INSTALL").replace(".venv/bin/", f"{scripts}/")
    script = script.replace("PIP_INSTALL", pip_install)
    env = {**os.environ, "PYTHONPATH": str(tmp_path)}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", script], cwd=ROOT, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert "[from plugin toy]" in result.stdout
    assert "graph.gelu" in result.stdout  # toy-to-graph lowered the toy ops
    assert "graph.clip" in result.stdout  # toy-relu-to-clip rewrote the MLP's ReLU


def test_shared_library_commands_run(tmp_path: Path) -> None:
    """The "Shared library" block, run as written in a copy of `examples/` (its `python` and `minimlc` are the
    running venv's): the C program prints the MLP's outputs."""
    (block,) = [block for block in code_blocks("sh") if "build/run_model" in block]
    shutil.copytree(ROOT / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.onnx", "plugin"))
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}"}
    result = subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "build" / "libmodel.so").exists()
    assert "logits" in result.stdout


def _run_block(marker: str, tmp_path: Path) -> subprocess.CompletedProcess[str]:
    """The `sh` block holding `marker`, run as written in a folder with `examples/mlp.onnx`, with the running venv's
    scripts first on PATH."""
    (block,) = [block for block in code_blocks("sh") if marker in block]
    (tmp_path / "examples").mkdir(exist_ok=True)
    make_mlp = [sys.executable, str(ROOT / "examples" / "make_mlp.py"), "examples/mlp.onnx"]
    subprocess.run(make_mlp, cwd=tmp_path, check=True)
    env = {**os.environ, "PATH": f"{Path(sys.executable).parent}{os.pathsep}{os.environ['PATH']}"}
    return subprocess.run(
        ["bash", "-euo", "pipefail", "-c", block], cwd=tmp_path, env=env, capture_output=True, text=True, timeout=600
    )


@pytest.mark.slow
def test_tuning_commands_run(tmp_path: Path) -> None:
    result = _run_block("minimlc tune examples", tmp_path)
    assert result.returncode == 0, result.stderr
    assert "reused" in result.stdout and "kernel profile" in result.stdout
    assert (tmp_path / "trace.json").exists()


def test_seeing_commands_run(tmp_path: Path) -> None:
    pytest.importorskip("matplotlib", reason="the plot extra (matplotlib) is not installed")
    if shutil.which("dot") is None:
        pytest.skip("Graphviz's dot is not installed (CI installs it)")
    result = _run_block("mlp.loop.dot", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "mlp.loop.svg").read_text().lstrip().startswith(("<?xml", "<svg"))
    assert (tmp_path / "mlp.te.dot").read_text().startswith("digraph")
    assert (tmp_path / "roofline.png").read_bytes().startswith(b"\x89PNG")


def test_quantization_commands_run(tmp_path: Path) -> None:
    result = _run_block("minimlc quantize examples", tmp_path)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "mlp.int8.onnx").exists()
    assert re.search(r"top-1 agreement: \d+/16", result.stdout), result.stdout


CROSS_TOOLS = ["aarch64-linux-gnu-gcc", "riscv64-linux-gnu-gcc", "qemu-aarch64", "qemu-riscv64"]
"""The cross compilers and emulators the README's other-CPU blocks use."""


def _run_cross_block(marker: str, tmp_path: Path, needed: list[str]) -> subprocess.CompletedProcess[str]:
    """The `sh` block holding `marker`, which builds for another CPU and runs it under qemu, with `examples/c/main.c`
    copied beside the model; skips where a cross compiler or qemu in `needed` is missing."""
    if missing := [tool for tool in needed if shutil.which(tool) is None]:
        pytest.skip(f"not installed: {', '.join(missing)} (CI installs them)")
    (tmp_path / "examples" / "c").mkdir(parents=True, exist_ok=True)
    shutil.copy(ROOT / "examples" / "c" / "main.c", tmp_path / "examples" / "c" / "main.c")
    return _run_block(marker, tmp_path)


def test_bfloat16_commands_run(tmp_path: Path) -> None:
    """The bfloat16 block as written: the MLP built with bfloat16 products for AArch64 with BF16 runs under qemu, its
    logits within 2e-2 of max |logit| of the float32 build's on the same (main.c's) input."""
    result = _run_cross_block("--precision bf16 --target", tmp_path, CROSS_TOOLS)  # and the "Other CPUs" block's
    assert result.returncode == 0, result.stderr
    listing = subprocess.run(["aarch64-linux-gnu-objdump", "-d", str(tmp_path / "bf16" / "libmodel.so")],
                             capture_output=True, text=True, check=True).stdout  # fmt: skip
    assert "\tbfdot\t" in listing
    float_block = _run_block("qemu-aarch64 -L", tmp_path)  # the "Other CPUs" block: the float32 AArch64 build
    assert float_block.returncode == 0, float_block.stderr
    bf16 = np.array(result.stdout.split("output logits")[1].split()[1:], float)
    float32 = np.array(float_block.stdout.split("output logits")[1].split()[1:], float)
    assert bf16.shape == float32.shape == (10,)
    assert np.abs(bf16 - float32).max() <= 2e-2 * np.abs(float32).max()
    assert not np.array_equal(bf16, float32)  # the products were rounded to bfloat16


def test_other_cpus_commands_run(tmp_path: Path) -> None:
    """The "Other CPUs" block as written (its `examples/c/main.c` copied beside the model)."""
    result = _run_cross_block("qemu-aarch64 -L", tmp_path, CROSS_TOOLS)
    assert result.returncode == 0, result.stderr
    aarch64, riscv64 = (np.array(text.split()[1:], float) for text in result.stdout.split("output logits")[1:])
    assert aarch64.shape == riscv64.shape == (10,)
    np.testing.assert_allclose(aarch64, riscv64, rtol=1e-5)
