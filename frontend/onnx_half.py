"""float16 and bfloat16 in the importer: stored 16-bit, computed in float32, rounded (to nearest even) on store.

A node with a float16 or bfloat16 input whose op is not in `HALF_NATIVE_OPS` is converted on float32: each such
run-time input is cast up (`graph.cast`, exact), each such constant converted, and each float32 output the converter
returns cast back to the 16-bit type; `te-inline` folds the casts into the op's kernel, so the data stays 16-bit in
memory and every value is rounded once, where it is stored, as ONNX Runtime does.

    %x32 = graph.cast %x : tensor<4xf16> -> tensor<4xf32>
    %y32 = graph.relu %x32 : tensor<4xf32>
    %y = graph.cast %y32 : tensor<4xf32> -> tensor<4xf16>
"""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
from xdsl.builder import Builder
from xdsl.dialects.builtin import f32
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import graph
from minimlc.frontend.onnx_ops import ELEMENT_TYPES, ConstantValue, DataDependentValue, UnsupportedNodeError, Value

HALF_NATIVE_OPS = frozenset(
    {
        *("Cast", "CastLike", "Identity", "Shape", "Size", "BitCast"),
        *("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "Tile", "Concat", "Split", "Slice", "Transpose"),
        "ReverseSequence",
    }
)
"""Ops that take 16-bit (and 8-, 4- and 2-bit) element types as they are: casts (BitCast reinterprets the stored
bits), and data movement (which copies elements unchanged)."""


QUANTIZING_OPS = frozenset({"QuantizeLinear", "DequantizeLinear"})
"""Ops that also take float8, float4, int4 and int2 (and cast them themselves)."""


def _half_element(value: Value | None) -> Attribute | None:
    if isinstance(value, SSAValue):
        element = graph.element_type(value)
    elif isinstance(value, ConstantValue):
        element = ELEMENT_TYPES.get(value.array.dtype)
    else:
        return None
    return element if element in graph.HALF_FLOATS else None


def half_float_of(op_type: str, inputs: Sequence[Value | None]) -> Attribute | None:
    """The 16-bit float type a node of `op_type` computes on in float32, or None (no such input, or a native op).
    Raises `UnsupportedNodeError` for a run-time float8, float4, int4 or int2 input of an op other than those."""
    if op_type in HALF_NATIVE_OPS:
        return None
    for value in () if op_type in QUANTIZING_OPS else inputs:
        if isinstance(value, SSAValue) and graph.element_type(value) in graph.STORAGE_ONLY:
            raise UnsupportedNodeError(
                f"{op_type} of {graph.element_type(value)} is not supported: those are only cast and moved"
            )
    return next((element for value in inputs if (element := _half_element(value)) is not None), None)


def widened(builder: Builder, inputs: Sequence[Value | None]) -> list[Value | None]:
    """`inputs` with every 16-bit float value cast up to float32."""
    result: list[Value | None] = []
    for value in inputs:
        if _half_element(value) is None:
            result.append(value)
        elif isinstance(value, ConstantValue):
            result.append(ConstantValue(f"{value.name}.f32", value.array.astype(np.float32)))
        else:
            assert isinstance(value, SSAValue)
            result.append(builder.insert(graph.CastOp(value, f32)).result)
    return result


def narrowed(builder: Builder, results: Sequence[Value], half: Attribute) -> tuple[Value, ...]:
    """`results` with every float32 run-time value cast (rounded to nearest even) to the 16-bit type `half`; an
    output of a data-dependent extent (Compress, Unique) is cast at its bound, before the runtime trims it."""

    def narrow(value: Value) -> Value:
        if isinstance(value, DataDependentValue):
            return DataDependentValue(narrow(value.bound), value.count, value.axis)  # pyright: ignore[reportArgumentType]
        if isinstance(value, SSAValue) and graph.element_type(value) == f32:
            return builder.insert(graph.CastOp(value, half)).result
        return value

    return tuple(narrow(value) for value in results)


def widened_from(value: SSAValue) -> Attribute | None:
    """The 16-bit float type `value` was cast up from by `widened` (a converter sees only float32), or None."""
    owner = value.owner
    if isinstance(owner, graph.CastOp) and graph.element_type(owner.input) in graph.HALF_FLOATS:
        return graph.element_type(owner.input)
    return None
