"""Numerics of TensorScatter (opset 24), the key/value cache write, end to end through minimlc's InferenceSession at
every opt level, against ONNX Runtime, and its import errors. The write indices are run-time int64 inputs; caches of
float32, float16, int64, uint8 and bool are compared exactly (the op only moves elements).
"""

from __future__ import annotations

from typing import Any

import numpy as np
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError
from tests.ops.onnx_cases import check_against_onnxruntime, one_node_model

OPSET = 24


def _feeds(cache: tuple[int, ...], update: tuple[int, ...], starts: list[int], dtype: Any) -> dict[str, np.ndarray]:
    rng = np.random.default_rng(0)
    floating = np.issubdtype(dtype, np.floating)
    values = [rng.uniform(-1.0, 1.0, shape) if floating else rng.integers(0, 100, shape) for shape in (cache, update)]
    return {
        "past_cache": values[0].astype(dtype),
        "update": values[1].astype(dtype),
        "write_indices": np.array(starts, np.int64),
    }


@pytest.mark.parametrize(
    ("cache", "update", "starts", "attributes"),
    [
        ((2, 3, 6, 4), (2, 3, 2, 4), [0, 4], {}),
        ((2, 3, 6, 4), (2, 3, 3, 4), [5, 2], {"mode": "circular"}),
        ((3, 5, 4), (3, 2, 4), [1, 0, 3], {"axis": 1}),
        ((2, 4, 3, 5), (2, 4, 3, 2), [3, 1], {"axis": 3, "mode": "circular"}),
        ((2, 6, 4), (2, 6, 4), [0, 0], {"axis": -2}),
    ],
    ids=["linear", "circular_wraps", "3d", "last_axis_circular", "whole_cache"],
)
@pytest.mark.parametrize(
    "dtype", [np.float32, np.float16, np.int64, np.uint8, np.bool_], ids=["f32", "f16", "i64", "u8", "bool"]
)
def test_tensor_scatter(
    cache: tuple[int, ...], update: tuple[int, ...], starts: list[int], attributes: dict[str, Any], dtype: Any
) -> None:
    feeds = _feeds(cache, update, starts, dtype)
    model = one_node_model("TensorScatter", feeds, attributes, opset=OPSET)
    check_against_onnxruntime(InferenceSession, model, feeds, rtol=0)


def test_tensor_scatter_without_indices() -> None:
    """Without write_indices every batch row writes from position 0."""
    feeds = _feeds((2, 5, 3), (2, 2, 3), [0, 0], np.float32)
    del feeds["write_indices"]
    check_against_onnxruntime(InferenceSession, one_node_model("TensorScatter", feeds, {}, opset=OPSET), feeds, rtol=0)


@pytest.mark.parametrize(
    ("cache", "update", "attributes", "message"),
    [
        ((2, 6, 4), (2, 7, 4), {}, "does not fit"),
        ((2, 6, 4), (2, 2, 4), {"axis": 0}, "after the batch axis"),
        ((2, 6, 4), (2, 2, 4), {"mode": "ring"}, "linear' or 'circular"),
    ],
    ids=["update_too_long", "batch_axis", "mode"],
)
def test_tensor_scatter_refused(
    cache: tuple[int, ...], update: tuple[int, ...], attributes: dict[str, Any], message: str
) -> None:
    feeds = _feeds(cache, update, [0, 0], np.float32)
    node = helper.make_node("TensorScatter", list(feeds), ["Y"], **attributes)
    kinds = {name: helper.np_dtype_to_tensor_dtype(array.dtype) for name, array in feeds.items()}
    inputs = [helper.make_tensor_value_info(name, kinds[name], array.shape) for name, array in feeds.items()]
    graph = helper.make_graph([node], "g", inputs, [helper.make_tensor_value_info("Y", TensorProto.FLOAT, cache)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    with pytest.raises(ModelImportError, match=message):
        InferenceSession(model, cache=False)
