"""Each op of the fold set against ONNX Runtime: the same one-node model, its inputs initializers (folded at import by
minimlc's evaluators) or graph inputs (run by ONNX Runtime); the outputs must be equal exactly, element type, shape and
signs of zeros included. Where ONNX Runtime computes otherwise than minimlc's compiled op (a zero divisor, a signed
zero, a wrapping sum), the folded output must equal the compiled one."""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, NamedTuple

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.frontend.onnx import import_model

I64_MAX, I64_MIN = np.iinfo(np.int64).max, np.iinfo(np.int64).min
NAN, INF = float("nan"), float("inf")


class Case(NamedTuple):
    op: str
    inputs: Sequence[np.ndarray | None]
    attributes: dict[str, Any] = {}  # noqa: RUF012 (a NamedTuple default is never mutated)
    opset: int = 17
    outputs: int = 1


def _i64(*values: int) -> np.ndarray:
    return np.array(values, np.int64)


def _f32(*values: float) -> np.ndarray:
    return np.array(values, np.float32)


def _arange(*shape: int, dtype: type = np.int64) -> np.ndarray:
    return np.arange(int(np.prod(shape))).reshape(shape).astype(dtype)


SPECIALS = _f32(NAN, INF, -INF, 3e9, -3e9, 2.7, -2.7, 300.0, -3.7, 0.0, -0.0, 1e19, 65535.9)
HALVES = _f32(1 + 2**-11, 1 + 3 * 2**-11, 65520.0, 1e-7, -3e-8, 2**-24, NAN, -INF, 1 + 2**-8, 1 + 3 * 2**-8, 3e38)
"""float32 values halfway between float16 or bfloat16 neighbours, overflowing, subnormal."""
FLOATS = _f32(0.1, -7.25, 3.5, 1e30, -1e-30, 2.0**24 + 1, NAN, -0.0)
INT_PAIRS = (_i64(-7, 7, -7, 7, 0, I64_MIN, I64_MAX, -9), _i64(2, -2, -2, 2, 3, 2, 2, 3))
"""Dividends and divisors; no zero divisor nor MIN / -1, which crash ONNX Runtime (SIGFPE)."""

CASES: dict[str, Case] = {
    # shapes
    "shape": Case("Shape", [_arange(2, 3, 4)]),
    "shape-start-end": Case("Shape", [_arange(2, 3, 4)], {"start": -2, "end": -1}, opset=15),
    "shape-clamped": Case("Shape", [_arange(2, 3, 4)], {"start": 1, "end": 10}, opset=15),
    "size": Case("Size", [_arange(2, 3)]),
    "identity": Case("Identity", [_arange(2, 3)]),
    "dropout-mask": Case("Dropout", [_f32(1, 2, 3)], outputs=2, opset=13),
    # casts
    "cast-f32-i32": Case("Cast", [SPECIALS], {"to": TensorProto.INT32}),
    "cast-f32-i64": Case("Cast", [SPECIALS], {"to": TensorProto.INT64}),
    "cast-f32-i8": Case("Cast", [SPECIALS], {"to": TensorProto.INT8}),
    "cast-f32-u8": Case("Cast", [SPECIALS], {"to": TensorProto.UINT8}),
    "cast-f32-i16": Case("Cast", [SPECIALS], {"to": TensorProto.INT16}),
    "cast-f64-u32": Case("Cast", [np.array([3e9, 5.5, 0.0, 4294967295.0], np.float64)], {"to": TensorProto.UINT32}),
    "cast-f32-u64": Case("Cast", [_f32(1e19, 5.5, 0.0, 9.3e18)], {"to": TensorProto.UINT64}),
    "cast-i64-f32": Case("Cast", [_i64(2**24 + 1, I64_MAX, -3, 2**53 + 1)], {"to": TensorProto.FLOAT}),
    "cast-i64-i8": Case("Cast", [_i64(300, -129, 127, I64_MIN)], {"to": TensorProto.INT8}),
    "cast-f32-bool": Case("Cast", [SPECIALS], {"to": TensorProto.BOOL}),
    "cast-bool-f32": Case("Cast", [np.array([True, False])], {"to": TensorProto.FLOAT}),
    "cast-f64-f32": Case("Cast", [np.array([0.1, 1e40, -1e-50], np.float64)], {"to": TensorProto.FLOAT}),
    "cast-f32-f16": Case("Cast", [HALVES], {"to": TensorProto.FLOAT16}),
    "cast-f16-i32": Case("Cast", [np.array([65504, 2.5, -7.5, 6e-8, NAN], np.float16)], {"to": TensorProto.INT32}),
    "castlike": Case("CastLike", [_f32(2.5, -2.5, NAN), np.array([1], np.int32)], opset=15),
    # data movement
    "reshape-0-minus-1": Case("Reshape", [_arange(2, 3, 4), _i64(0, -1)]),
    "reshape-allowzero": Case("Reshape", [np.zeros((0, 3), np.float32), _i64(3, 0)], {"allowzero": 1}, opset=14),
    "flatten-0": Case("Flatten", [_arange(2, 3, 4)], {"axis": 0}),
    "flatten-neg": Case("Flatten", [_arange(2, 3, 4)], {"axis": -1}),
    "squeeze-attr": Case("Squeeze", [_arange(1, 3, 1)], {"axes": [0]}, opset=11),
    "squeeze-input": Case("Squeeze", [_arange(1, 3, 1), _i64(-1)], opset=13),
    "squeeze-all": Case("Squeeze", [_arange(1, 3, 1)], opset=13),
    "unsqueeze-attr": Case("Unsqueeze", [_arange(3)], {"axes": [0, 2]}, opset=11),
    "unsqueeze-input": Case("Unsqueeze", [_arange(3), _i64(-1, 0)], opset=13),
    "transpose": Case("Transpose", [_arange(2, 3, 4)], {"perm": [1, 2, 0]}),
    "transpose-default": Case("Transpose", [_arange(2, 3)]),
    "expand-both-ways": Case("Expand", [_arange(3, 1), _i64(2, 1, 4)]),
    "tile": Case("Tile", [_arange(2, 3), _i64(2, 3)]),
    "concat": Case("Concat", [_arange(2, 1), _arange(2, 3)], {"axis": -1}),
    "split-input": Case("Split", [_arange(5, 2), _i64(2, 3)], opset=13, outputs=2),
    "split-num-outputs": Case("Split", [_arange(5)], {"num_outputs": 2}, opset=18, outputs=2),
    "split-equal": Case("Split", [_arange(6)], {"axis": 0}, opset=11, outputs=3),
    "slice-reverse": Case("Slice", [_arange(5), _i64(-1), _i64(-1000), _i64(0), _i64(-1)]),
    "slice-clamped": Case("Slice", [_arange(5), _i64(1), _i64(I64_MAX)]),
    "slice-negative-step": Case("Slice", [_arange(4, 6), _i64(5, 10), _i64(I64_MIN, 0), _i64(-1, 0), _i64(-2, -1)]),
    "slice-empty": Case("Slice", [_arange(5), _i64(4), _i64(2)]),
    "slice-attributes": Case("Slice", [_arange(3, 4)], {"starts": [1, -3], "ends": [3, 100], "axes": [0, 1]}, opset=9),
    "gather-negative": Case("Gather", [_arange(3, 4), _i64(-1, 0, -3)], {"axis": 0}),
    "gather-axis1-scalar": Case("Gather", [_arange(3, 4), np.array(-2, np.int64)], {"axis": 1}),
    "gather-elements": Case("GatherElements", [_arange(3, 4), np.array([[-1, 0], [2, -4]], np.int64)], {"axis": 1}),
    "gather-elements-int32": Case("GatherElements", [_f32(4, 5, 6), np.array([2, -3, 0], np.int32)]),
    "gather-nd": Case("GatherND", [_arange(2, 3, 4), np.array([[1, -1], [0, 2]], np.int64)]),
    "gather-nd-batch": Case("GatherND", [_arange(2, 3, 4), np.array([[[2]], [[-3]]], np.int64)], {"batch_dims": 1}),
    "nonzero": Case("NonZero", [np.array([[0, 1.5], [NAN, 0], [-0.0, 2]], np.float32)]),
    "where": Case("Where", [np.array([[True], [False]]), _arange(2, 3), _i64(-1, -2, -3)]),
    "trilu-upper": Case("Trilu", [_arange(2, 3, 4), _i64(-1)], opset=14),
    "trilu-lower": Case("Trilu", [_arange(3, 4), _i64(1)], {"upper": 0}, opset=14),
    # generators
    "range-float": Case("Range", [np.array(0.1, np.float32), np.array(100.3, np.float32), np.array(0.3, np.float32)]),
    "range-int-down": Case("Range", [np.array(10, np.int32), np.array(-7, np.int32), np.array(-4, np.int32)]),
    "range-empty": Case("Range", [np.array(5, np.int64), np.array(1, np.int64), np.array(2, np.int64)]),
    "constant-of-shape": Case("ConstantOfShape", [_i64(2, 3)], {"value": numpy_helper.from_array(_i64(7))}),
    "constant-of-shape-scalar": Case("ConstantOfShape", [np.zeros(0, np.int64)]),
    "pad-crop": Case("Pad", [_arange(3, 4), _i64(1, -1, -1, 2), np.array(9, np.int64)], opset=13),
    "pad-axes": Case("Pad", [_arange(3, 4, dtype=np.float32), _i64(2, 1), _f32(0.5), _i64(-1)], opset=18),
    "pad-attributes": Case("Pad", [_arange(2, 2, dtype=np.float32)], {"pads": [0, 1, 1, 0], "value": 1.5}, opset=2),
    # arithmetic
    "add-wraps": Case("Add", [_i64(I64_MAX, I64_MIN, 3), _i64(1, -1, 4)]),
    "add-u8-wraps": Case("Add", [np.array([250, 3], np.uint8), np.array([10, 4], np.uint8)]),
    "add-float": Case("Add", [FLOATS, FLOATS[::-1].copy()]),
    "sub-broadcast": Case("Sub", [_arange(2, 3), _i64(I64_MIN)]),
    "mul-int32-wraps": Case("Mul", [np.array([65536, -3], np.int32), np.array([65536, 7], np.int32)]),
    "mul-float": Case("Mul", [FLOATS, FLOATS[::-1].copy()]),
    "div-int64": Case("Div", list(INT_PAIRS)),
    "div-int32": Case("Div", [array.astype(np.int32) for array in INT_PAIRS]),
    "div-float": Case("Div", [_f32(1, -1, 0, 7, 1e-30), _f32(0, 0, 0, 3, 1e30)]),
    "mod-int": Case("Mod", list(INT_PAIRS)),
    "mod-int-fmod": Case("Mod", list(INT_PAIRS), {"fmod": 1}),
    "mod-float-fmod": Case("Mod", [_f32(-7.5, 7.5, 5.25, -0.0), _f32(2, -2, 0.5, 3)], {"fmod": 1}),
    "neg": Case("Neg", [_i64(I64_MIN, -3, 0, 4)]),
    "abs": Case("Abs", [_i64(I64_MIN, -3, 0, 4)]),
    "abs-float": Case("Abs", [FLOATS]),
    "sign-float": Case("Sign", [_f32(-2.5, 0, 3, NAN, -INF)]),
    "sign-int": Case("Sign", [_i64(-9, 0, 4)]),
    "floor": Case("Floor", [_f32(-2.5, 2.5, -0.0, NAN, 1e30)]),
    "ceil": Case("Ceil", [_f32(-2.5, 2.5, -0.4, INF)]),
    "max-int": Case("Max", [_arange(2, 3), _i64(1, 5, 2), _i64(4)]),
    "min-int": Case("Min", [_arange(2, 3), _i64(1, 5, 2)]),
    "max-float": Case("Max", [_f32(1, NAN, 3, -0.0, 0.0), _f32(2, 1, NAN, 0.0, -0.0)]),
    "min-float": Case("Min", [_f32(1, NAN, 3, -1e-30), _f32(2, 1, NAN, 0.0)]),
    # comparison and logic
    "equal": Case("Equal", [_f32(1, NAN, 0.0), _f32(1, NAN, -0.0)]),
    "equal-bool": Case("Equal", [np.array([True, False]), np.array([True, True])], opset=19),
    "less": Case("Less", [_i64(1, 5, -3), _i64(2, 5, -4)]),
    "less-or-equal": Case("LessOrEqual", [_f32(1, NAN, 3), _f32(1, 1, 4)]),
    "greater": Case("Greater", [_f32(1, NAN, 3), _f32(0, 1, 4)]),
    "greater-or-equal": Case("GreaterOrEqual", [_i64(1, 5, -3), _i64(1, 6, -4)]),
    "not": Case("Not", [np.array([True, False])]),
    "and": Case("And", [np.array([[True], [False]]), np.array([True, False])]),
    "or": Case("Or", [np.array([True, False]), np.array([False, False])]),
    "xor": Case("Xor", [np.array([True, False]), np.array([True, True])]),
    # integer reductions and running sums
    "reduce-sum-axes-input": Case("ReduceSum", [_arange(2, 3, 4), _i64(0, -1)], opset=13),
    "reduce-sum-noop": Case("ReduceSum", [_arange(2, 3)], {"noop_with_empty_axes": 1}, opset=13),
    "reduce-sum-empty-axis": Case("ReduceSum", [np.zeros((2, 0), np.int64), _i64(1)], opset=13),
    "reduce-prod": Case("ReduceProd", [_arange(2, 3) + 1], {"axes": [1], "keepdims": 0}, opset=13),
    "reduce-max-attr": Case("ReduceMax", [_arange(2, 3, 4)], {"axes": [1]}, opset=11),
    "reduce-max-all": Case("ReduceMax", [np.array([[3, -9], [7, 1]], np.int32)], {"keepdims": 0}, opset=18),
    "reduce-min-input": Case("ReduceMin", [_arange(2, 3, 4), _i64(2)], opset=18),
    "cumsum": Case("CumSum", [_arange(2, 3), np.array(1, np.int64)]),
    "cumsum-exclusive-reverse": Case("CumSum", [_arange(2, 3), np.array(-1, np.int32)], {"exclusive": 1, "reverse": 1}),
    # quantization
    "dequantize-axis": Case(
        "DequantizeLinear",
        [np.array([[-128, 5], [127, 0]], np.int8), _f32(0.1, 3.3), np.array([1, -2], np.int8)],
        {"axis": 1},
        opset=13,
    ),
    "dequantize-tensor": Case("DequantizeLinear", [np.array([0, 255, 7], np.uint8), _f32(0.0137), np.uint8(128)]),
}


COMPILED_ORACLE: dict[str, Case] = {
    "min-signed-zero": Case("Min", [_f32(-0.0, 0.0, -0.0), _f32(0.0, -0.0, -0.0)]),  # ONNX Runtime: +0 for the first
    "reduce-sum-wraps": Case("ReduceSum", [_i64(I64_MAX, 1)], {"keepdims": 0}, opset=13),  # ONNX Runtime: I64_MAX
    "div-by-zero": Case("Div", [_i64(5, I64_MIN, -5), _i64(0, -1, -1)]),  # SIGFPE in ONNX Runtime
    "mod-by-zero": Case("Mod", [_i64(5, I64_MIN, -5, -7), _i64(0, -1, -1, 3)]),
    "fmod-by-zero": Case("Mod", [np.array([5, -128, -5], np.int8), np.array([0, -1, 3], np.int8)], {"fmod": 1}),
    "cast-nan-u32": Case("Cast", [_f32(NAN, -INF, INF, -1.0)], {"to": TensorProto.UINT32}),  # its scalar tail: NaN -> 0
    "relu": Case("Relu", [_f32(-2.5, 0.0, -0.0, 3.0, NAN, -INF)]),  # ONNX Runtime: -0 for -0
    "cast-f32-bf16": Case("Cast", [HALVES], {"to": TensorProto.BFLOAT16}),  # bfloat16: not a numpy type to ORT
    "cast-bf16-f32": Case("Cast", [HALVES.astype(ml_dtypes.bfloat16)], {"to": TensorProto.FLOAT}),
}
"""Cases where ONNX Runtime does not compute what minimlc's compiled op computes, or cannot take or return the
element type: folding must give what the compiled op gives."""


def _one_node_model(case: Case) -> tuple[onnx.ModelProto, dict[str, np.ndarray]]:
    """The case's node with its present inputs as graph inputs (named i0, i1, ...), outputs typed by inference."""
    names = ["" if array is None else f"i{position}" for position, array in enumerate(case.inputs)]
    feeds = {name: np.asarray(array) for name, array in zip(names, case.inputs) if array is not None}
    outputs = [f"y{position}" for position in range(case.outputs)]
    node = helper.make_node(case.op, names, outputs, name="folded", **case.attributes)
    inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in feeds.items()
    ]
    graph = helper.make_graph([node], "fold", inputs, [onnx.ValueInfoProto(name=name) for name in outputs])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", case.opset)], ir_version=8)
    return onnx.shape_inference.infer_shapes(model, strict_mode=True), feeds


def with_constant_inputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> onnx.ModelProto:
    """`model` with its graph inputs turned into initializers holding `feeds`."""
    constant = onnx.ModelProto()
    constant.CopyFrom(model)
    del constant.graph.input[:]
    constant.graph.initializer.extend(numpy_helper.from_array(array, name) for name, array in feeds.items())
    return constant


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
    return session.run(None, feeds)


def assert_identical(got: np.ndarray, want: np.ndarray) -> None:
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    floating = want.dtype.kind == "f" or want.dtype == ml_dtypes.bfloat16
    if floating:  # exact in float64, NaNs equal, zeros keep their sign
        got, want = got.astype(np.float64), want.astype(np.float64)
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))
    assert np.array_equal(got, want, equal_nan=floating), f"{got} != {want}"


@pytest.mark.parametrize("case", CASES.values(), ids=CASES.keys())
def test_folded_output_equals_onnxruntime(case: Case) -> None:
    model, feeds = _one_node_model(case)
    expected = onnxruntime_outputs(model, feeds)
    imported = import_model(with_constant_inputs(model, feeds))
    assert list(imported.constant_outputs) == [output.name for output in model.graph.output], "not folded"
    for output, want in zip(model.graph.output, expected):
        assert_identical(imported.constant_outputs[output.name], want)


@pytest.mark.parametrize("case", COMPILED_ORACLE.values(), ids=COMPILED_ORACLE.keys())
def test_folded_output_equals_the_compiled_op(case: Case) -> None:
    model, feeds = _one_node_model(case)
    expected = InferenceSession(model).run(None, feeds)
    imported = import_model(with_constant_inputs(model, feeds))
    assert list(imported.constant_outputs) == [output.name for output in model.graph.output], "not folded"
    for output, want in zip(model.graph.output, expected):
        assert_identical(imported.constant_outputs[output.name], want)
