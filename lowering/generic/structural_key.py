"""A function's structure as a hashable key, on any dialect: what te-to-loop and loop-fuse-kernels deduplicate
kernels by. Two functions get the same key if and only if they are the same IR up to SSA value names and their own
symbol name.

    structural_key(relu_0) == structural_key(relu_1)   # two copies of one kernel: one is kept
"""

from __future__ import annotations

from collections.abc import Iterable

from xdsl.dialects import func
from xdsl.ir import Operation, SSAValue


def structural_key(function: func.FuncOp) -> tuple[object, ...]:
    """A hashable key two functions share if and only if they are the same IR up to SSA value names and their own
    symbol: what te-to-loop and loop-fuse-kernels deduplicate kernels by (printing them took ten times longer)."""
    numbers: dict[SSAValue, int] = {}
    key: list[object] = [function.function_type]

    def number(values: Iterable[SSAValue]) -> tuple[int, ...]:
        for value in values:
            numbers[value] = len(numbers)
        return tuple(numbers[value] for value in values)

    def visit(op: Operation) -> None:
        properties = tuple(sorted((k, v) for k, v in op.properties.items() if op is not function or k != "sym_name"))
        attributes = tuple(sorted(op.attributes.items()))
        operands = tuple(numbers.get(value, -1) for value in op.operands)
        key.append((op.name, operands, tuple(op.result_types), properties, attributes, len(op.regions)))
        number(op.results)
        for region in op.regions:
            key.append(len(region.blocks))
            for block in region.blocks:
                key.append((tuple(block.arg_types), number(block.args)))
                for inner in block.ops:
                    visit(inner)

    visit(function)
    return tuple(key)
