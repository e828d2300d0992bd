"""`minimlc generate` on a LLaMA-style decoder file: the ids `Generator` gives, tokens/s, and clear refusals."""

from __future__ import annotations

import shutil
import subprocess
import sys
from pathlib import Path

import onnx
import pytest
from llama_cache import LlamaDims, llama_with_cache

from minimlc import Generator
from minimlc.tools.minimlc_cli import main

DIMS = LlamaDims(hidden=32, heads=2, kv_heads=1, ffn=64, vocab=128, layers=1)


@pytest.fixture(autouse=True)
def compile_cache(monkeypatch):
    """The command's compiles share the suite's throw-away cache: what is tested here is the command, not the code."""
    monkeypatch.setenv("MINIMLC_CACHE", "1")


@pytest.fixture(scope="module")
def model_path(tmp_path_factory) -> Path:
    path = tmp_path_factory.mktemp("generate") / "llama.onnx"
    onnx.save(llama_with_cache(DIMS), path)
    return path


def test_prints_the_generator_s_ids_and_tokens_per_second(model_path, capsys):
    expected = Generator(model_path, max_length=64, num_threads=1).generate([3, 1, 4], max_new_tokens=12)
    arguments = ["generate", str(model_path), "--prompt-ids", "3,1,4", "--max-new-tokens", "12", "--threads", "1"]
    assert main(arguments) == 0
    out, err = capsys.readouterr()
    assert out.strip() == ",".join(map(str, expected))
    assert "prefill: 3 tokens at" in err
    assert "decode: 12 tokens at" in err


def test_stream_prints_one_id_per_line_and_sampling_follows_the_seed(model_path, capsys):
    arguments = [
        "generate",
        str(model_path),
        "--prompt-ids",
        "3,1,4",
        "--max-new-tokens",
        "6",
        "--stream",
        "--do-sample",
        "--top-k",
        "10",
        "--seed",
        "5",
    ]
    assert main(arguments) == 0
    first = capsys.readouterr().out.split()
    assert main(arguments) == 0
    assert capsys.readouterr().out.split() == first
    assert len(first) == 6


@pytest.mark.parametrize(
    ("arguments", "message"),
    [
        (["--prompt-ids", "1,x"], "--prompt-ids takes comma-separated integers, got '1,x'"),
        (["--prompt-ids", "1", "--seed", "3"], "--seed need --do-sample"),
        (["--prompt-ids", "1,2", "--max-new-tokens", "70", "--max-length", "64"], "exceed max_length 64"),
    ],
)
def test_bad_arguments_are_refused_with_a_message(model_path, capsys, arguments, message):
    assert main(["generate", str(model_path), *arguments]) == 1
    assert message in capsys.readouterr().err


def test_a_model_that_is_not_a_decoder_is_refused(capsys):
    assert main(["generate", "examples/mlp.onnx", "--prompt-ids", "1"]) == 1
    assert "no input 'input_ids'" in capsys.readouterr().err


@pytest.mark.slow
def test_the_readme_s_generation_command_runs(tmp_path):
    """The README's "Text generation" command, run as written in a copy of `examples/` with this venv's tools."""
    root = Path(__file__).resolve().parents[2]
    readme = (root / "README.md").read_text()
    command = (
        ".venv/bin/python examples/make_llama.py && .venv/bin/minimlc generate examples/llama.onnx --prompt-ids 1,2,3 "
        "--max-new-tokens 16"
    )
    assert f"```sh\n{command}\n```" in readme
    shutil.copytree(root / "examples", tmp_path / "examples", ignore=shutil.ignore_patterns("*.onnx", "plugin", "c"))
    bin_dir = Path(sys.executable).parent
    result = subprocess.run(
        ["bash", "-c", command.replace(".venv/bin/", f"{bin_dir}/")],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    ids = result.stdout.strip().splitlines()[-1].split(",")
    assert len(ids) == 16
    assert "decode: 16 tokens at" in result.stderr
