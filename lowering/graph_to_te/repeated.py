"""Lower a repeated graph op once: graph-to-te builds the te of the first op of each signature (kind, properties
and attributes, operand and result types, which operands are the same value, which results share a name) and
clones it for the others, the clone's operands the op's own. A model's layers repeat their ops (BERT-6's 207 graph
compute ops have 28 signatures), and cloning an op costs a fraction of building it (xDSL's `create` against its
verifying constructors; attributes shared, not made again): BERT-6's graph-to-te took 0.13 s of CPU instead of 0.21.

    %layer0_attn_q_mm = graph.matmul %x0, %w0     ->  %layer0_attn_q_mm = te.compute "matmul" (...) { te.read %x0 ... }
    %layer1_attn_q_mm = graph.matmul %x1, %w1     ->  the same compute, cloned: te.read %x1 ..., named layer1_attn_q_mm

The clone is what building would give: every value's name is the one the lowering gave (none, or the op's result
name it carried), kernel groups (`te.KERNEL_GROUP`) are numbered on from the pass's `KernelGroups`. A lowering is
recorded only where it is a function of the signature alone: the op is static (run-time extents insert their sizes
elsewhere), not an integer convolution or matmul (their form is decided from the whole module) nor a constant; the
ops it inserted sit just before it, read nothing but its operands and replace its results with values they define.
Anything else lowers each time.
"""

from __future__ import annotations

from collections.abc import Callable, Hashable
from dataclasses import dataclass

from xdsl.dialects import builtin
from xdsl.ir import Operation, SSAValue
from xdsl.pattern_rewriter import PatternRewriter

from minimlc.dialects import graph, te
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.graph_to_te.builder import KernelGroups

_NOT_RECORDED = (graph.ConvIntegerOp, graph.MatMulIntegerOp, graph.ConstantOp)
"""Ops built each time: integer convolutions and matmuls, whose lowering reads more than the op
(`quantized.patterns` decides their form from the whole module), and constants (hashing a large value would cost
more than building it)."""


@dataclass
class _Lowering:
    """The ops the first op of a signature was lowered to (live in the module), read back when cloning."""

    ops: list[Operation]
    operands: tuple[SSAValue, ...]
    results: list[int]
    """Per result of the op, the position (in `_values` order) of the value that replaced it."""
    names: list[int | None]
    """Per value of `ops` (`_values` order), the result whose name it carries, or None: it has none."""
    first_group: int
    groups: int


def _values(ops: list[Operation]) -> list[SSAValue]:
    """Every value `ops` define, in walk order: each op's results, then its blocks' arguments."""
    values: list[SSAValue] = []
    for top in ops:
        for op in top.walk():
            values.extend(op.results)
            for region in op.regions:
                for block in region.blocks:
                    values.extend(block.args)
    return values


def _name_pattern(names: list[str | None]) -> tuple[int | None, ...]:
    return tuple(None if name is None else names.index(name) for name in names)


class RepeatedOps:
    """The lowerings of one graph-to-te run, by signature; `groups` numbers the kernel groups of clones."""

    def __init__(self, groups: KernelGroups):
        self.groups = groups
        self.lowered: dict[Hashable, _Lowering | None] = {}

    def lower(self, op: Operation, rewriter: PatternRewriter, lower_op: Callable[[], None]) -> None:
        """Lower `op` (static) by cloning the lowering of an op with its signature, else by `lower_op()`, recording
        the lowering if it is a function of the signature."""
        key = self._signature(op)
        recorded = self.lowered.get(key) if key is not None else None
        if recorded is not None:
            self._clone(recorded, op, rewriter)
            return
        block, before, after = op.parent_block(), op.prev_op, op.next_op
        operands, names, first_group = tuple(op.operands), [r.name_hint for r in op.results], self.groups.first
        replaced: list[tuple[Operation, tuple[SSAValue | None, ...]]] = []

        def on_replace(old: Operation, new: tuple[SSAValue | None, ...]) -> None:
            replaced.append((old, tuple(new)))

        rewriter.operation_replacement_handler.append(on_replace)
        try:
            lower_op()
        finally:
            rewriter.operation_replacement_handler.remove(on_replace)
        if key is None or key in self.lowered or block is None or op.parent is not None or len(replaced) != 1:
            return
        if (before is not None and before.parent is not block) or (after is not None and after.parent is not block):
            return
        ops: list[Operation] = []
        current = before.next_op if before is not None else block.first_op
        while current is not None and current is not after:
            ops.append(current)
            current = current.next_op
        self.lowered[key] = _record(ops, operands, names, replaced[0][1], first_group, self.groups.first)

    def _signature(self, op: Operation) -> Hashable | None:
        if isinstance(op, _NOT_RECORDED):
            return None
        names = [result.name_hint for result in op.results]
        try:
            key = (
                op.name,
                tuple(op.properties.items()),
                tuple(op.attributes.items()),
                tuple(operand.type for operand in op.operands),
                tuple(result.type for result in op.results),
                tuple(op.operands.index(operand) for operand in op.operands),
                _name_pattern(names),
            )
            hash(key)
        except TypeError:  # an attribute that does not hash
            return None
        return key

    def _clone(self, recorded: _Lowering, op: Operation, rewriter: PatternRewriter) -> None:
        mapper: dict[SSAValue, SSAValue] = dict(zip(recorded.operands, op.operands, strict=True))
        clones = [clone_op(template, mapper) for template in recorded.ops]
        values = _values(clones)
        names = [result.name_hint for result in op.results]
        rewriter.replace(op, clones, [values[position] for position in recorded.results])
        for value, carried in zip(values, recorded.names, strict=True):
            value.name_hint = None if carried is None else names[carried]
        if recorded.groups:
            offset = self.groups.first - recorded.first_group
            for clone in clones:
                for inner in clone.walk():
                    group = inner.attributes.get(te.KERNEL_GROUP)
                    if isinstance(group, builtin.IntegerAttr):
                        inner.attributes[te.KERNEL_GROUP] = builtin.IntegerAttr(group.value.data + offset, builtin.i64)
            self.groups.first += recorded.groups


def _record(
    ops: list[Operation],
    operands: tuple[SSAValue, ...],
    names: list[str | None],
    replacements: tuple[SSAValue | None, ...],
    first_group: int,
    last_group: int,
) -> _Lowering | None:
    """The lowering to `ops` of an op with `operands` and result `names`, replaced by `replacements`; None if it
    reads a value from outside them but the operands, is not replaced by their values, or names a value otherwise
    than after a result."""
    values = _values(ops)
    position = {value: index for index, value in enumerate(values)}
    defined: set[SSAValue] = set(operands)
    for top in ops:
        for op in top.walk():
            if any(operand not in defined for operand in op.operands):
                return None
            defined.update(op.results)
            for region in op.regions:
                for block in region.blocks:
                    defined.update(block.args)
    if any(value is None or value not in position for value in replacements):
        return None
    carried: list[int | None] = []
    for value in values:
        if value.name_hint is not None and value.name_hint not in names:
            return None
        carried.append(None if value.name_hint is None else names.index(value.name_hint))
    results = [position[value] for value in replacements if value is not None]
    return _Lowering(ops, operands, results, carried, first_group, last_group - first_group)
