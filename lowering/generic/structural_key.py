"""An op's structure as a hashable key, on any dialect: what te-to-loop and loop-fuse-kernels deduplicate kernels
by. Two functions get the same key if and only if they are the same IR up to SSA value names and their own symbol
name; te-to-loop also keys the te computes of a kernel before lowering them, their tensors by position.

    structural_key(relu_0) == structural_key(relu_1)   # two copies of one kernel: one is kept
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Sequence

from xdsl.ir import Operation, SSAValue


def structural_key(
    root: Operation, given: Sequence[SSAValue] = (), ignored: Collection[str] = ("sym_name",)
) -> tuple[object, ...]:
    """A hashable key two ops share if and only if they are the same IR up to SSA value names and the properties
    and attributes of `root` named in `ignored` (a function's own symbol): what te-to-loop and loop-fuse-kernels
    deduplicate kernels by (printing them took ten times longer). Values from outside `root` are keyed by their
    position in `given`, all others alike."""
    numbers: dict[SSAValue, int] = {}
    key: list[object] = []

    def number(values: Iterable[SSAValue]) -> tuple[int, ...]:
        for value in values:
            numbers[value] = len(numbers)
        return tuple(numbers[value] for value in values)

    def visit(op: Operation) -> None:
        properties = tuple(sorted((k, v) for k, v in op.properties.items() if op is not root or k not in ignored))
        attributes = tuple(sorted((k, v) for k, v in op.attributes.items() if op is not root or k not in ignored))
        operands = tuple(numbers.get(value, -1) for value in op.operands)
        key.append((op.name, operands, tuple(op.result_types), properties, attributes, len(op.regions)))
        number(op.results)
        for region in op.regions:
            key.append(len(region.blocks))
            for block in region.blocks:
                key.append((tuple(block.arg_types), number(block.args)))
                for inner in block.ops:
                    visit(inner)

    number(given)
    visit(root)
    return tuple(key)
