"""The ONNX Einsum converter: an equation of one or two operands becomes graph transposes, sums and one batched
matmul; `CONVERTERS` lists it (merged with the other families in `onnx_operators.py`).

Each letter of a two-operand equation is a batch axis (in both operands and the output), a contracted axis (in
both, not in the output), or a kept axis of one operand; letters in one operand only and not in the output are
summed first. Operand A is permuted to (batch, kept, contracted), B to (batch, contracted, kept), both reshaped to
one kept and one contracted axis where there are several, multiplied by `graph.matmul` and permuted to the output:

    bhqd,bhkd->bhqk   =   matmul(A, transpose(B, perm=[0, 1, 3, 2]))

Graph cleanups (`graph-simplify`) drop the identity permutations and reshapes. Ellipses, repeated letters within
one operand (diagonals) and three or more operands are refused, naming the equation.
"""

from __future__ import annotations

import math
import string

from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import Converter, NodeContext, NodeError, UnsupportedNodeError, Value, as_text

_SUPPORTED = "one or two operands, letters only (no '...'), no letter twice in one operand"


def _parse(equation: str, count: int) -> tuple[list[str], str]:
    """The operands' letter strings and the output's (implicit: the letters used once, sorted)."""
    text = equation.replace(" ", "")
    terms, arrow, output = text.partition("->")
    inputs = terms.split(",")
    if "." in text or not 1 <= len(inputs) <= 2 or any(len(set(term)) != len(term) for term in inputs):
        raise UnsupportedNodeError(f"Einsum equation '{equation}' is not supported (supported: {_SUPPORTED})")
    if len(inputs) != count:
        raise NodeError(f"Einsum equation '{equation}' has {len(inputs)} operands, the node {count} inputs")
    letters = "".join(inputs)
    if any(c not in string.ascii_letters for c in letters + output):
        raise NodeError(f"Einsum equation '{equation}' has characters other than letters")
    if not arrow:
        output = "".join(sorted(c for c in set(letters) if letters.count(c) == 1))
    if len(set(output)) != len(output) or any(c not in letters for c in output):
        raise NodeError(f"Einsum equation '{equation}': output letters must be distinct letters of the operands")
    return inputs, output


def _transpose(ctx: NodeContext, value: SSAValue, term: str, order: str) -> SSAValue:
    """`value` (axes named by `term`) with its axes in `order`."""
    perm = [term.index(c) for c in order]
    return value if perm == sorted(perm) else ctx.emit(graph.TransposeOp(value, perm))


def _sum_out(ctx: NodeContext, value: SSAValue, term: str, kept: str) -> tuple[SSAValue, str]:
    """`value` summed over the axes whose letters are not in `kept`, and its remaining letters."""
    axes = [axis for axis, c in enumerate(term) if c not in kept]
    if not axes:
        return value, term
    summed = ctx.emit(graph.ReduceSumOp(value, axes, keepdims=False))
    return summed, "".join(c for c in term if c in kept)


def _reshape(ctx: NodeContext, value: SSAValue, shape: tuple[int, ...]) -> SSAValue:
    return value if shape_of(value) == shape else ctx.emit(graph.ReshapeOp(value, shape))


def Einsum(ctx: NodeContext, *Inputs: Value, equation: str | bytes = "") -> Value:
    """Einstein summation of one or two operands -> graph transpose, reduce_sum and matmul (module docstring)."""
    terms, output = _parse(as_text(equation), len(Inputs))
    values = [ctx.data(value) for value in Inputs]
    sizes: dict[str, int] = {}
    for term, value in zip(terms, values):
        shape = shape_of(value)
        if len(shape) != len(term):
            raise NodeError(f"Einsum operand '{term}' has rank {len(shape)}, not {len(term)}")
        for c, size in zip(term, shape):
            if sizes.setdefault(c, size) != size:
                raise NodeError(f"Einsum letter '{c}' stands for sizes {sizes[c]} and {size}")
    if len(terms) == 1:
        summed, term = _sum_out(ctx, values[0], terms[0], output)
        return _transpose(ctx, summed, term, output)
    (a, a_term), (b, b_term) = (
        _sum_out(ctx, value, term, output + terms[1 - i]) for i, (value, term) in enumerate(zip(values, terms))
    )
    batch = "".join(c for c in output if c in a_term and c in b_term)
    contracted = "".join(c for c in a_term if c in b_term and c not in output)
    left = "".join(c for c in a_term if c not in b_term)
    right = "".join(c for c in b_term if c not in a_term)

    def extent(letters: str) -> int:
        return math.prod(sizes[c] for c in letters)

    batch_shape = tuple(sizes[c] for c in batch)
    lhs = _transpose(ctx, a, a_term, batch + left + contracted)
    lhs = _reshape(ctx, lhs, (*batch_shape, extent(left), extent(contracted)))
    rhs = _transpose(ctx, b, b_term, batch + contracted + right)
    rhs = _reshape(ctx, rhs, (*batch_shape, extent(contracted), extent(right)))
    product = ctx.emit(graph.MatMulOp(lhs, rhs))
    result = _reshape(ctx, product, tuple(sizes[c] for c in batch + left + right))
    return _transpose(ctx, result, batch + left + right, output)


CONVERTERS: dict[str, Converter] = {"Einsum": Einsum}
"""ONNX op type (default domain) -> converter, Einsum."""
