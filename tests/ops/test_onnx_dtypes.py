"""Numerics of every run-time element type (int8, int16, uint8..uint64, float64, float16, bfloat16) end to end through
InferenceSession at O0 and O3 (the autouse fixture of conftest.py), against ONNX Runtime: integer and bool
outputs exactly, float ones at rtol=1e-5 (float16/bfloat16 bit for bit: computed in float32 and rounded once, as ONNX
Runtime does). Every input is a graph input, so native code computes each case.
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import Any

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator
from onnxruntime.capi.onnxruntime_pybind11_state import NotImplemented as OrtNotImplemented

from minimlc import InferenceSession
from minimlc.frontend.onnx import ModelImportError
from minimlc.runtime.session import InvalidInputError, load

RNG = np.random.default_rng(11)
INTEGERS = [np.int8, np.int16, np.uint8, np.uint16, np.uint32, np.uint64]
PY_UNSUPPORTED = [
    *("bfloat16", "float8_e4m3fn", "float8_e4m3fnuz", "float8_e5m2", "float8_e5m2fnuz", "float4_e2m1fn"),
    "float8_e8m0fnu",
]
PY_UNSUPPORTED += ["int4", "uint4", "int2", "uint2"]
"""ml_dtypes types ONNX Runtime's Python API cannot take or return: onnx's reference evaluator is the oracle."""


def _ints(shape: Sequence[int], dtype: Any, low: int = -9, high: int = 10) -> np.ndarray:
    info = np.iinfo(dtype)
    return RNG.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True).astype(dtype)


def _bools(shape: Sequence[int]) -> np.ndarray:
    return RNG.integers(0, 2, size=shape).astype(np.bool_)


def _extremes(dtype: Any, count: int) -> np.ndarray:
    """`count` values spread over the whole range of an integer type, its bounds included."""
    info = np.iinfo(dtype)
    values = [info.min, info.max, 0, 1, info.max - 1, info.min + 1, info.max // 2, info.max // 3]
    return np.array([values[i % len(values)] for i in range(count)], dtype)


def _floats(shape: Sequence[int], dtype: Any = np.float32) -> np.ndarray:
    return RNG.uniform(-3.0, 3.0, size=shape).astype(dtype)


def _model(
    op_type: str, feeds: Mapping[str, np.ndarray], attributes: Mapping[str, Any], axes: Sequence[int] | None = None
) -> onnx.ModelProto:
    inputs = [
        helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(array.dtype), array.shape)
        for name, array in feeds.items()
    ]
    initializers = [] if axes is None else [onnx.numpy_helper.from_array(np.array(axes, np.int64), "axes")]
    node = helper.make_node(op_type, [*feeds, *(["axes"] if axes is not None else [])], ["Y"], **attributes)
    model = helper.make_model(
        helper.make_graph([node], "dtypes", inputs, [helper.make_tensor_value_info("Y", 0, None)], initializers),
        opset_imports=[helper.make_opsetid("", 21)],
        ir_version=10,
    )
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=True)
    del model.graph.output[:]
    model.graph.output.extend(inferred.graph.output)
    return model


def _expected(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> tuple[np.ndarray, bool]:
    """ONNX Runtime's output, or onnx's reference evaluator's (numpy) where ONNX Runtime has no kernel for the type
    or cannot take it from Python (bfloat16); and whether it came from ONNX Runtime. numpy's floating-point
    overflow warnings are off in the reference: a cast past the target's range is infinity by ONNX's definition, and
    whether numpy warns about it depends on the CPU's conversion instructions (bfloat16 3e38 -> float16 on Zen 4)."""
    elements = {vi.type.tensor_type.elem_type for vi in [*model.graph.input, *model.graph.output]}
    if elements & {helper.np_dtype_to_tensor_dtype(np.dtype(getattr(ml_dtypes, name))) for name in PY_UNSUPPORTED}:
        with np.errstate(over="ignore", invalid="ignore"):
            (expected,) = ReferenceEvaluator(model).run(None, dict(feeds))
        return expected, False
    try:
        (expected,) = ort.InferenceSession(model.SerializeToString()).run(None, dict(feeds))
        return expected, True
    except OrtNotImplemented:
        with np.errstate(over="ignore", invalid="ignore"):
            (expected,) = ReferenceEvaluator(model).run(None, dict(feeds))
        return expected, False


def _check(model: onnx.ModelProto, feeds: Mapping[str, np.ndarray]) -> None:
    expected, by_onnxruntime = _expected(model, feeds)
    casts = model.graph.node[0].op_type == "Cast"  # one rounding, in numpy too
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, dict(feeds))
    assert session.stats["kernels"] > 0
    assert actual.dtype == expected.dtype
    assert actual.shape == expected.shape
    if expected.dtype in (np.float32, np.float64):
        np.testing.assert_allclose(actual, expected, rtol=1e-5, atol=1e-6)
    elif expected.dtype.itemsize == 2 and expected.dtype.kind in "fV" and not by_onnxruntime and not casts:
        # numpy rounds 16-bit floats after every step of a formula (sigmoid: exp, add, divide): one ulp apart
        ulp = 2.0**-7 if expected.dtype == ml_dtypes.bfloat16 else 2.0**-10
        np.testing.assert_allclose(actual.astype(np.float32), expected.astype(np.float32), rtol=ulp, atol=1e-6)
    else:  # integers, bools, and small floats (computed in float32, rounded once) bit for bit, but for NaNs' signs
        nan = np.isnan(expected.astype(np.float32)) if expected.dtype.kind in "fV" else np.zeros(expected.shape, bool)
        np.testing.assert_array_equal(np.isnan(actual.astype(np.float32)) if nan.any() else nan, nan)
        bits = f"u{actual.itemsize}"
        np.testing.assert_array_equal(actual.view(bits)[~nan], expected.view(bits)[~nan])


def _case(op_type: str, feeds: Mapping[str, np.ndarray], axes: Sequence[int] | None = None, **attributes: Any) -> Any:
    label = "-".join([op_type, *(f"{a.dtype}{list(a.shape)}" for a in feeds.values())])
    return pytest.param(op_type, dict(feeds), attributes, axes, id=label)


def _divisors(dtype: Any, shape: Sequence[int]) -> np.ndarray:
    """Nonzero divisors (ONNX Runtime refuses a zero one), negative ones for signed types."""
    divisors = _ints(shape, dtype, -7, 7)
    return np.where(divisors == 0, 3, divisors).astype(dtype)


INTEGER_CASES = (
    [
        case
        for dtype in INTEGERS
        for case in (
            *(
                _case(op, {"A": _extremes(dtype, 24).reshape(2, 3, 4), "B": _ints((3, 1), dtype)})
                for op in ("Add", "Sub")
            ),
            _case("Mul", {"A": _ints((3, 4), dtype, -20, 20), "B": _extremes(dtype, 4)}),
            *(
                _case(op, {"A": _extremes(dtype, 12).reshape(3, 4), "B": _extremes(dtype, 4)[::-1].copy()})
                for op in ("Max", "Min")
            ),
            _case("Div", {"A": _extremes(dtype, 24).reshape(4, 6), "B": _divisors(dtype, (4, 6))}),
            _case("Mod", {"A": _extremes(dtype, 24).reshape(4, 6), "B": _divisors(dtype, (4, 6))}),
            _case("Mod", {"A": _extremes(dtype, 24).reshape(4, 6), "B": _divisors(dtype, (4, 6))}, fmod=1),
            *(
                _case(op, {"A": _extremes(dtype, 12).reshape(3, 4), "B": _extremes(dtype, 4)[::-1].copy()})
                for op in ("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual")
            ),
            _case("Where", {"C": _bools((3, 1)), "X": _extremes(dtype, 12).reshape(3, 4), "Z": _ints((4,), dtype)}),
            _case("Transpose", {"X": _extremes(dtype, 24).reshape(2, 3, 4)}, perm=[2, 0, 1]),
            _case("Concat", {"A": _ints((2, 3), dtype), "B": _extremes(dtype, 2).reshape(2, 1)}, axis=1),
            _case("Gather", {"D": _extremes(dtype, 30).reshape(10, 3), "I": _ints((2, 3), np.int64, -10, 9)}, axis=0),
        )
    ]
    + [
        case
        for dtype in (np.int8, np.uint8, np.uint32, np.uint64)  # the types ONNX's ReduceMax and ReduceMin take
        for case in (
            _case("ReduceMax", {"X": _extremes(dtype, 24).reshape(4, 6)}, axes=[1], keepdims=0),
            _case("ReduceMin", {"X": _extremes(dtype, 24).reshape(4, 6)}, axes=[0]),
        )
    ]
    + [
        case
        for dtype in (np.uint32, np.uint64)  # the integer types ONNX's ReduceSum and ReduceProd take, besides int32/64
        for case in (
            _case("ReduceSum", {"X": _ints((4, 6), dtype, 0, 1 << 20)}, keepdims=0),
            _case("ReduceProd", {"X": _ints((4, 6), dtype, 0, 5)}, axes=[1]),
        )
    ]
    + [
        _case("Abs", {"X": _extremes(np.int8, 12)}),
        _case("Neg", {"X": _extremes(np.int16, 12)}),
        _case("Abs", {"X": _extremes(np.uint32, 12)}),
        # large enough for the default schedules to vectorize and parallelise
        _case("Add", {"A": _ints((64, 96), np.uint8, 0, 255), "B": _ints((96,), np.uint8, 0, 255)}),
        _case("Div", {"A": _ints((64, 96), np.uint16, 0, 65535), "B": _divisors(np.uint16, (64, 96))}),
        _case("Max", {"A": _ints((64, 96), np.uint64, 0, 1 << 62), "B": _extremes(np.uint64, 96)}),
        _case("Less", {"A": _ints((64, 96), np.uint32, 0, 1 << 31), "B": _extremes(np.uint32, 96)}),
    ]
)

FLOAT_CASES = [
    *(
        _case(op, {"A": _floats((2, 3, 4), np.float64), "B": _floats((3, 1), np.float64)})
        for op in ("Add", "Sub", "Mul", "Div", "Max", "Min")
    ),
    _case("Less", {"A": _floats((3, 4), np.float64), "B": np.array([0.5, -1.0, np.nan, 2.0])}),
    _case("Where", {"C": _bools((3, 1)), "X": _floats((3, 4), np.float64), "Z": _floats((4,), np.float64)}),
    _case("Neg", {"X": _floats((64, 96), np.float64)}),
    *(
        _case("Mod", {"A": _floats((64, 96), dtype) * 7, "B": _floats((96,), dtype)}, fmod=1)
        for dtype in (np.float32, np.float64)
    ),
    _case("Mod", {"A": _floats((4, 6), np.float16) * 7, "B": _floats((6,), np.float16)}, fmod=1),
    *(
        _case(
            "Clip",
            {"X": _extremes(dtype, 24).reshape(4, 6), "L": _ints((), dtype, -5, 3), "H": _ints((1,), dtype, 4, 90)},
        )
        for dtype in (np.int8, np.uint16, np.uint64)
    ),
    _case("Clip", {"X": _floats((4, 6), np.float64), "L": np.array(-1.0), "H": np.array(0.5)}),
    *(_case(op, {"X": _floats((4, 6), np.float64)}, axes=[1]) for op in ("ReduceMean", "ReduceLogSumExp", "ReduceL2")),
    *(
        _case(op, {"A": _floats((2, 3, 4), half), "B": _floats((3, 1), half)})
        for op in ("Add", "Mul", "Div")
        for half in (np.float16, ml_dtypes.bfloat16)
    ),
    *(
        _case(op, {"X": _floats((4, 5), half)})
        for op in ("Relu", "Sigmoid", "Exp")
        for half in (np.float16, ml_dtypes.bfloat16)
    ),
    _case("Softmax", {"X": _floats((3, 7), np.float16)}, axis=1),
    _case("Transpose", {"X": _floats((2, 3, 4), np.float16)}, perm=[1, 2, 0]),
    _case("Add", {"A": _floats((64, 96), np.float16), "B": _floats((96,), np.float16)}),
]


@pytest.mark.parametrize(("op_type", "feeds", "attributes", "axes"), INTEGER_CASES + FLOAT_CASES)
def test_op_on_dtype(
    op_type: str, feeds: dict[str, np.ndarray], attributes: dict[str, Any], axes: list[int] | None
) -> None:
    _check(_model(op_type, feeds, attributes, axes), feeds)


CAST_SOURCES = {
    "float32": np.array([-300.7, -2.7, -0.5, 0.0, 0.4, 1.5, 2.5, 200.9, 7e4, 1e-6, np.inf, np.nan], np.float32),
    "float64": np.array([-300.7, -2.7, -0.5, 0.0, 0.4, 1.5, 2.5, 200.9, 7e4, 1e-6, 3.0000001, -1e-310], np.float64),
    "float16": np.array([-300.5, -2.75, -0.5, 0.0, 0.375, 1.5, 2.5, 200.75, 6e4, 6e-8, np.inf, np.nan], np.float16),
    "bfloat16": np.array(
        [-300.0, -2.75, -0.5, 0.0, 0.375, 1.5, 2.5, 200.0, 7e4, 1e-6, np.inf, 3e38], ml_dtypes.bfloat16
    ),
    **{np.dtype(dtype).name: _extremes(dtype, 12) for dtype in INTEGERS},
    "int32": _extremes(np.int32, 12),
    "int64": _extremes(np.int64, 12),
    "bool": np.array([True, False] * 6),
}
CAST_TARGETS = [
    "float32",
    "float64",
    "float16",
    "bfloat16",
    "int8",
    "int16",
    "int32",
    "int64",
    "uint8",
    "uint16",
    "uint32",
    "uint64",
    "bool",
]


def _in_range(source: np.ndarray, target: np.dtype) -> np.ndarray:
    """Floats cast to an integer type only where ONNX defines the result (finite, within the target's range)."""
    if source.dtype.kind not in "fV" or target.kind not in "iu":
        return source
    info = np.iinfo(target)
    wide = source.astype(np.float64)
    kept = np.isfinite(wide) & (wide > info.min - 1) & (wide < min(info.max, 1 << 53) + 1)
    return np.where(kept, wide, 0.0).astype(source.dtype)


@pytest.mark.parametrize(
    ("source", "target"), [(source, target) for source in CAST_SOURCES for target in CAST_TARGETS if source != target]
)
def test_cast_between_dtypes(source: str, target: str) -> None:
    to = np.dtype(getattr(ml_dtypes, target)) if target == "bfloat16" else np.dtype(target)
    feeds = {"X": _in_range(CAST_SOURCES[source], to)}
    _check(_model("Cast", feeds, {"to": helper.np_dtype_to_tensor_dtype(to)}), feeds)


SMALL_TYPES = [
    "float8_e4m3fn",
    "float8_e4m3fnuz",
    "float8_e5m2",
    "float8_e5m2fnuz",
    "float4_e2m1fn",
    "int4",
    "uint4",
    "int2",
    "uint2",
]
WIDE = np.array(
    [0.4789, -0.4803, 0.4997, 1000000, 1e-7, np.nan, np.inf, -np.inf, -1e-7, 300.0, -57000, 7.3], np.float32
)


@pytest.mark.parametrize(
    ("wide", "small", "saturate"),
    [
        (wide, small, saturate)
        for wide in ("float32", "float16")
        for small in SMALL_TYPES
        for saturate in ((1, 0) if small.startswith("float8") else (1,))  # saturate applies to float8 only
    ],
)
def test_cast_to_and_from_small_types(wide: str, small: str, saturate: int) -> None:
    """float32/float16 -> float8, float4, int4, int2 (rounded to nearest even; beyond the largest value saturating,
    or infinity/NaN with saturate=0; integers within their range, truncated) and back, against onnx's reference
    (ml_dtypes)."""
    dtype = np.dtype(getattr(ml_dtypes, small))
    source = WIDE if dtype.kind == "f" or small.startswith("float") else _small_integer_range(dtype)
    with np.errstate(over="ignore", invalid="ignore"):  # 1e6 is infinity in float16
        feeds = {"X": source.astype(wide)}
    to = helper.np_dtype_to_tensor_dtype(dtype)
    _check(_model("Cast", feeds, {"to": to, "saturate": saturate} if small.startswith("float8") else {"to": to}), feeds)
    (narrow,) = ReferenceEvaluator(_model("Cast", feeds, {"to": to})).run(None, feeds)
    back = {"X": narrow}
    _check(_model("Cast", back, {"to": helper.np_dtype_to_tensor_dtype(np.dtype(wide))}), back)


def _small_integer_range(dtype: np.dtype) -> np.ndarray:
    """Every value of a small integer type, and fractions that truncate into its range, as float32."""
    info = ml_dtypes.iinfo(dtype)
    whole = np.arange(int(info.min), int(info.max) + 1, dtype=np.float32)
    return np.concatenate([whole, [int(info.min) + 0.75, int(info.max) + 0.5, -0.5]]).astype(np.float32)


@pytest.mark.parametrize("small", ["int4", "uint4", "int2", "uint2"])
def test_casts_out_of_a_small_integer_range_wrap(small: str) -> None:
    """A float out of an int4/int2 range, which ONNX leaves undefined, wraps modulo 2^bits after truncation, as
    minimlc's wider integer casts do (numpy's own answer there depends on the CPU, so it is computed here)."""
    dtype = np.dtype(getattr(ml_dtypes, small))
    info = ml_dtypes.iinfo(dtype)
    feeds = {"X": np.array([-9.5, -9, -3, 8, 9.75, 15, 16, 100, -100], np.float32)}
    model = _model("Cast", feeds, {"to": helper.np_dtype_to_tensor_dtype(dtype)})
    (actual,) = InferenceSession(model, cache=False).run(None, dict(feeds))
    span = int(info.max) - int(info.min) + 1
    wrapped = (np.trunc(feeds["X"]).astype(np.int64) - int(info.min)) % span + int(info.min)
    np.testing.assert_array_equal(actual.astype(np.int64), wrapped)


QUANTIZE_CASES = [
    _case(
        "DequantizeLinear",
        {"X": _ints((3, 4), np.uint8, 0, 255), "S": np.array(0.05, np.float32), "Z": np.array(128, np.uint8)},
    ),
    _case(
        "DequantizeLinear",
        {
            "X": _ints((2, 3, 4), np.int8, -128, 127),
            "S": np.array([0.5, 0.01, 2.0], np.float32),
            "Z": np.array([1, -3, 0], np.int8),
        },
        axis=1,
    ),
    _case("DequantizeLinear", {"X": _ints((4, 5), np.int32, -1000, 1000), "S": np.array(0.25, np.float32)}),
    _case("QuantizeLinear", {"X": _floats((3, 4)) * 20, "S": np.array(0.1, np.float32), "Z": np.array(100, np.uint8)}),
    _case(
        "QuantizeLinear",
        {"X": _floats((2, 3, 4)) * 50, "S": np.array([0.5, 0.01, 2.0], np.float32), "Z": np.array([1, -3, 0], np.int8)},
        axis=1,
    ),
    _case(
        "QuantizeLinear",
        {
            "X": np.array([0.5, 1.5, 2.5, -0.5, -1.5, 1e9, -1e9], np.float32),
            "S": np.array(1.0, np.float32),
            "Z": np.array(0, np.int16),
        },
    ),
    _case("QuantizeLinear", {"X": _floats((64, 96)) * 3, "S": np.array(0.02, np.float32), "Z": np.array(3, np.uint16)}),
]


@pytest.mark.parametrize(("op_type", "feeds", "attributes", "axes"), QUANTIZE_CASES)
def test_quantize_linear(op_type: str, feeds: dict[str, np.ndarray], attributes: dict[str, Any], axes: None) -> None:
    """Linear (de)quantization, per tensor and per axis, rounding half to even and saturating, against ONNX Runtime."""
    _check(_model(op_type, feeds, attributes), feeds)


def _relu_add_model(dtype: np.dtype) -> onnx.ModelProto:
    """Y = Relu(X + W) with a weight W of the same element type: input, weight, intermediate and output of `dtype`."""
    kind = helper.np_dtype_to_tensor_dtype(dtype)
    weight = onnx.numpy_helper.from_array(np.arange(-3, 3).astype(dtype).reshape(2, 3), "W")
    nodes = [helper.make_node("Add", ["X", "W"], ["S"]), helper.make_node("Max", ["S", "Z"], ["Y"])]
    zero = onnx.numpy_helper.from_array(np.zeros((1,), dtype), "Z")
    graph = helper.make_graph(
        nodes,
        "io",
        [helper.make_tensor_value_info("X", kind, [2, 3])],
        [helper.make_tensor_value_info("Y", kind, [2, 3])],
        [weight, zero],
    )
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


@pytest.mark.parametrize("dtype", [np.int8, np.uint8, np.float16, np.float64], ids=lambda d: np.dtype(d).name)
def test_session_inputs_outputs_and_saved_artifact(dtype: Any, tmp_path: Path) -> None:
    """A model with an input, a weight and an output of `dtype` runs through InferenceSession, refuses an input of
    another dtype before running native code, and gives the same outputs once saved and loaded."""
    model = _relu_add_model(np.dtype(dtype))
    feeds = {"X": np.array([[-5, 1, 2], [3, -4, 9]]).astype(dtype)}
    expected, _ = _expected(model, feeds)
    session = InferenceSession(model, cache=False)
    (actual,) = session.run(None, feeds)
    assert actual.dtype == np.dtype(dtype)
    np.testing.assert_array_equal(actual, expected)
    assert session.get_inputs()[0].dtype == np.dtype(dtype)
    with pytest.raises(InvalidInputError, match=f"expected dtype {np.dtype(dtype).name}"):
        session.run(None, {"X": feeds["X"].astype(np.float32 if dtype != np.float32 else np.int32)})
    session.save(tmp_path / "model.mlc")
    (reloaded,) = load(tmp_path / "model.mlc").run(None, feeds)
    np.testing.assert_array_equal(reloaded, expected)


def test_bfloat16_artifact_keeps_its_dtype(tmp_path: Path) -> None:
    """bfloat16's array-protocol string is a raw `|V2`: the artifact records the dtype by name."""
    feeds = {"X": _floats((2, 3), ml_dtypes.bfloat16)}
    model = _model("Relu", feeds, {})
    session = InferenceSession(model, cache=False)
    session.save(tmp_path / "model.mlc")
    (actual,) = load(tmp_path / "model.mlc").run(None, feeds)
    assert actual.dtype == np.dtype(ml_dtypes.bfloat16)
    expected, _ = _expected(model, feeds)
    np.testing.assert_array_equal(actual.astype(np.float32), expected.astype(np.float32))


@pytest.mark.parametrize(
    ("op_type", "dtype", "message"),
    [
        ("Add", "float8_e4m3fn", "Add of f8E4M3FN is not supported: those are only cast and moved"),
        ("Relu", "int4", "Relu of i4 is not supported: those are only cast and moved"),
        ("Relu", "float64", "input 'A' is a run-time float64 tensor; Relu computes on float32 only"),
    ],
)
def test_types_an_op_does_not_compute_on_are_refused(op_type: str, dtype: str, message: str) -> None:
    array = np.zeros((2, 3), np.dtype(getattr(ml_dtypes, dtype, dtype)))
    feeds = {"A": array, "B": array} if op_type == "Add" else {"A": array}
    kind = helper.np_dtype_to_tensor_dtype(array.dtype)
    node = helper.make_node(op_type, list(feeds), ["Y"])
    graph = helper.make_graph(
        [node],
        "refused",
        [helper.make_tensor_value_info(name, kind, [2, 3]) for name in feeds],
        [helper.make_tensor_value_info("Y", kind, [2, 3])],
    )
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)
    with pytest.raises(NotImplementedError, match=message):
        InferenceSession(model, cache=False)


E8M0_SOURCE = np.array(
    [1.0, 1.5, 1.25, 1.75, 0.75, 3.0, -6.0, 2.0**-127, 2.0**-140, 0.0, 2.0**127, 1.5 * 2.0**127, 3e38, np.inf, np.nan],
    np.float32,
)


@pytest.mark.parametrize("round_mode", ["up", "down", "nearest"])
@pytest.mark.parametrize("saturate", [1, 0])
@pytest.mark.parametrize("wide", ["float32", "float16"])
def test_cast_to_float8_e8m0(round_mode: str, saturate: int, wide: str) -> None:
    """float32/float16 -> E8M0 (the exponent of |x|, rounded by round_mode; 2^127 rounds up into NaN only without
    saturation), against onnx's reference (ONNX Runtime has no E8M0 kernel), opset 25."""
    with np.errstate(over="ignore", invalid="ignore"):
        feeds = {"X": E8M0_SOURCE.astype(wide)}
    to = helper.np_dtype_to_tensor_dtype(np.dtype(ml_dtypes.float8_e8m0fnu))
    model = _model("Cast", feeds, {"to": to, "saturate": saturate, "round_mode": round_mode})
    model.opset_import[0].version = 25
    _check(model, feeds)


@pytest.mark.parametrize("wide", ["float32", "float16"])
def test_cast_from_float8_e8m0(wide: str) -> None:
    """Every E8M0 code -> float32/float16: 2^(code - 127), code 255 NaN (beyond float16's range: 0 or infinity)."""
    feeds = {"X": np.arange(256, dtype=np.uint8).view(ml_dtypes.float8_e8m0fnu)}
    model = _model("Cast", feeds, {"to": helper.np_dtype_to_tensor_dtype(np.dtype(wide))})
    model.opset_import[0].version = 25
    _check(model, feeds)


def test_cast_with_an_unknown_round_mode_is_refused() -> None:
    feeds = {"X": E8M0_SOURCE}
    to = helper.np_dtype_to_tensor_dtype(np.dtype(ml_dtypes.float8_e8m0fnu))
    model = _model("Cast", feeds, {"to": to, "round_mode": "even"})
    model.opset_import[0].version = 25
    with pytest.raises(
        ModelImportError, match=r"\(Cast\): attribute round_mode='even' must be one of up, down, nearest"
    ):
        InferenceSession(model, cache=False)
