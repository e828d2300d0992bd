"""Einsum on float64 and integer operands (multiplied and summed in their own type), diagonals (a letter twice in one
operand) and ellipses, against ONNX Runtime at O0 and O3 (conftest); float32 forms are in
test_onnx_tensor_ops.py."""

from __future__ import annotations

import numpy as np
import onnxruntime as ort
import pytest
from onnx import helper

from minimlc import InferenceSession

CASES = [  # equation, operand shapes
    ("bij,bjk->bik", [(5, 2, 3), (5, 3, 4)]),
    ("i,i", [(5,), (5,)]),
    ("->", [()]),
    ("ij->i", [(3, 4)]),
    ("ij->ji", [(3, 4)]),
    ("ij,kj->ik", [(3, 4), (2, 4)]),
    ("ab,cd->abcd", [(2, 3), (4, 5)]),
    ("ii->i", [(4, 4)]),
    ("...ii->...i", [(3, 5, 5)]),
    ("iji->j", [(3, 2, 3)]),
    ("...ij,...jk->...ik", [(2, 3, 4), (2, 4, 5)]),
    ("...ij,jk", [(2, 3, 4), (4, 5)]),
    ("bii,bi->b", [(2, 3, 3), (2, 3)]),
]


def _run(equation: str, shapes: list[tuple[int, ...]], dtype: type) -> tuple[list[np.ndarray], list[np.ndarray]]:
    rng = np.random.default_rng(2)
    names = [f"x{i}" for i in range(len(shapes))]
    kind = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    graph = helper.make_graph(
        [helper.make_node("Einsum", names, ["y"], equation=equation)],
        "einsum",
        [helper.make_tensor_value_info(name, kind, shape) for name, shape in zip(names, shapes)],
        [helper.make_tensor_value_info("y", kind, np.einsum(equation, *map(np.zeros, shapes)).shape)],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12)], ir_version=8)
    feeds = {
        name: (rng.standard_normal(shape) * 4).astype(dtype) if shape else np.array(2.5).astype(dtype)
        for name, shape in zip(names, shapes)
    }
    expected = ort.InferenceSession(model.SerializeToString()).run(None, feeds)
    return InferenceSession(model, cache=False).run(None, feeds), expected


@pytest.mark.parametrize("dtype", [np.float64, np.int64, np.int32, np.float32], ids=lambda d: np.dtype(d).name)
@pytest.mark.parametrize(("equation", "shapes"), CASES, ids=str)
def test_einsum_matches_onnxruntime(equation: str, shapes: list[tuple[int, ...]], dtype: type) -> None:
    (actual,), (expected,) = _run(equation, shapes, dtype)
    assert actual.dtype == expected.dtype
    np.testing.assert_allclose(actual, expected, rtol=1e-5 if dtype == np.float32 else 1e-12, atol=1e-5)
