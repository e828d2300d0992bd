"""Numerics of ops on run-time int32, int64 and bool tensors (and float comparisons, casts and index ops), end to
end through InferenceSession at O0 and O3 (`tests/ops/conftest.py`), against ONNX Runtime: integer and bool outputs
exactly, float ones at rtol=1e-5. Every input is a graph input, so nothing is folded at import time: native code
computes each case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper

from minimlc import InferenceSession

RNG = np.random.default_rng(7)


def _ints(shape: Sequence[int], dtype: Any = np.int64, low: int = -9, high: int = 10) -> np.ndarray:
    return RNG.integers(low, high, size=shape).astype(dtype)


def _floats(shape: Sequence[int]) -> np.ndarray:
    return RNG.uniform(-3.0, 3.0, size=shape).astype(np.float32)


def _bools(shape: Sequence[int]) -> np.ndarray:
    return RNG.integers(0, 2, size=shape).astype(np.bool_)


def _model(
    op_type: str,
    feeds: Mapping[str, np.ndarray],
    attributes: Mapping[str, Any],
    constants: Mapping[str, np.ndarray] | None = None,
) -> onnx.ModelProto:
    constants = constants or {}
    inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in feeds.items()
    ]
    node = helper.make_node(op_type, [*feeds, *constants], ["Y"], **attributes)
    initializers = [onnx.numpy_helper.from_array(array, name) for name, array in constants.items()]
    model = helper.make_model(
        helper.make_graph([node], "typed", inputs, [helper.make_tensor_value_info("Y", 0, None)], initializers),
        opset_imports=[helper.make_opsetid("", 18)],
        ir_version=8,
    )
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def _check(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray], opt_level: int) -> InferenceSession:
    (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, dict(feeds))
    session = InferenceSession(model, opt_level=opt_level, cache=False)
    (actual,) = session.run(None, dict(feeds))
    assert session.stats["kernels"] > 0
    assert actual.dtype == expected.dtype and actual.shape == expected.shape
    if np.issubdtype(expected.dtype, np.floating):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    else:
        np.testing.assert_array_equal(actual, expected)
    return session


def _case(op_type: str, feeds: Mapping[str, np.ndarray], **attributes: Any) -> Any:
    label = "-".join([op_type, *(f"{a.dtype}{list(a.shape)}" for a in feeds.values())])
    return pytest.param(op_type, dict(feeds), attributes, id=label)


DIVISORS = np.array([[-3, -1, 5, 1, 2, 7]], np.int64)  # ONNX Runtime refuses a zero divisor
CASES = [
    *(_case(op, {"A": _ints((2, 3, 4)), "B": _ints((3, 1))}) for op in ("Add", "Sub", "Mul", "Max", "Min")),
    _case("Add", {"A": _ints((5,), np.int32), "B": _ints((5,), np.int32)}),
    _case("Div", {"A": _ints((4, 6), low=-50, high=50), "B": np.repeat(DIVISORS, 4, axis=0)}),
    _case("Div", {"A": _ints((6,), np.int32, -50, 50), "B": DIVISORS[0].astype(np.int32)}),
    _case("Mod", {"A": _ints((4, 6), low=-50, high=50), "B": np.repeat(DIVISORS, 4, axis=0)}),
    _case("Mod", {"A": _ints((4, 6), np.int32, -50, 50), "B": np.repeat(DIVISORS, 4, axis=0).astype(np.int32)}, fmod=1),
    _case("Neg", {"X": _ints((3, 4))}),
    _case("Abs", {"X": _ints((3, 4), np.int32)}),
    *(
        _case(op, {"A": _ints((3, 4), dtype, -2, 3), "B": _ints((4,), dtype, -2, 3)})
        for op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
        for dtype in (np.int64, np.int32)
    ),
    *(
        _case(op, {"A": _floats((3, 4)), "B": np.array([0.5, -1.0, np.nan, 2.0], np.float32)})
        for op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
    ),
    _case("Equal", {"A": _bools((3, 4)), "B": _bools((4,))}),
    *(_case(op, {"A": _bools((2, 3, 4)), "B": _bools((3, 1))}) for op in ("And", "Or", "Xor")),
    _case("Not", {"X": _bools((5, 7))}),
    _case("Where", {"C": _bools((3, 1)), "X": _floats((3, 4)), "Z": _floats((4,))}),
    _case("Where", {"C": _bools((2, 5)), "X": _ints((2, 5)), "Z": _ints((1,))}),
    _case("Where", {"C": _bools((17,)), "X": _ints((17,), np.int32), "Z": _ints((17,), np.int32)}),
    *(
        _case("Cast", {"X": feed}, to=helper.np_dtype_to_tensor_dtype(np.dtype(target)))
        for feed in (
            np.array([-2.7, -0.5, 0.0, 0.4, 1.5, 2.9, 1e6, -3e4], np.float32),
            _ints((8,), np.int64, -(1 << 40), 1 << 40),
            _ints((8,), np.int32),
            _bools((8,)),
        )
        for target in (np.float32, np.int32, np.int64, np.bool_)
        if feed.dtype != target
    ),
    _case("Gather", {"D": _floats((10, 6)), "I": _ints((2, 3), low=-10, high=10)}, axis=0),
    _case("Gather", {"D": _ints((4, 10, 3)), "I": _ints((5,), np.int32, -10, 10)}, axis=1),
    _case("Gather", {"D": _bools((3, 7)), "I": _ints((), low=-7, high=7)}, axis=-1),
    _case("GatherElements", {"D": _floats((4, 5)), "I": _ints((3, 5), low=-4, high=4)}, axis=0),
    _case("GatherElements", {"D": _ints((4, 5)), "I": _ints((4, 2), np.int32, -5, 5)}, axis=1),
    _case("ArgMax", {"X": _ints((3, 5), low=-2, high=3)}, axis=1),
    _case("ArgMax", {"X": _ints((3, 5), low=-2, high=3)}, axis=0, keepdims=0, select_last_index=1),
    _case("ArgMin", {"X": _floats((2, 3, 4))}, axis=-1, keepdims=0),
    _case("ArgMin", {"X": _ints((4, 6), np.int32, -2, 3)}, axis=1, select_last_index=1),
    _case("Transpose", {"X": _ints((2, 3, 4))}, perm=[2, 0, 1]),
    _case("Concat", {"A": _ints((2, 3)), "B": _ints((2, 1))}, axis=1),
    _case("Concat", {"A": _bools((1, 3)), "B": _bools((2, 3))}, axis=0),
    _case("Flatten", {"X": _ints((2, 3, 4), np.int32)}, axis=2),
    # large enough for the default schedules to vectorize and parallelise
    _case("And", {"A": _bools((64, 96)), "B": _bools((64, 96))}),
    _case("Not", {"X": _bools((64, 96))}),
    _case("Less", {"A": _floats((64, 96)), "B": _floats((96,))}),
    _case("Equal", {"A": _ints((64, 96), low=0, high=3), "B": _ints((64, 96), low=0, high=3)}),
    _case("Where", {"C": _bools((64, 96)), "X": _floats((64, 96)), "Z": _floats((64, 96))}),
    _case("Cast", {"X": _bools((64, 96))}, to=onnx.TensorProto.FLOAT),
    _case("Cast", {"X": _floats((64, 96))}, to=onnx.TensorProto.BOOL),
    _case("Cast", {"X": _floats((64, 96))}, to=onnx.TensorProto.INT64),
    _case("Add", {"A": _ints((64, 96)), "B": _ints((96,))}),
    _case("Mul", {"A": _ints((64, 96), np.int32), "B": _ints((64, 96), np.int32)}),
    _case("Gather", {"D": _floats((300, 64)), "I": _ints((4, 32), low=-300, high=300)}, axis=0),
    _case("Gather", {"D": _ints((100,)), "I": _ints((64,), low=-100, high=100)}, axis=0),
    _case("GatherElements", {"D": _floats((64, 64)), "I": _ints((64, 64), low=-64, high=64)}, axis=1),
    _case("Identity", {"X": _bools((3,))}),
]


@pytest.mark.parametrize(("op_type", "feeds", "attributes"), CASES)
def test_typed_op(op_type: str, feeds: dict[str, np.ndarray], attributes: dict[str, Any], opt_level: int) -> None:
    _check(_model(op_type, feeds, attributes), feeds, opt_level)


SHAPE_OPERAND_CASES = [
    ("Reshape", {"X": _ints((2, 6))}, np.array([3, -1], np.int64), {}),
    ("Expand", {"X": _bools((3, 1))}, np.array([2, 3, 4], np.int64), {}),
    ("Unsqueeze", {"X": _ints((2, 3), np.int32)}, np.array([0, 3], np.int64), {}),
    ("Squeeze", {"X": _ints((2, 1, 3))}, np.array([1], np.int64), {}),
    ("CumSum", {"X": _ints((3, 5))}, np.array(1, np.int64), {}),
    ("CumSum", {"X": _floats((3, 5))}, np.array(0, np.int32), {"exclusive": 1}),
    ("CumSum", {"X": _ints((2, 6), np.int32)}, np.array(-1, np.int64), {"reverse": 1}),
    ("CumSum", {"X": _ints((2, 6))}, np.array(1, np.int64), {"reverse": 1, "exclusive": 1}),
]


@pytest.mark.parametrize(
    ("op_type", "feeds", "operand", "attributes"),
    SHAPE_OPERAND_CASES,
    ids=[f"{case[0]}-{next(iter(case[1].values())).dtype}" for case in SHAPE_OPERAND_CASES],
)
def test_typed_op_with_a_constant_operand(
    op_type: str, feeds: dict[str, np.ndarray], operand: np.ndarray, attributes: dict[str, Any], opt_level: int
) -> None:
    _check(_model(op_type, feeds, attributes, {"K": operand}), feeds, opt_level)


def test_slice_of_int_data(opt_level: int) -> None:
    feeds = {"X": _ints((4, 6))}
    parameters = {"S": [1, 5], "E": [4, 0], "A": [0, 1], "P": [2, -2]}
    constants = {name: np.array(values, np.int64) for name, values in parameters.items()}
    _check(_model("Slice", feeds, {}, constants), feeds, opt_level)


@pytest.mark.parametrize("op_type", ["Div", "Mod"])
def test_integer_division_by_zero_gives_zero(op_type: str) -> None:
    """ONNX leaves it undefined (ONNX Runtime fails the run, LLVM's `sdiv` traps): minimlc gives 0, and wraps
    `MIN / -1`."""
    lowest = np.iinfo(np.int64).min
    feeds = {"A": np.array([7, -7, lowest, lowest], np.int64), "B": np.array([0, 0, -1, 0], np.int64)}
    (actual,) = InferenceSession(_model(op_type, feeds, {}), cache=False).run(None, feeds)
    expected = [0, 0, lowest, 0] if op_type == "Div" else [0, 0, 0, 0]
    np.testing.assert_array_equal(actual, np.array(expected, np.int64))
