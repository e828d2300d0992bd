"""Reshapes between symbolic shapes whose result one `graph.reshape` cannot express in ONNX's static target form
(0 copies the input's dimension on the same axis, -1 takes the rest, once): the target's symbolic sizes sit on
other axes than the input's.

    [sequence, sequence] -> [1, 1, sequence, sequence]          (Unsqueeze of a causal mask)
        graph.reshape {0, 0, 1, 1}   -> [sequence, sequence, 1, 1]   shared sizes kept, the rest (1) last
        graph.transpose [2, 3, 0, 1] -> [1, 1, sequence, sequence]   only size-1 axes move
        graph.reshape {1, 1, 0, 0}   -> [1, 1, sequence, sequence]

    [batch*4, sequence, sequence] -> [batch, 4, sequence, sequence]  (CLIP's attention weights per head)
        {1, 0, 0, -1} -> [1, sequence, sequence, batch*4], [2, 0, 1, 3] -> [sequence, 1, ...]: see `reshape_steps`

A reshape never reorders elements, and neither does a transpose of size-1 axes past others, so the chain is exact;
graph-simplify does not fold a reshape into another across the transpose.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from minimlc.frontend.onnx_symbolic_dims import Dim, is_symbolic

Size = int | Dim


@dataclass(frozen=True)
class Step:
    """A reshape to `shape`, or with `perm` a transpose (by `perm`) whose result has `shape`."""

    shape: tuple[Size, ...]
    perm: tuple[int, ...] | None = None


def reshape_spec(source: Sequence[Size], dims: Sequence[Size]) -> list[int] | None:
    """ONNX's static target for one reshape of `source` to `dims`: each symbolic size copied from the same axis (0)
    or, once, the rest (-1); None where no such target exists."""
    spec: list[int] = []
    for axis, size in enumerate(dims):
        if not is_symbolic(size):
            spec.append(int(size))
        elif axis < len(source) and source[axis] == size:
            spec.append(0)
        elif -1 in spec:
            return None
        else:
            spec.append(-1)
    return spec


def _matched(source: list[tuple[int, Size]], target: list[tuple[int, Size]]) -> list[tuple[int, int]]:
    """The longest in-order pairing of equal symbolic sizes: (source axis, target axis) pairs."""
    lengths = [[0] * (len(target) + 1) for _ in range(len(source) + 1)]
    for i in range(len(source) - 1, -1, -1):
        for j in range(len(target) - 1, -1, -1):
            lengths[i][j] = (
                lengths[i + 1][j + 1] + 1 if source[i][1] == target[j][1] else max(lengths[i + 1][j], lengths[i][j + 1])
            )
    pairs, i, j = [], 0, 0
    while i < len(source) and j < len(target):
        if source[i][1] == target[j][1]:
            pairs.append((source[i][0], target[j][0]))
            i, j = i + 1, j + 1
        elif lengths[i + 1][j] >= lengths[i][j + 1]:
            i += 1
        else:
            j += 1
    return pairs


def reshape_steps(source: Sequence[Size], dims: Sequence[Size]) -> list[Step] | None:
    """The steps from `source` to `dims`: one reshape where `reshape_spec` can express it, else a reshape that
    keeps the symbolic sizes the target shares (in order) on their axes and gathers everything else into a last
    axis, a transpose that moves only size-1 axes (the elements keep their order) to put the shared sizes on the
    target's axes, and the reshape to `dims`, whose one new symbolic size is the -1. None where the target has
    more than one symbolic size the input lacks."""
    if reshape_spec(source, dims) is not None:
        return [Step(tuple(dims))]
    symbolic_source = [(axis, d) for axis, d in enumerate(source) if is_symbolic(d)]
    symbolic_target = [(axis, d) for axis, d in enumerate(dims) if is_symbolic(d)]
    pairs = _matched(symbolic_source, symbolic_target)
    if len(symbolic_target) - len(pairs) > 1:
        return None
    rank = max(len(source), len(dims)) + 1
    rest: Size = 1
    for size in source:
        rest = rest * size
    gathered: list[Size] = [1] * rank
    for i, _ in pairs:
        gathered[i] = source[i]
        rest = rest // source[i]
    gathered[-1] = rest
    order = [None] * rank
    for i, j in pairs:
        order[j] = i
    order[-1] = rank - 1
    units = iter(axis for axis in range(rank) if axis not in order)
    perm = tuple(axis if axis is not None else next(units) for axis in order)
    moved = tuple(gathered[axis] for axis in perm)
    return [Step(tuple(gathered)), Step(moved, perm), Step(tuple(dims))]
