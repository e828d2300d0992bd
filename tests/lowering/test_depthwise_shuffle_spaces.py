"""The `depthwise` and `shuffle` schedule spaces on a channel shuffle, a padded 3x3 depthwise convolution and a 1x1
convolution (the depthwise convolution channels-last): every config of each space keeps the numbers (against numpy
in float64), and a config outside the space is named."""

from __future__ import annotations

import itertools

import numpy as np
import onnx
import pytest
from numpy.lib.stride_tricks import sliding_window_view
from onnx import TensorProto, helper, numpy_helper
from schedule_cases import scheduled_run, space_of

from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import run_pipeline
from minimlc.lowering.schedule.space import Config, ConfigError

RTOL = ATOL = 1e-4
GROUPS, CHANNELS, SIZE = 4, 48, 14
RNG = np.random.default_rng(0)
W_DEPTHWISE = RNG.uniform(-1.0, 1.0, (CHANNELS, 1, 3, 3)).astype(np.float32)
W_POINTWISE = RNG.uniform(-1.0, 1.0, (16, CHANNELS, 1, 1)).astype(np.float32)


def _model() -> onnx.ModelProto:
    shape5 = np.array([1, GROUPS, CHANNELS // GROUPS, SIZE, SIZE])
    shape4 = np.array([1, CHANNELS, SIZE, SIZE])
    nodes = [
        helper.make_node("Reshape", ["x", "s5"], ["r"]),
        helper.make_node("Transpose", ["r"], ["t"], perm=[0, 2, 1, 3, 4]),
        helper.make_node("Reshape", ["t", "s4"], ["s"]),
        helper.make_node("Conv", ["s", "wd"], ["d"], group=CHANNELS, pads=[1, 1, 1, 1]),
        helper.make_node("Conv", ["d", "wp"], ["y"]),
    ]
    initializers = {"s5": shape5, "s4": shape4, "wd": W_DEPTHWISE, "wp": W_POINTWISE}
    graph = helper.make_graph(
        nodes,
        "m",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [1, CHANNELS, SIZE, SIZE])],
        [helper.make_tensor_value_info("y", TensorProto.FLOAT, [1, 16, SIZE, SIZE])],
        [numpy_helper.from_array(value, name) for name, value in initializers.items()],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=9)


def _reference(x: np.ndarray) -> np.ndarray:
    shuffled = x.astype(np.float64).reshape(1, GROUPS, -1, SIZE, SIZE).transpose(0, 2, 1, 3, 4).reshape(x.shape)
    padded = np.pad(shuffled, ((0, 0), (0, 0), (1, 1), (1, 1)))
    windows = sliding_window_view(padded, (3, 3), axis=(2, 3))  # n, c, h, w, kh, kw
    depthwise = np.einsum("nchwij,cij->nchw", windows, W_DEPTHWISE[:, 0].astype(np.float64))
    return np.einsum("nchw,fc->nfhw", depthwise, W_POINTWISE[:, :, 0, 0].astype(np.float64))


def _run(rule: str, config: Config | None, x: np.ndarray) -> np.ndarray:
    """The model with its `rule` kernel scheduled by `config` (None: its default), run on `x`."""
    return scheduled_run(_model(), rule, lambda space: config or space.space.default(), x)


def _configs(rule: str) -> list[Config]:
    imported = import_model(_model())
    run_pipeline(imported.module, 3, stop_after="schedule")
    knobs = space_of(imported.module, rule).space.knobs
    return [dict(zip((k.name for k in knobs), values)) for values in itertools.product(*(k.values for k in knobs))]


@pytest.mark.slow
@pytest.mark.parametrize("rule", ["depthwise", "shuffle"])
def test_every_config_keeps_the_numbers(rule: str) -> None:
    x = np.random.default_rng(1).standard_normal((1, CHANNELS, SIZE, SIZE)).astype(np.float32)
    expected = _reference(x)
    configs = _configs(rule)
    assert len(configs) >= 2
    for config in configs[:: max(1, len(configs) // 12)]:
        np.testing.assert_allclose(_run(rule, config, x), expected, rtol=RTOL, atol=ATOL, err_msg=str(config))


def test_depthwise_space_names_a_bad_vector_width() -> None:
    imported = import_model(_model())
    run_pipeline(imported.module, 3, stop_after="schedule")
    space = space_of(imported.module, "depthwise")
    with pytest.raises(ConfigError, match=r"knob 'nr' = 3 is not in its range"):
        space.steps({**space.space.default(), "nr": 3})
