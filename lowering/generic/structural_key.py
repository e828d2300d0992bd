"""An op's structure as a hashable key, on any dialect: what te-to-loop and loop-fuse-kernels deduplicate kernels
by. Two functions get the same key if and only if they are the same IR up to SSA value names and their own symbol
name; te-to-loop also keys the te computes of a kernel before lowering them, their tensors by position.

    structural_key(relu_0) == structural_key(relu_1)   # two copies of one kernel: one is kept
"""

from __future__ import annotations

from collections.abc import Collection, Iterable, Mapping, Sequence

from xdsl.ir import Operation, SSAValue


def structural_key(
    root: Operation, given: Sequence[SSAValue] = (), ignored: Collection[str] = ("sym_name",)
) -> tuple[object, ...]:
    """A hashable key two ops share if and only if they are the same IR up to SSA value names and the properties
    and attributes of `root` named in `ignored` (a function's own symbol): what te-to-loop and loop-fuse-kernels
    deduplicate kernels by (printing them took ten times longer). Values from outside `root` are keyed by their
    position in `given`, all others alike."""
    numbers: dict[int, int] = {}  # id(value) -> its number: the values live while the key is built
    key: list[object] = []

    def number(values: Iterable[SSAValue]) -> tuple[int, ...]:
        first = len(numbers)
        for value in values:
            numbers[id(value)] = len(numbers)
        return tuple(range(first, len(numbers)))

    def keyed(items: Mapping[str, object], own: bool) -> tuple[tuple[str, object], ...]:
        if not items:
            return ()
        return tuple(sorted(item for item in items.items() if not own or item[0] not in ignored))

    def visit(op: Operation) -> None:
        own = op is root
        operands = tuple([numbers.get(id(value), -1) for value in op.operands])
        types = tuple([result.type for result in op.results])
        regions = op.regions
        key.append((op.name, operands, types, keyed(op.properties, own), keyed(op.attributes, own), len(regions)))
        number(op.results)
        for region in regions:
            key.append(len(region.blocks))
            for block in region.blocks:
                key.append((tuple([arg.type for arg in block.args]), number(block.args)))
                inner = block.first_op
                while inner is not None:
                    visit(inner)
                    inner = inner.next_op

    number(given)
    visit(root)
    return tuple(key)
