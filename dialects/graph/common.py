"""What the graph ops share below their base classes: element types, tensor constraints, shape rules and the
checks verifiers raise with (each message names the op). `core` re-exports the public ones.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from functools import lru_cache

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    DenseArrayBase,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float32Type,
    FloatAttr,
    IntegerType,
    Signedness,
    TensorType,
    UnitAttr,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import IRDLOperation, base
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "BOOL",
    "DYNAMIC",
    "ELEMENT_TYPES",
    "FLOATS",
    "HALF_FLOATS",
    "INDICES",
    "INPUT_SYMBOLS_ATTR",
    "INTEGERS",
    "NUMBERS",
    "STORAGE_ONLY",
    "UNSIGNED",
    "AnyTensor",
    "F32Attr",
    "F32Tensor",
    "I64Array",
    "Shape",
    "broadcast_dim",
    "broadcast_shapes",
    "check_axis",
    "check_elements",
    "check_result_element",
    "check_result_shape",
    "check_static_axes",
    "dims_agree",
    "element_type",
    "f32_attr",
    "has_dynamic_dims",
    "i64_array",
    "is_scalar",
    "is_unsigned",
    "matmul_shape",
    "shape_of",
    "shown",
    "spelled",
    "tensor_type",
    "unit_flags",
]

Shape = tuple[int, ...]
"""A tensor's shape: one static size per axis, or `DYNAMIC` for a `?` (a size known only at run time)."""

DYNAMIC = DYNAMIC_INDEX
"""A `?` dimension in a `Shape` (xDSL's DYNAMIC_INDEX): `tensor_type((DYNAMIC, 768))` is `tensor<?x768xf32>`."""

INPUT_SYMBOLS_ATTR = "minimlc.input_symbols"
"""On a graph- or te-level entry: the symbol name of each `?` input dimension, in input order then axis order
(`docs/design/symbolic_shapes.md`): `attributes {minimlc.input_symbols = ["batch", "seq", "batch"]}`."""


def shape_of(value: SSAValue | Attribute) -> Shape:
    """The static shape of a tensor value or type."""
    ty = value.type if isinstance(value, SSAValue) else value
    assert isinstance(ty, TensorType), f"expected a tensor, got {ty}"
    return tuple(ty.get_shape())


def tensor_type(shape: Sequence[int], element: Attribute = f32) -> TensorType[Attribute]:
    """`tensor<shape x element>` (f32 unless given), made once per shape and element: building a type verifies it,
    which a model's repeated shapes would pay for each time (a type is immutable, so values share it)."""
    return _tensor_type(tuple(shape), element)


@lru_cache(maxsize=8192)
def _tensor_type(shape: tuple[int, ...], element: Attribute) -> TensorType[Attribute]:
    return TensorType(element, list(shape))


def element_type(value: SSAValue | Attribute) -> Attribute:
    """The element type of a tensor value or type."""
    ty = value.type if isinstance(value, SSAValue) else value
    assert isinstance(ty, TensorType), f"expected a tensor, got {ty}"
    return ty.element_type


BOOL = i1
"""Bool tensors' element type (stored one byte per element, as numpy's bool)."""
UNSIGNED: tuple[Attribute, ...] = tuple(IntegerType(width, Signedness.UNSIGNED) for width in (8, 16, 32, 64))
"""uint8..uint64 tensors: `ui8`..`ui64`. Signed integers are signless (`i8`..`i64`); below te, all are signless and
the ops carry the signedness (see docs/design/dialects.md, "Element types")."""
INTEGERS: tuple[Attribute, ...] = (i8, i16, i32, i64, *UNSIGNED)
INDICES: tuple[Attribute, ...] = (i32, i64)
"""Element types of index tensors (ONNX's `Tind`)."""
FLOATS: tuple[Attribute, ...] = (f32, f64)
"""Floats computed natively, each in its own precision."""
NUMBERS: tuple[Attribute, ...] = (*FLOATS, *INTEGERS)
"""Element types of run-time numbers."""
HALF_FLOATS: tuple[Attribute, ...] = (f16, bf16)
"""Stored 16-bit and computed in f32: only casts, weights and arguments have them (the frontend casts around every
other op)."""
STORAGE_ONLY: tuple[Attribute, ...] = (
    Float8E4M3FNType(),
    Float8E4M3FNUZType(),
    Float8E5M2Type(),
    Float8E5M2FNUZType(),
    Float4E2M1FNType(),
    *(IntegerType(width, signedness) for width in (4, 2) for signedness in (Signedness.SIGNLESS, Signedness.UNSIGNED)),
    Float8E8M0FNUType(),
)
"""float8, float4 and 4- and 2-bit integers (one element per byte, in its low bits): only casts, data movement, weights
and arguments have them."""
ELEMENT_TYPES: tuple[Attribute, ...] = (*NUMBERS, BOOL, *HALF_FLOATS, *STORAGE_ONLY)
"""Every element type a graph tensor may have."""


def is_unsigned(element: Attribute) -> bool:
    """Whether `element` is an unsigned integer type (`ui8`..`ui64`)."""
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def check_elements(op: IRDLOperation, allowed: Sequence[Attribute], *values: SSAValue) -> Attribute:
    """The element type `values` share, which must be one of `allowed`; raises naming the op otherwise."""
    types = [element_type(value) for value in values]
    if any(t != types[0] for t in types):
        raise VerifyException(f"{op.name}: operand element types {', '.join(map(str, types))} differ")
    if types[0] not in allowed:
        raise VerifyException(
            f"{op.name}: element type {types[0]} is not supported (expected one of {', '.join(map(str, allowed))})"
        )
    return types[0]


def check_result_element(op: IRDLOperation, expected: Attribute) -> None:
    actual = element_type(op.results[0])
    if actual != expected:
        raise VerifyException(f"{op.name}: result element type {actual} does not match expected {expected}")


F32Attr = FloatAttr[Float32Type]


def f32_attr(value: float) -> FloatAttr[Float32Type]:
    """`value` as an f32 attribute."""
    return FloatAttr(value, f32)


def is_scalar(value: SSAValue) -> bool:
    """Whether a tensor value holds exactly one element (a `?` dimension may hold any number: not a scalar)."""
    shape = shape_of(value)
    return DYNAMIC not in shape and math.prod(shape) == 1


def has_dynamic_dims(value: SSAValue | Attribute) -> bool:
    """Whether a tensor value or type has a `?` dimension."""
    return DYNAMIC in shape_of(value)


def broadcast_dim(*dims: int) -> int | None:
    """Numpy broadcasting of one axis's sizes; None when they are incompatible. A `?` against 1 or `?` stays `?`
    (whether two `?`s agree is checked at run time), against a static size n > 1 is n (the `?` must be n or 1)."""
    sizes = {d for d in dims if d not in (1, DYNAMIC)}
    if len(sizes) > 1:
        return None
    if sizes:
        return sizes.pop()
    return DYNAMIC if DYNAMIC in dims else 1


def broadcast_shapes(*shapes: Shape) -> Shape | None:
    """Numpy (multidirectional) broadcasting of shapes (`broadcast_dim` per axis, `?` too); None when they are
    incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for axis in range(rank):
        dim = broadcast_dim(*(s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0))
        if dim is None:
            return None
        result.append(dim)
    return tuple(result)


def dims_agree(lhs: int, rhs: int) -> bool:
    """Whether two sizes that must be equal can be: equal, or one a `?` (checked at run time)."""
    return lhs == rhs or DYNAMIC in (lhs, rhs)


def matmul_shape(lhs: Shape, rhs: Shape) -> Shape | None:
    """Result shape of numpy `matmul` (batch broadcasting, 1-D operands); None when incompatible. A `?` contracted
    dimension agrees with any size (checked at run time)."""
    if not lhs or not rhs:
        return None
    left = (1, *lhs) if len(lhs) == 1 else lhs
    right = (*rhs, 1) if len(rhs) == 1 else rhs
    if not dims_agree(left[-1], right[-2]):
        return None
    batch = broadcast_shapes(left[:-2], right[:-2])
    if batch is None:
        return None
    shape = (*batch, left[-2], right[-1])
    if len(lhs) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(rhs) == 1:
        shape = shape[:-1]
    return shape


def shown(shape: Shape) -> str:
    """A shape in messages: `(2, 3)`, `?` for a run-time dimension: `(?, 3)`."""
    if DYNAMIC not in shape:
        return str(shape)
    return f"({', '.join('?' if size == DYNAMIC else str(size) for size in shape)})"


def check_result_shape(op: IRDLOperation, expected: Shape) -> None:
    actual = shape_of(op.results[0])
    if actual != expected:
        raise VerifyException(
            f"{op.name}: result shape {shown(actual)} does not match expected shape {shown(expected)}"
        )


def spelled(shape: Shape) -> str:
    """A shape as its type spells it: `2x?x4`."""
    return "x".join("?" if size == DYNAMIC else str(size) for size in shape)


def check_static_axes(op: IRDLOperation, value: SSAValue, axes: Sequence[int], what: str) -> None:
    """Refuse a `?` on `axes` of `value`, which `op` (its lowering) needs static: `what` names them in the message.

    graph.conv: input channels (axis 1) must be static, got shape ?x?x8x8"""
    shape = shape_of(value)
    dynamic = [axis for axis in axes if 0 <= axis < len(shape) and shape[axis] == DYNAMIC]
    if dynamic:
        where = f"axis {dynamic[0]}" if len(dynamic) == 1 else f"axes {dynamic}"
        raise VerifyException(f"{op.name}: {what} ({where}) must be static, got shape {spelled(shape)}")


def check_axis(op: IRDLOperation, axis: int, rank: int) -> None:
    if not 0 <= axis < rank:
        raise VerifyException(f"{op.name}: axis {axis} is out of range for rank {rank}")


F32Tensor = TensorType.constr(f32)
"""A float32 tensor: the operands and results of float computations."""
AnyTensor = base(TensorType)
"""A tensor of any element type (`ELEMENT_TYPES`), for ops that verify their types themselves."""
I64Array = DenseArrayBase.constr(i64)
"""An `array<i64: ...>` property: axes, extents, window attributes."""


def i64_array(values: Sequence[int]) -> DenseArrayBase:
    """`values` as an `array<i64: ...>`."""
    return DenseArrayBase.from_list(i64, list(values))


def unit_flags(**flags: bool) -> dict[str, Attribute]:
    """The unit properties of the `flags` that are set, in order: `{"keepdims": unit}` for `keepdims=True`."""
    return {name: UnitAttr() for name, on in flags.items() if on}
