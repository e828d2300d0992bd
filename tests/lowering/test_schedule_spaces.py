"""Schedule spaces: every sampled config of a conv, a GEMM, a pool and a layer-norm kernel keeps the numbers (against numpy in
float64, rtol/atol 1e-4, and against the default config), bad configs are named, and light ResNet-50's convolutions
and GEMMs each have a knob with a choice."""

from __future__ import annotations

import json
import random
import subprocess
import sys
from pathlib import Path

import numpy as np
import onnx
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper
from schedule_cases import scheduled_run, space_of

from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.schedule.default_schedule import KernelSpace
from minimlc.lowering.schedule.space import ConfigError

SAMPLES, SEED = 20, 0
RTOL = ATOL = 1e-4
RNG = np.random.default_rng(0)
W_CONV = (RNG.standard_normal((32, 16, 3, 3)) * 0.2).astype(np.float32)
B_GEMM = RNG.standard_normal((40, 256)).astype(np.float32)
S_NORM = RNG.standard_normal(40).astype(np.float32)


def _model(node: onnx.NodeProto, x: tuple[int, ...], y: tuple[int, ...], inits: list[np.ndarray]) -> onnx.ModelProto:
    graph = helper.make_graph(
        [node],
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, list(x))],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, list(y))],
        [numpy_helper.from_array(value, name) for name, value in zip(("w",), inits)],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def _conv_reference(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (3, 3), axis=(2, 3))  # n, c, oh, ow, kh, kw
    return np.einsum("nchwij,fcij->nfhw", windows, W_CONV.astype(np.float64))


def _pool_reference(x: np.ndarray) -> np.ndarray:
    padded = np.pad(x.astype(np.float64), ((0, 0), (0, 0), (1, 1), (1, 1)), constant_values=-np.inf)
    return sliding_window_view(padded, (3, 3), axis=(2, 3)).max(axis=(4, 5))


def _layer_norm_reference(x: np.ndarray) -> np.ndarray:
    wide = x.astype(np.float64)
    centred = wide - wide.mean(axis=-1, keepdims=True)
    return centred / np.sqrt((centred**2).mean(axis=-1, keepdims=True) + 1e-5) * S_NORM


CASES = {
    "conv": (
        _model(helper.make_node("Conv", ["x", "w"], ["y"], pads=[1] * 4), (1, 16, 14, 14), (1, 32, 14, 14), [W_CONV]),
        (1, 16, 14, 14),
        _conv_reference,
    ),
    "gemm": (
        _model(helper.make_node("MatMul", ["x", "w"], ["y"]), (24, 40), (24, 256), [B_GEMM]),
        (24, 40),
        lambda x: x.astype(np.float64) @ B_GEMM.astype(np.float64),
    ),
    "pool": (
        _model(
            helper.make_node("MaxPool", ["x"], ["y"], kernel_shape=[3, 3], pads=[1] * 4),
            (1, 8, 14, 14),
            (1, 8, 14, 14),
            [],
        ),
        (1, 8, 14, 14),
        _pool_reference,
    ),
    "rows": (
        _model(helper.make_node("LayerNormalization", ["x", "w"], ["y"]), (2, 6, 40), (2, 6, 40), [S_NORM]),
        (2, 6, 40),
        _layer_norm_reference,
    ),
}


@pytest.mark.slow
@pytest.mark.parametrize("rule", sorted(CASES))
def test_sampled_configs_keep_the_numbers(rule: str) -> None:
    _, shape, reference = CASES[rule]
    x = np.random.default_rng(1).standard_normal(shape).astype(np.float32)
    expected = reference(x)
    default = scheduled_run(CASES[rule][0], rule, lambda space: space.space.default(), x)
    np.testing.assert_allclose(default, expected, rtol=RTOL, atol=ATOL)
    rng = random.Random(SEED)
    for _ in range(SAMPLES):
        config = {}
        actual = scheduled_run(CASES[rule][0], rule, lambda space: config.update(space.space.sample(rng)) or config, x)
        np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL, err_msg=str(config))
        np.testing.assert_allclose(actual, default, rtol=RTOL, atol=ATOL, err_msg=str(config))


@pytest.mark.parametrize("order", ["k,i,j", "i,k,j"])
def test_gemm_column_blocks_keep_the_numbers(order: str) -> None:
    """`nc`: a column block outside the rows (BLIS's jc loop), in both loop orders, with a tail of rows."""
    x = np.random.default_rng(2).standard_normal((24, 40)).astype(np.float32)
    expected = CASES["gemm"][2](x)
    blocks: list[int] = []

    def blocked(space: KernelSpace) -> dict[str, object]:
        knob = next(k for k in space.space.knobs if k.name == "nc")
        blocks.append(int(knob.values[-1]))  # type: ignore[arg-type]
        return {**space.space.default(), "nc": knob.values[-1], "order": order, "mr": 5}

    actual = scheduled_run(CASES["gemm"][0], "gemm", blocked, x)
    assert blocks[0] > 0
    np.testing.assert_allclose(actual, expected, rtol=RTOL, atol=ATOL)


@pytest.mark.parametrize(
    ("change", "message"),
    [
        ({"mr": 17}, r"knob 'mr' = 17 is not in its range \[1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16\]"),
        ({"unroll": 1}, "knob 'unroll' = 1 is not in its range"),
        ({"tile": 4}, r"unknown knob\(s\) tile"),
    ],
)
def test_bad_config_values_are_named(change: dict[str, object], message: str) -> None:
    imported = import_model(CASES["gemm"][0])
    run_pipeline(imported.module, 3, stop_after="schedule")
    space = space_of(imported.module, "gemm")
    with pytest.raises(ConfigError, match=message):
        space.steps({**space.space.default(), **change})  # type: ignore[dict-item]


@pytest.mark.slow
def test_light_resnet50_convs_and_gemms_have_choices() -> None:
    path = Path(onnx.__file__).parent / "backend" / "test" / "data" / "light" / "light_resnet50.onnx"
    script = Path(sys.executable).parent / "minimlc"
    result = subprocess.run(
        [str(script), "compile", str(path), "--emit", "space", "--json"], capture_output=True, text=True, check=False
    )
    assert result.returncode == 0, result.stderr
    spaces = json.loads(result.stdout)
    scheduled = [space for space in spaces if space["rule"] in ("conv", "gemm")]
    assert {space["rule"] for space in scheduled} == {"conv", "gemm"}
    for space in scheduled:
        assert any(len(knob["values"]) >= 2 for knob in space["knobs"]), space
