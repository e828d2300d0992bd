"""The ONNX Einsum converter: an equation of one or two operands becomes graph transposes, sums and one batched
matmul; `CONVERTERS` lists it (merged with the other families in `onnx_operators.py`).

Each letter of a two-operand equation is a batch axis (in both operands and the output), a contracted axis (in
both, not in the output), or a kept axis of one operand; letters in one operand only and not in the output are
summed first. Operand A is permuted to (batch, kept, contracted), B to (batch, contracted, kept), both reshaped to
one kept and one contracted axis where there are several, multiplied by `graph.matmul` and permuted to the output:

    bhqd,bhkd->bhqk   =   matmul(A, transpose(B, perm=[0, 1, 3, 2]))

`graph.matmul` is float32's; other element types (float64, integers) multiply (batch, kept, 1, contracted) by
(batch, 1, kept, contracted) and sum the last axis, in their own type. An ellipsis stands for fresh letters, one per
axis it covers (right-aligned across operands, as numpy does); a letter repeated in one operand takes the diagonal
(a constant gather of the merged axes). Graph cleanups (`graph-simplify`) drop the identity permutations and
reshapes. Three or more operands, and ellipses that broadcast (extents that differ), are refused.
"""

from __future__ import annotations

import math
import string

from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import Converter, NodeContext, NodeError, UnsupportedNodeError, Value, as_text

_SUPPORTED = "one or two operands"


def _parse(equation: str, ranks: list[int]) -> tuple[list[str], str]:
    """The operands' letter strings and the output's (implicit: the ellipsis' letters, then the letters used once,
    sorted), each ellipsis replaced by fresh letters, one per axis it covers in an operand of rank `ranks[i]`."""
    text = equation.replace(" ", "")
    terms, arrow, output = text.partition("->")
    inputs = terms.split(",")
    if not 1 <= len(inputs) <= 2:
        raise UnsupportedNodeError(f"Einsum equation '{equation}' is not supported (supported: {_SUPPORTED})")
    if len(inputs) != len(ranks):
        raise NodeError(f"Einsum equation '{equation}' has {len(inputs)} operands, the node {len(ranks)} inputs")
    if any(c not in string.ascii_letters + "." for c in "".join(inputs) + output) or any(
        term.count(".") not in (0, 3) or (term.count(".") == 3 and "..." not in term) for term in (*inputs, output)
    ):
        raise NodeError(f"Einsum equation '{equation}' has characters other than letters and one '...' per term")
    covered = [rank - len(term.replace("...", "")) if "..." in term else 0 for term, rank in zip(inputs, ranks)]
    if min(covered) < 0:
        raise NodeError(f"Einsum equation '{equation}' has more letters than its operands have axes")
    fresh = "".join(c for c in string.ascii_letters if c not in text)[: max(covered)]
    inputs = [term.replace("...", fresh[len(fresh) - n :]) for term, n in zip(inputs, covered)]
    output = output.replace("...", fresh)
    letters = "".join(inputs)
    if not arrow:
        output = fresh + "".join(sorted(c for c in set(letters) if letters.count(c) == 1 and c not in fresh))
    if len(set(output)) != len(output) or any(c not in letters for c in output):
        raise NodeError(f"Einsum equation '{equation}': output letters must be distinct letters of the operands")
    return inputs, output


def _diagonal(ctx: NodeContext, value: SSAValue, term: str) -> tuple[SSAValue, str]:
    """`value` with each letter repeated in `term` reduced to one axis: the diagonal, by a constant gather of the
    repeated axes merged into one (the second moved next to the first)."""
    while repeated := next((c for c in term if term.count(c) > 1), None):
        first = term.index(repeated)
        second = term.index(repeated, first + 1)
        order = term[: first + 1] + repeated + (term[first + 1 : second] + term[second + 1 :])
        perm = [*range(first + 1), second, *range(first + 1, second), *range(second + 1, len(term))]
        moved = value if perm == sorted(perm) else ctx.emit(graph.TransposeOp(value, perm))
        shape = shape_of(moved)
        extent = shape[first]
        merged = _reshape(ctx, moved, (*shape[:first], extent * extent, *shape[first + 2 :]))
        diagonal = [i * (extent + 1) for i in range(extent)]
        value = ctx.emit(graph.GatherOp(merged, first, diagonal, (extent,)))
        term = order[: first + 1] + order[first + 2 :]
    return value, term


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
    values = [ctx.data(value) for value in Inputs]
    elements = {graph.element_type(value) for value in values}
    if len(elements) != 1 or not elements <= set(graph.NUMBERS):
        raise NodeError(f"Einsum operands must share one numeric element type, got {sorted(map(str, elements))}")
    terms, output = _parse(as_text(equation), [len(shape_of(value)) for value in values])
    sizes: dict[str, int] = {}
    for term, value in zip(terms, values):
        shape = shape_of(value)
        if len(shape) != len(term):
            raise NodeError(f"Einsum operand '{term}' has rank {len(shape)}, not {len(term)}")
        for c, size in zip(term, shape):
            if sizes.setdefault(c, size) != size:
                raise NodeError(f"Einsum letter '{c}' stands for sizes {sizes[c]} and {size}")
    values, terms = map(list, zip(*(_diagonal(ctx, value, term) for value, term in zip(values, terms))))
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
    if elements == {f32}:
        product = ctx.emit(graph.MatMulOp(lhs, rhs))
    else:  # (batch, left, 1, contracted) * (batch, 1, right, contracted), summed over contracted
        rows = _reshape(ctx, lhs, (*batch_shape, extent(left), 1, extent(contracted)))
        columns = ctx.emit(graph.TransposeOp(rhs, [*range(len(batch)), len(batch) + 1, len(batch)]))
        columns = _reshape(ctx, columns, (*batch_shape, 1, extent(right), extent(contracted)))
        products = ctx.emit(graph.MulOp(rows, columns))
        product = ctx.emit(graph.ReduceSumOp(products, [len(batch) + 2], keepdims=False))
    result = _reshape(ctx, product, tuple(sizes[c] for c in batch + left + right))
    return _transpose(ctx, result, batch + left + right, output)


CONVERTERS: dict[str, Converter] = {"Einsum": Einsum}
"""ONNX op type (default domain) -> converter, Einsum."""
