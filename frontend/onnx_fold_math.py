"""Import-time evaluators of the ONNX ops that compute on numbers, where numpy gives exactly what minimlc compiles:
casts, integer and IEEE float32/float64 arithmetic, Relu, comparisons, logic, integer reductions, DequantizeLinear,
and the window functions (cosines of float64, rounded once to the output type).

Evaluators are called as in `onnx_fold_ops`. Integers wrap as C's do; integer Div truncates toward zero and, like Mod,
gives 0 for a zero divisor (`lowering/graph_to_te/scalar.py`); float Max and Min propagate NaN and order -0 below +0
(LLVM's `maximumf`); float-to-integer casts follow ONNX Runtime (NaN and values out of range give INT_MIN), and
float16 and bfloat16 cast through float32. Other element types (float8, ...), arithmetic on 16-bit floats and float
reductions, whose order of summation matters, raise `NotFoldable`: they are compiled.

    Div(folding, ConstantValue("a", np.array([-7])), ConstantValue("b", np.array([2])))  # array([-3])
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

import ml_dtypes
import numpy as np
from onnx import helper

from minimlc.dialects import graph
from minimlc.frontend.onnx_fold_ops import Const, Folding, NotFoldable
from minimlc.frontend.onnx_ops import NodeError, normalise_axis
from minimlc.frontend.onnx_tensor import _either, _unique_axes

NUMBERS = frozenset(
    np.dtype(name) for name in ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float32")
) | {np.dtype(np.float64)}
"""The element types whose numpy arithmetic is minimlc's (float16 and bfloat16 compute in float32 there)."""
HALF_FLOATS = frozenset({np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)})
CASTABLE = NUMBERS | HALF_FLOATS | {np.dtype(np.bool_)}


def _numbers(*values: Const) -> list[np.ndarray]:
    """The arrays of operands of one element type among `NUMBERS` that broadcast together."""
    arrays = [value.array for value in values]
    if len({array.dtype for array in arrays}) > 1 or arrays[0].dtype not in NUMBERS:
        raise NotFoldable(f"element types {', '.join(str(array.dtype) for array in arrays)}")
    if graph.broadcast_shapes(*(array.shape for array in arrays)) is None:
        shapes = " and ".join(str(array.shape) for array in arrays)
        raise NodeError(f"input shapes {shapes} are not broadcast-compatible")
    return arrays


# Casts


def _to_signed(x: np.ndarray, width: int) -> np.ndarray:
    """float -> `width`-bit signed integer, truncated toward zero; NaN and values out of range give INT_MIN."""
    signed = np.dtype(f"int{width}")
    limit = x.dtype.type(2.0 ** (width - 1))
    inside = (x >= -limit) & (x < limit)
    return np.where(inside, np.trunc(np.where(inside, x, 0)).astype(signed), np.iinfo(signed).min)


def _to_integer(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """float -> integer as ONNX Runtime: 8 and 16 bits keep the low bits of the 32-bit conversion; unsigned 32 and 64
    bits convert `x - 2^(w-1)` where x >= 2^(w-1), flipping the top bit back."""
    width = target.itemsize * 8
    if width < 32:
        return _to_signed(x, 32).astype(target)
    if target.kind == "i":
        return _to_signed(x, width)
    half = x.dtype.type(2.0 ** (width - 1))
    high = x >= half
    converted = _to_signed(np.where(high, x - half, x), width)
    return np.where(high, converted ^ np.iinfo(converted.dtype).min, converted).view(target)


def _cast(x: np.ndarray, target: np.dtype) -> np.ndarray:
    """`x` as `target`; a 16-bit float through float32, as minimlc converts it (exactly from it, rounding to nearest
    even to it)."""
    if x.dtype not in CASTABLE or target not in CASTABLE:
        raise NotFoldable(f"a cast from {x.dtype} to {target}")
    if x.dtype == target:
        return x
    if x.dtype in HALF_FLOATS:
        x = x.astype(np.float32)
    if target in HALF_FLOATS:
        return _cast(x, np.dtype(np.float32)).astype(target)
    if x.dtype.kind == "f" and target.kind in "iu":
        return _to_integer(x, target)
    return x.astype(target)  # integers wrap, floats round to nearest, anything nonzero (NaN too) is true


def Cast(folding: Folding, input: Const, *, to: int, saturate: int = 1, round_mode: str | bytes = "up") -> np.ndarray:
    try:
        target = np.dtype(helper.tensor_dtype_to_np_dtype(to))
    except (KeyError, TypeError, ValueError) as error:
        raise NotFoldable(f"a cast to element type {to}") from error
    return _cast(input.array, target)


def CastLike(
    folding: Folding, input: Const, target_type: Const, *, saturate: int = 1, round_mode: str | bytes = "up"
) -> np.ndarray:
    return _cast(input.array, target_type.array.dtype)


# Arithmetic


def Add(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _numbers(A, B)
    return a + b


def Sub(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _numbers(A, B)
    return a - b


def Mul(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _numbers(A, B)
    return a * b


def Div(folding: Folding, A: Const, B: Const) -> np.ndarray:
    """IEEE division of floats; integer division truncating toward zero, 0 for a zero divisor (MIN / -1 wraps)."""
    a, b = _numbers(A, B)
    if a.dtype.kind == "f":
        return a / b
    zero = b == 0
    if a.dtype.kind == "u":
        return np.where(zero, 0, a // np.where(zero, 1, b))
    divisor = np.where(zero | (b == -1), 1, b)
    floor = a // divisor
    truncated = floor + ((floor * divisor != a) & ((a < 0) != (divisor < 0)))
    return np.where(zero, 0, np.where(b == -1, -a, truncated))


def Mod(folding: Folding, A: Const, B: Const, *, fmod: int = 0) -> np.ndarray:
    """The remainder with the dividend's sign (`fmod`, C's `fmod` and `%`) or the divisor's; 0 for a zero integer
    divisor."""
    a, b = _numbers(A, B)
    if a.dtype.kind == "f":
        remainder = np.fmod(a, b)
    else:  # 0 and -1 divide as 1 (remainder 0): C leaves MIN % -1 undefined, and a zero divisor gives 0 below
        unsafe = (b == 0) | (b == -1) if a.dtype.kind == "i" else b == 0
        remainder = np.fmod(a, np.where(unsafe, 1, b))
    if not fmod and a.dtype.kind != "u":
        remainder = np.where((remainder != 0) & ((remainder < 0) != (b < 0)), remainder + b, remainder)
    return remainder if a.dtype.kind == "f" else np.where(b == 0, 0, remainder)


def Neg(folding: Folding, X: Const) -> np.ndarray:
    return -_numbers(X)[0]


def Abs(folding: Folding, X: Const) -> np.ndarray:
    return np.abs(_numbers(X)[0])


def Sign(folding: Folding, input: Const) -> np.ndarray:
    """-1, 0 or 1; NaN stays NaN and a zero keeps its sign bit."""
    (x,) = _numbers(input)
    return np.where(x > 0, 1, np.where(x < 0, -1, x)).astype(x.dtype) if x.dtype.kind == "f" else np.sign(x)


def _float(value: Const) -> np.ndarray:
    if value.array.dtype.kind != "f" or value.array.dtype not in NUMBERS:
        raise NotFoldable(f"element type {value.array.dtype}")
    return value.array


def Floor(folding: Folding, X: Const) -> np.ndarray:
    return np.floor(_float(X))


def Ceil(folding: Folding, X: Const) -> np.ndarray:
    return np.ceil(_float(X))


def Relu(folding: Folding, X: Const) -> np.ndarray:
    """`max(x, 0)` of float32, as the compiled `maximumf(x, 0)`: NaN stays NaN, -0 becomes +0."""
    x = X.array
    if x.dtype != np.float32:
        raise NotFoldable(f"Relu of {x.dtype}")
    return np.where(x > 0, x, np.where(np.isnan(x), x, np.float32(0)))


def _extreme(inputs: Sequence[Const], larger: bool) -> np.ndarray:
    """The elementwise maximum (minimum) of all inputs; of floats, NaN wins and -0 < +0."""
    arrays = _numbers(*inputs)
    result = arrays[0]
    for other in arrays[1:]:
        picked = np.maximum(result, other) if larger else np.minimum(result, other)
        if result.dtype.kind == "f":  # of two zeros, max takes +0 and min -0
            negative = np.signbit(result)
            signed_zero = np.where(negative, other, result) if larger else np.where(negative, result, other)
            picked = np.where((result == 0) & (other == 0), signed_zero, picked)
        result = picked
    return result


def Max(folding: Folding, *data_0: Const) -> np.ndarray:
    return _extreme(data_0, larger=True)


def Min(folding: Folding, *data_0: Const) -> np.ndarray:
    return _extreme(data_0, larger=False)


# Comparison and logic


def _comparison(compare: Callable[[np.ndarray, np.ndarray], np.ndarray]) -> Callable[..., np.ndarray]:
    def evaluate(folding: Folding, A: Const, B: Const) -> np.ndarray:
        """Numbers (and bools) compared elementwise; NaN compares false (unequal)."""
        if A.array.dtype == B.array.dtype == np.bool_:
            return compare(A.array, B.array)
        return compare(*_numbers(A, B))

    return evaluate


def _bools(*values: Const) -> list[np.ndarray]:
    arrays = [value.array for value in values]
    if any(array.dtype != np.bool_ for array in arrays):
        raise NotFoldable(f"element types {', '.join(str(array.dtype) for array in arrays)}")
    if graph.broadcast_shapes(*(array.shape for array in arrays)) is None:
        shapes = " and ".join(str(array.shape) for array in arrays)
        raise NodeError(f"input shapes {shapes} are not broadcast-compatible")
    return arrays


def Not(folding: Folding, X: Const) -> np.ndarray:
    return ~_bools(X)[0]


def And(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _bools(A, B)
    return a & b


def Or(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _bools(A, B)
    return a | b


def Xor(folding: Folding, A: Const, B: Const) -> np.ndarray:
    a, b = _bools(A, B)
    return a ^ b


# Integer reductions and running sums


def _reducer(
    combine: Callable[..., np.ndarray], empty: Callable[[np.dtype], int], name: str
) -> Callable[..., np.ndarray]:
    """The evaluator of one Reduce* op on integers (and bools for Max and Min), which any order computes exactly."""

    def evaluate(
        folding: Folding,
        data: Const,
        axes_input: Const | None = None,
        *,
        axes: Sequence[int] | None = None,
        keepdims: int = 1,
        noop_with_empty_axes: int = 0,
    ) -> np.ndarray:
        x = data.array
        if x.dtype.kind not in "iu" and not (x.dtype == np.bool_ and name in ("ReduceMax", "ReduceMin")):
            raise NotFoldable(f"{name} of {x.dtype}")
        given = _either(axes_input, axes, "axes")
        if not given:
            if noop_with_empty_axes:
                return x
            given = list(range(x.ndim))
        reduced = _unique_axes(given, x.ndim)
        if any(x.shape[axis] == 0 for axis in reduced):  # nothing to combine: the combiner's identity
            kept = [1 if axis in reduced else n for axis, n in enumerate(x.shape) if keepdims or axis not in reduced]
            return np.full(kept, empty(x.dtype), x.dtype)
        return combine(x, axis=tuple(reduced), keepdims=bool(keepdims))

    evaluate.__name__ = name
    return evaluate


def _bound(dtype: np.dtype, lowest: bool) -> int:
    if dtype == np.bool_:
        return int(not lowest)
    info = np.iinfo(dtype)
    return info.min if lowest else info.max


ReduceSum = _reducer(lambda x, **how: np.sum(x, dtype=x.dtype, **how), lambda dtype: 0, "ReduceSum")
ReduceProd = _reducer(lambda x, **how: np.prod(x, dtype=x.dtype, **how), lambda dtype: 1, "ReduceProd")
ReduceMax = _reducer(np.max, lambda dtype: _bound(dtype, lowest=True), "ReduceMax")
ReduceMin = _reducer(np.min, lambda dtype: _bound(dtype, lowest=False), "ReduceMin")


def CumSum(folding: Folding, x: Const, axis: Const, *, exclusive: int = 0, reverse: int = 0) -> np.ndarray:
    """Running sum of integers along a constant `axis`, from the end with `reverse`, each excluding its own element
    with `exclusive`."""
    data = x.array
    if data.dtype.kind not in "iu":
        raise NotFoldable(f"CumSum of {data.dtype}")
    if axis.array.size != 1 or not np.issubdtype(axis.array.dtype, np.integer):
        raise NodeError("axis must be a compile-time constant integer scalar")
    along = normalise_axis(int(axis.array.reshape(())), data.ndim)
    ordered = np.flip(data, along) if reverse else data
    total = np.cumsum(ordered, axis=along, dtype=data.dtype)
    if exclusive:
        shifted = np.zeros_like(total)
        shifted[(slice(None),) * along + (slice(1, None),)] = total[(slice(None),) * along + (slice(None, -1),)]
        total = shifted
    return np.flip(total, along) if reverse else total


# Quantization


QUANTIZED = frozenset(np.dtype(name) for name in ("int8", "uint8", "int16", "uint16", "int32", "uint32"))


def _along_axis(array: np.ndarray, rank: int, axis: int) -> np.ndarray:
    """A scale or zero point reshaped to broadcast along `axis` when it is 1-D (as the converter reshapes it)."""
    if array.ndim == 0 or array.shape == (1,) or array.ndim == rank > 1:
        return array
    if array.ndim != 1:
        raise NodeError(f"a scale or zero point must be a scalar or 1-D, got shape {array.shape}")
    along = normalise_axis(axis, rank)
    return array.reshape([array.shape[0] if d == along else 1 for d in range(rank)])


def DequantizeLinear(
    folding: Folding,
    x: Const,
    x_scale: Const,
    x_zero_point: Const | None = None,
    *,
    axis: int = 1,
    block_size: int = 0,
    output_dtype: int = 0,
) -> np.ndarray:
    """`(x - zero_point) * scale`: the difference in int32, the product in float32, per tensor or per axis."""
    data, scale = x.array, x_scale.array
    if block_size or output_dtype not in (0, 1) or scale.dtype != np.float32 or data.dtype not in QUANTIZED:
        raise NotFoldable(f"dequantizing {data.dtype} with a {scale.dtype} scale (block_size {block_size})")
    shifted = data.astype(np.int32)
    if x_zero_point is not None:
        shifted = shifted - _along_axis(x_zero_point.array, data.ndim, axis).astype(np.int32)
    return shifted.astype(np.float32) * _along_axis(scale, data.ndim, axis)


def _window(name: str, coefficients: Sequence[float]) -> Callable[..., np.ndarray]:
    """The evaluator of a cosine-sum window: `sum_i (-1)^i a_i cos(2 pi i k / N)` for k < size, N the size
    (`periodic`) or the size minus one; computed in float64, then cast to `output_datatype`."""

    def evaluate(folding: Folding, size: Const, *, periodic: int = 1, output_datatype: int = 1) -> np.ndarray:
        count = int(size.array)
        period = count if periodic else count - 1
        if count < 0 or period <= 0:
            raise NotFoldable(f"a window of size {count} (periodic={periodic})")
        angle = 2 * np.pi * np.arange(count, dtype=np.float64) / period
        window = sum((-1) ** i * a * np.cos(i * angle) for i, a in enumerate(coefficients))
        return _cast(np.asarray(window), np.dtype(helper.tensor_dtype_to_np_dtype(output_datatype)))

    evaluate.__name__ = name
    return evaluate


WINDOWS = (
    _window("HannWindow", (0.5, 0.5)),
    _window("HammingWindow", (25 / 46, 21 / 46)),
    _window("BlackmanWindow", (0.42, 0.5, 0.08)),
)
"""The window functions of opset 17: their size sets their shape, so they are constants whenever they are valid."""


EVALUATORS = {
    evaluator.__name__: evaluator
    for evaluator in (
        *(Cast, CastLike, Add, Sub, Mul, Div, Mod, Neg, Abs, Sign, Floor, Ceil, Relu, Max, Min, Not, And, Or, Xor),
        *(ReduceSum, ReduceProd, ReduceMax, ReduceMin, CumSum, DequantizeLinear),
        *WINDOWS,
    )
} | {
    "Equal": _comparison(np.equal),
    "Less": _comparison(np.less),
    "LessOrEqual": _comparison(np.less_equal),
    "Greater": _comparison(np.greater),
    "GreaterOrEqual": _comparison(np.greater_equal),
}
"""ONNX op type (default domain) -> evaluator, for the ops that compute on numbers."""
