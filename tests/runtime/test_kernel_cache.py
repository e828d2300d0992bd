"""The kernel cache (driver/kernel_cache.py): a model whose kernels another model compiled loads them (its code
bitwise the cold compile's), a corrupt entry is recompiled with a warning, another target or LLVM level misses, and
`minimlc cache` shows and clears kernel entries."""

from __future__ import annotations

import os
import subprocess
import sys
import warnings
from pathlib import Path

import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.driver import kernel_cache


def mlp(layers: int, seed: int = 0, rows: int = 8) -> onnx.ModelProto:
    """`layers` times x @ W + b, ReLU (16 -> 16, `rows` rows): every layer is the same kernel, with its own weights."""
    rng = np.random.default_rng(seed)
    nodes, weights, x = [], [], "x"
    for layer in range(layers):
        w, b = rng.standard_normal((16, 16)).astype(np.float32), rng.standard_normal(16).astype(np.float32)
        weights += [numpy_helper.from_array(w, f"w{layer}"), numpy_helper.from_array(b, f"b{layer}")]
        nodes += [
            helper.make_node("MatMul", [x, f"w{layer}"], [f"m{layer}"]),
            helper.make_node("Add", [f"m{layer}", f"b{layer}"], [f"a{layer}"]),
            helper.make_node("Relu", [f"a{layer}"], [f"y{layer}"]),
        ]
        x = f"y{layer}"
    graph = helper.make_graph(
        nodes,
        "mlp",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [rows, 16])],
        [helper.make_tensor_value_info(x, TensorProto.FLOAT, [rows, 16])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])


def reference(model: onnx.ModelProto, x: np.ndarray) -> np.ndarray:
    values = {tensor.name: numpy_helper.to_array(tensor) for tensor in model.graph.initializer} | {"x": x}
    for node in model.graph.node:
        a, *rest = (values[name] for name in node.input)
        ops = {"MatMul": lambda: a @ rest[0], "Add": lambda: a + rest[0], "Relu": lambda: np.maximum(a, 0)}
        values[node.output[0]] = ops[node.op_type]()
    return values[model.graph.output[0].name]


X = np.random.default_rng(1).standard_normal((8, 16)).astype(np.float32)


@pytest.fixture
def cache_on(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    monkeypatch.setenv("MINIMLC_CACHE", "1")
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(tmp_path / "cache"))
    return tmp_path / "cache"


def test_a_model_sharing_every_kernel_compiles_none_and_computes_as_a_cold_compile(
    cache_on: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    first = InferenceSession(mlp(1))
    assert first.stats["kernel_cache_hits"] == 0
    assert first.stats["kernel_cache_misses"] > 0
    stored = kernel_cache.entries()
    assert len(stored) == first.stats["kernel_cache_misses"]
    warm = InferenceSession(mlp(3, seed=2))
    assert warm.stats["cache_hit"] == 0  # another model: no whole-model hit
    assert warm.stats["kernel_cache_hits"] == len(stored)
    assert warm.stats["kernel_cache_misses"] == 0
    monkeypatch.setenv("MINIMLC_CACHE_DIR", str(cache_on.parent / "cold"))
    cold = InferenceSession(mlp(3, seed=2))
    assert cold.stats["kernel_cache_hits"] == 0
    got = warm.run(None, {"x": X})[0]
    np.testing.assert_array_equal(got, cold.run(None, {"x": X})[0])
    np.testing.assert_allclose(got, reference(mlp(3, seed=2), X), rtol=1e-5, atol=1e-5)


def test_a_corrupt_or_truncated_entry_is_recompiled_with_a_warning(cache_on: Path) -> None:
    InferenceSession(mlp(1))
    entries = kernel_cache.entries()
    truncated, flipped = entries[0], entries[-1]
    truncated.write_bytes(truncated.read_bytes()[:100])
    data = bytearray(flipped.read_bytes())
    data[-1] ^= 0xFF
    flipped.write_bytes(bytes(data))
    with pytest.warns(RuntimeWarning, match="recompiling a bad kernel-cache entry") as caught:
        session = InferenceSession(mlp(2))
    bad = {truncated, flipped}
    assert len([w for w in caught if "kernel-cache" in str(w.message)]) == len(bad)
    assert session.stats["kernel_cache_misses"] == len(bad)
    np.testing.assert_allclose(session.run(None, {"x": X})[0], reference(mlp(2), X), rtol=1e-5, atol=1e-5)
    assert all(path.exists() for path in bad)  # rewritten
    assert InferenceSession(mlp(3)).stats["kernel_cache_misses"] == 0


@pytest.mark.parametrize("option", [{"target": "x86-64-v2"}, {"opt_level": 0}])
def test_another_target_or_llvm_level_misses(cache_on: Path, option: dict[str, object]) -> None:
    if "target" in option and os.uname().machine != "x86_64":
        pytest.skip("an x86 target")
    InferenceSession(mlp(1))
    other = InferenceSession(mlp(2), **option)
    assert other.stats["kernel_cache_hits"] == 0
    assert other.stats["kernel_cache_misses"] > 0
    np.testing.assert_allclose(other.run(None, {"x": X})[0], reference(mlp(2), X), rtol=1e-5, atol=1e-5)


def test_a_kernel_of_other_shapes_misses(cache_on: Path) -> None:
    InferenceSession(mlp(1))
    other = InferenceSession(mlp(2, rows=12))
    assert other.stats["kernel_cache_misses"] > 0
    x = np.random.default_rng(3).standard_normal((12, 16)).astype(np.float32)
    np.testing.assert_allclose(other.run(None, {"x": x})[0], reference(mlp(2, rows=12), x), rtol=1e-5, atol=1e-5)


def test_cache_off_uses_no_kernel_cache(cache_on: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("MINIMLC_CACHE", "0")
    session = InferenceSession(mlp(1))
    assert "kernel_cache_hits" not in session.stats
    assert kernel_cache.entries() == []


@pytest.mark.slow
def test_cli_shows_and_clears_kernel_entries(cache_on: Path) -> None:
    InferenceSession(mlp(1))
    count = len(kernel_cache.entries())
    size = sum(path.stat().st_size for path in kernel_cache.entries())

    def cli(action: str) -> subprocess.CompletedProcess[str]:
        command = [sys.executable, "-m", "minimlc.tools.minimlc_cli", "cache", action]
        return subprocess.run(command, env=dict(os.environ), text=True, capture_output=True)

    info = cli("info")
    assert info.returncode == 0
    assert "Traceback" not in info.stderr
    assert f"kernel entries: {count}, {size} bytes" in info.stdout.splitlines()
    cleared = cli("clear")
    assert cleared.returncode == 0
    assert cleared.stdout.strip() == f"removed 1 entries and {count} kernel entries from {cache_on}"
    assert kernel_cache.entries() == []


@pytest.mark.slow
def test_concurrent_compiles_leave_whole_entries(cache_on: Path, tmp_path: Path) -> None:
    onnx.save(mlp(2), tmp_path / "mlp.onnx")
    script = f"from minimlc import InferenceSession; InferenceSession({str(tmp_path / 'mlp.onnx')!r})"
    command = [sys.executable, "-W", "error::RuntimeWarning", "-c", script]
    writers = [subprocess.Popen(command, stderr=subprocess.PIPE, text=True) for _ in range(2)]
    for writer in writers:
        _, errors = writer.communicate()
        assert writer.returncode == 0, errors
    assert not list((cache_on / "kernels").glob(".*.tmp"))
    with warnings.catch_warnings():
        warnings.simplefilter("error", RuntimeWarning)  # every entry whole: no bad one to recompile
        session = InferenceSession(mlp(3))
    assert session.stats["kernel_cache_misses"] == 0


def test_two_copies_of_one_kernel_in_a_model_become_one(cache_on: Path) -> None:
    from xdsl.dialects import func
    from xdsl.dialects.builtin import SymbolRefAttr

    from minimlc.driver.cache import kernel_context
    from minimlc.driver.codegen import jit_optimizer
    from minimlc.driver.kernel_cache import compile_with_kernel_cache
    from minimlc.frontend.onnx import import_model
    from minimlc.lowering.pipeline import run_pipeline, stage_passes
    from minimlc.lowering.target import target_from_name

    module = import_model(mlp(2)).module
    target = target_from_name("host")
    run_pipeline(module, 3, stop_after="program", target=target)
    calls = [op for op in module.walk() if isinstance(op, func.CallOp) and "fused" in op.callee.string_value()]
    kernel = next(
        op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == calls[1].callee.string_value()
    )
    copy = kernel.clone()
    copy.sym_name = type(copy.sym_name)("a_copy")
    module.body.block.add_op(copy)
    calls[1].callee = SymbolRefAttr("a_copy")
    passes = stage_passes(3, start_after="program")
    result = compile_with_kernel_cache(module, passes, jit_optimizer(target, 3), target, kernel_context(target, [], 3))
    names = [op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp)]
    assert len(names) == len(set(names))  # one definition each
    assert "a_copy" not in names
    assert calls[0].callee == calls[1].callee
    assert calls[0].callee.string_value().startswith("mlk_")
    assert result.misses == len(kernel_cache.entries()) == 2  # the kernel and its weights' packing
