"""float16 and bfloat16 chains round every op's result, fused or not: an op on 16-bit floats computes in float32 and
rounds once, where it stores, and `te-inline` substitutes the producer's rounded value (the body of its cast back to
16 bits), so the fused kernel of O2/O3 gives bitwise the answer of O0's one kernel per op, and numpy's op-by-op
rounding. The chain's ops are exact in float32 (no math approximation can differ between levels)."""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper

from minimlc import InferenceSession

SHAPE = [4, 33]


def _chain(element: int) -> onnx.ModelProto:
    nodes = [
        helper.make_node("Add", ["x", "y"], ["s"]),
        helper.make_node("Mul", ["s", "y"], ["p"]),
        helper.make_node("Div", ["p", "x"], ["q"]),
        helper.make_node("Sub", ["q", "y"], ["d"]),
        helper.make_node("Abs", ["d"], ["a"]),
        helper.make_node("Sqrt", ["a"], ["r"]),
        helper.make_node("Mul", ["r", "x"], ["z"]),
    ]
    inputs = [helper.make_tensor_value_info(name, element, SHAPE) for name in "xy"]
    graph = helper.make_graph(nodes, "chain", inputs, [helper.make_tensor_value_info("z", element, SHAPE)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 18)], ir_version=8)


def _op_by_op(x: np.ndarray, y: np.ndarray, *, round_each: bool = True) -> np.ndarray:
    """Each op in float32, its result rounded to the 16-bit type (as ONNX Runtime does op by op); without
    `round_each`, rounded once at the end (what a fused kernel without the producers' rounding would give)."""

    def rounded(value: np.ndarray) -> np.ndarray:
        return value.astype(x.dtype).astype(np.float32) if round_each else value

    x32, y32 = x.astype(np.float32), y.astype(np.float32)
    s = rounded(x32 + y32)
    p = rounded(s * y32)
    q = rounded(p / x32)
    d = rounded(q - y32)
    r = rounded(np.sqrt(rounded(np.abs(d))))
    return (r * x32).astype(x.dtype)


@pytest.mark.parametrize(
    ("dtype", "element"),
    [(np.float16, TensorProto.FLOAT16), (ml_dtypes.bfloat16, TensorProto.BFLOAT16)],
    ids=["float16", "bfloat16"],
)
def test_fused_chain_rounds_like_the_unfused_one(dtype: type, element: int) -> None:
    rng = np.random.default_rng(3)
    x = (rng.standard_normal(SHAPE) * 3).astype(dtype)
    y = (rng.standard_normal(SHAPE) * 3).astype(dtype)
    model = _chain(element)
    results = {
        level: InferenceSession(model, opt_level=level, cache=False).run(None, {"x": x, "y": y})[0]
        for level in (0, 2, 3)
    }
    expected = _op_by_op(x, y).view(np.uint16)
    assert np.count_nonzero(_op_by_op(x, y, round_each=False).view(np.uint16) != expected) > 10  # a sensitive test
    for level, result in results.items():
        np.testing.assert_array_equal(result.view(np.uint16), expected, err_msg=f"O{level}")
