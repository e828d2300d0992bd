"""What the two dot-product lowerings (`dot_product.py`: `llvmx.dot_u8s8`, `dot_bf16.py`: `llvmx.dot_bf16`) share:
cutting a vector into the register-wide pieces one instruction takes, joining the pieces' results again (as llvm
ops, and as LLVM IR text in the direct emitter), and replacing the dot products no instruction takes (and
`llvmx.pack_bf16`, `pack_bf16.py`) by their definition in arith ops, in one walk of the module (`expand_ops`).

    piece_lanes(VectorType(i32, [32]), widest=16)   # 16: two pieces
    piece_lanes(VectorType(i32, [24]), widest=16)   # 8: three pieces, no power of two: 0, the expansion
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping
from typing import TYPE_CHECKING

from xdsl.builder import Builder
from xdsl.dialects import arith, llvm, vector
from xdsl.dialects.builtin import DenseArrayBase, IntegerAttr, ModuleOp, VectorType, i32
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint

if TYPE_CHECKING:  # the emitter imports the conversion, which imports this module
    from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Value


def piece_lanes(kind: Attribute, widest: int) -> int:
    """Lanes of each piece of a dot product of type `kind` whose instruction takes at most `widest` lanes (16, 8 or 4
    of them, dividing the vector into a power of two of pieces, joined pairwise), 0 if it gets the expansion."""
    if not isinstance(kind, VectorType):
        return 0
    (lanes,) = kind.get_shape()
    fits = [width for width in (16, 8, 4) if width <= widest and lanes % width == 0]
    pieces = lanes // fits[0] if fits else 0
    return fits[0] if pieces and pieces & (pieces - 1) == 0 else 0


Expansion = Callable[..., SSAValue]
"""An op's definition in arith ops, built at a builder from its operands: `expansion(builder, *op.operands)`."""


def expand_ops(module: ModuleOp, expanders: Mapping[type[Operation], Callable[[Operation], Expansion | None]]) -> None:
    """In one walk of `module`, replace every op whose kind `expanders` lists and whose expander gives it an
    expansion (None: the op stays, an instruction takes it) by that expansion in arith ops: the dot products no
    instruction takes, and `llvmx.pack_bf16`."""
    for op in list(module.walk()):
        expander = expanders.get(type(op))
        expansion = expander(op) if expander is not None else None
        if expansion is not None:
            builder = Builder(InsertPoint.before(op))
            op.results[0].replace_all_uses_with(expansion(builder, *op.operands))
            op.detach()
            op.erase()


def split_pieces(
    operands: list[SSAValue], width: int, new_ops: list[Operation], recast: Callable[[int], Attribute | None]
) -> Iterator[list[SSAValue]]:
    """The operands of each `width`-lane piece, in order: lanes `[start, start + width)` of every operand (one
    shufflevector where the vector is wider), then bitcast to `recast(position)` where that gives a type (the words
    as the values the instruction takes); the ops appended to `new_ops` piece by piece, as the caller takes them, so
    that each piece's instruction follows its operands."""
    kind = operands[0].type
    assert isinstance(kind, VectorType)
    (lanes,) = kind.get_shape()
    for start in range(0, lanes, width):
        piece: list[SSAValue] = []
        for position, value in enumerate(operands):
            if width != lanes:
                assert isinstance(value.type, VectorType)
                mask = DenseArrayBase.from_list(i32, list(range(start, start + width)))
                new_ops.append(llvm.ShuffleVectorOp(value, value, mask, VectorType(value.type.element_type, [width])))
                value = new_ops[-1].res
            if (as_type := recast(position)) is not None:
                new_ops.append(llvm.BitcastOp(value, as_type))
                value = new_ops[-1].results[0]
            piece.append(value)
        yield piece


def emit_split_pieces(
    fe: FunctionEmitter, operands: list[Value], width: int, recast: Callable[[int], str | None]
) -> Iterator[list[Value]]:
    """`split_pieces` as LLVM IR text (`recast` gives LLVM type names), in the same order."""
    lanes = int(operands[0][0][1:].split(" ", 1)[0])
    for start in range(0, lanes, width):
        mask = shuffle_mask(range(start, start + width))
        piece: list[Value] = []
        for position, (whole, ref) in enumerate(operands):
            part = f"<{width} x {whole[1:-1].split(' x ')[1]}>"
            value = (
                (whole, ref)
                if width == lanes
                else (part, fe.emit(f"shufflevector {whole} {ref}, {whole} {ref}, {mask}", None, part))
            )
            if (as_type := recast(position)) is not None:
                value = (as_type, fe.emit(f"bitcast {value[0]} {value[1]} to {as_type}", None, as_type))
            piece.append(value)
        yield piece


def emit_expanded(
    fe: FunctionEmitter,
    op: Operation,
    expansion: Callable[[Builder, SSAValue, SSAValue, SSAValue], SSAValue],
    emit_op: Callable[[FunctionEmitter, Operation], None],
) -> Value:
    """`op`'s `expansion` as LLVM IR text: its arith ops built in a block of their own, emitted like any others, and
    erased again (the module is left as it was)."""
    scratch = Block()
    total = expansion(Builder(InsertPoint.at_end(scratch)), *op.operands)
    for inner in scratch.ops:
        emit_op(fe, inner)
    value = fe.values[total]
    for inner in reversed(list(scratch.ops)):
        inner.detach()
        inner.erase()  # drops their uses of the operands
    return value


def i32_splat(builder: Builder, value: int, like: Attribute) -> SSAValue:
    """The i32 constant `value`, broadcast to a vector where `like` is one."""
    scalar = builder.insert(arith.ConstantOp(IntegerAttr(value, i32))).result
    return builder.insert(vector.BroadcastOp(scalar, like)).vector if isinstance(like, VectorType) else scalar


def joined_pairs(parts: list[SSAValue], new_ops: list[Operation]) -> list[SSAValue]:
    """Concatenate neighbouring pairs of equal vectors (one shufflevector each, appended to `new_ops`)."""
    joined: list[SSAValue] = []
    for first, second in zip(parts[::2], parts[1::2], strict=True):
        assert isinstance(first.type, VectorType)
        (lanes,) = first.type.get_shape()
        mask = DenseArrayBase.from_list(i32, list(range(2 * lanes)))
        new_ops.append(llvm.ShuffleVectorOp(first, second, mask, VectorType(first.type.element_type, [2 * lanes])))
        joined.append(new_ops[-1].res)
    return joined


def emit_joined(fe: FunctionEmitter, parts: list[Value]) -> Value:
    """`joined_pairs` as LLVM IR text, until one vector is left."""
    while len(parts) > 1:
        joined = []
        for (half, first), (_, second) in zip(parts[::2], parts[1::2], strict=True):
            lanes, element = half[1:-1].split(" x ")
            wide = f"<{2 * int(lanes)} x {element}>"
            mask = shuffle_mask(range(2 * int(lanes)))
            joined.append((wide, fe.emit(f"shufflevector {half} {first}, {half} {second}, {mask}", None, wide)))
        parts = joined
    return parts[0]


def shuffle_mask(values: range | list[int]) -> str:
    """A `shufflevector` mask of `values` as LLVM IR text."""
    return f"<{len(values)} x i32> <" + ", ".join(f"i32 {v}" for v in values) + ">"
