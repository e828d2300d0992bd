"""Intermediates share one liveness-planned arena: numerics vs ONNX Runtime, reuse, concurrent runs, session stats."""

from __future__ import annotations

import math
import sys
import threading
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples"))
from make_mlp import build_mlp

RTOL, ATOL = 1e-4, 1e-4
"""Six chained layers of float32 sums, in a different summation order than ONNX Runtime's."""


def residual_conv_chain(channels: int = 8, size: int = 12, blocks: int = 3) -> onnx.ModelProto:
    """`blocks` residual blocks (conv, relu, conv, add the block's input, relu): 2 * blocks 3x3 convolutions.

    Each block's input stays alive across its two convolutions, so liveness is not just a chain.
    """
    rng = np.random.default_rng(0)
    nodes, weights = [], []
    previous = "x"
    for block in range(blocks):
        for layer in range(2):
            name = f"b{block}c{layer}"
            weight = rng.standard_normal((channels, channels, 3, 3)).astype(np.float32) / (3 * channels)
            weights += [numpy_helper.from_array(weight, f"{name}.w")]
            weights += [numpy_helper.from_array(rng.standard_normal(channels).astype(np.float32), f"{name}.b")]
            source = previous if layer == 0 else f"b{block}r0"
            nodes.append(helper.make_node("Conv", [source, f"{name}.w", f"{name}.b"], [name], pads=[1, 1, 1, 1]))
            if layer == 0:
                nodes.append(helper.make_node("Relu", [name], [f"b{block}r0"]))
        nodes.append(helper.make_node("Add", [f"b{block}c1", previous], [f"b{block}sum"]))
        output = "y" if block == blocks - 1 else f"b{block}out"
        nodes.append(helper.make_node("Relu", [f"b{block}sum"], [output]))
        previous = output
    shape = [1, channels, size, size]
    graph = helper.make_graph(
        nodes,
        "residual_conv_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, shape)],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, shape)],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def matmul_chain(width: int = 64, layers: int = 6) -> onnx.ModelProto:
    """`layers` MatMul + Tanh layers on a [4, width] input."""
    rng = np.random.default_rng(1)
    nodes, weights = [], []
    previous = "x"
    for layer in range(layers):
        weight = rng.standard_normal((width, width)).astype(np.float32) / math.sqrt(width)
        weights.append(numpy_helper.from_array(weight, f"w{layer}"))
        nodes.append(helper.make_node("MatMul", [previous, f"w{layer}"], [f"m{layer}"]))
        previous = "y" if layer == layers - 1 else f"t{layer}"
        nodes.append(helper.make_node("Tanh", [f"m{layer}"], [previous]))
    graph = helper.make_graph(
        nodes,
        "matmul_chain",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, width])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [4, width])],
        weights,
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 13)], ir_version=8)


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return [np.asarray(output) for output in session.run(None, feeds)]


@pytest.fixture(scope="module")
def conv_chain() -> tuple[onnx.ModelProto, InferenceSession]:
    model = residual_conv_chain()
    return model, InferenceSession(model)


@pytest.mark.parametrize("seed", [0, 1])
def test_conv_chain_matches_onnxruntime_and_reuses_memory(
    conv_chain: tuple[onnx.ModelProto, InferenceSession], seed: int
) -> None:
    model, session = conv_chain
    x = np.random.default_rng(seed).standard_normal((1, 8, 12, 12)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    (actual,) = session.run(None, {"x": x})
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)
    stats = session.stats
    assert 0 < stats["arena_bytes"] < stats["intermediate_bytes"]


@pytest.mark.parametrize("opt_level", [0, 1, 2, 3])
def test_matmul_chain_matches_onnxruntime_and_reuses_memory(opt_level: int) -> None:
    model = matmul_chain()
    session = InferenceSession(model, opt_level=opt_level)
    x = np.random.default_rng(2).standard_normal((4, 64)).astype(np.float32)
    (expected,) = onnxruntime_outputs(model, {"x": x})
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=RTOL, atol=ATOL)
    stats = session.stats
    if opt_level == 0:  # no planning: every intermediate is allocated on its own
        assert stats["arena_bytes"] == stats["intermediate_bytes"] == 0
    else:  # at least five [4, 64] intermediates in a chain: two buffers' worth is enough, whatever te-inline fuses;
        # from O2 on, a fused MatMul + Tanh kernel holds its input, the MatMul's output and its own output at once
        live = 2 if opt_level == 1 else 3
        assert stats["arena_bytes"] <= live * 4 * 64 * 4 < stats["intermediate_bytes"]


def test_concurrent_runs_on_one_session_are_correct(conv_chain: tuple[onnx.ModelProto, InferenceSession]) -> None:
    model, session = conv_chain
    rng = np.random.default_rng(3)
    inputs = [rng.standard_normal((1, 8, 12, 12)).astype(np.float32) for _ in range(2)]
    expected = [onnxruntime_outputs(model, {"x": x})[0] for x in inputs]
    failures: list[str] = []

    def worker(index: int) -> None:
        for call in range(200):
            (actual,) = session.run(None, {"x": inputs[index]})
            if not np.allclose(actual, expected[index], rtol=RTOL, atol=ATOL):
                failures.append(f"thread {index}, call {call}")
                return

    threads = [threading.Thread(target=worker, args=(index,)) for index in range(2)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, f"wrong results from concurrent runs: {failures}"


def test_stats_describe_the_session() -> None:
    model = build_mlp(batch=1)
    session = InferenceSession(model)
    stats = session.stats
    assert set(stats) == {
        "kernels",
        "kernel_functions",
        "arena_bytes",
        "intermediate_bytes",
        "weight_bytes",
        "compile_seconds",
        "lower_seconds",
        "codegen_seconds",
        "load_seconds",
        "codegen_partitions",
        "lower_to_scf_seconds",
        "translate_seconds",
        "optimize_seconds",
        "machine_code_seconds",
        "cache_hit",
        "compiles",
    }
    assert stats["compiles"] == 1  # a static model: compiled once, at construction
    assert stats["cache_hit"] == 0  # the suite compiles without the cache (tests/conftest.py)
    assert 1 <= stats["kernel_functions"] <= stats["kernels"]
    assert 0 < stats["arena_bytes"] <= stats["intermediate_bytes"]
    assert stats["weight_bytes"] == sum(numpy_helper.to_array(init).nbytes for init in model.graph.initializer)
    stages = stats["lower_seconds"] + stats["codegen_seconds"] + stats["load_seconds"]
    assert stats["compile_seconds"] == pytest.approx(stages)
    assert stats["codegen_partitions"] == 1, "a model this small is compiled in one process"
    steps = ("lower_to_scf_seconds", "translate_seconds", "optimize_seconds", "machine_code_seconds")
    assert sum(stats[step] for step in steps) <= stats["codegen_seconds"]
    assert stats["compile_seconds"] == session.compile_seconds
    weights = {init.name: numpy_helper.to_array(init) for init in model.graph.initializer}
    assert session.with_weights(weights).stats == stats, "rebinding weights keeps the compiled code and its stats"
    stats["kernels"] = -1
    assert session.stats["kernels"] != -1, "stats must be a copy"


def test_identical_layers_share_kernels(conv_chain: tuple[onnx.ModelProto, InferenceSession]) -> None:
    _, session = conv_chain
    assert session.stats["kernel_functions"] < session.stats["kernels"]
