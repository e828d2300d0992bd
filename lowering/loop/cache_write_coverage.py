"""Which elements of a buffer stores write when loops run a run-time trip count: `loop-cache-write{fill=true}`'s
proofs in a kernel with dynamic loops (`analysis.py` has the static ones).

An index is read as a linear form over loop induction variables and values defined at the kernel's top level (the
extents, a split's `%main = n - n % 6`, read as `{n: 1, n % 6: -1}`, and `n % 6`, one term wherever it is
computed). A dimension of a store
is an interval when its loop terms are mixed-radix digits from unit stride up, the outermost possibly a loop from 0
to a run-time bound: `i_o` over `[0, main)` step 6 around `i_i` over `[0, 6)` is `[0, main)` (`main` a multiple of
6), the remainder's `main + r`, `r` over `[0, rem)`, is `[main, main + rem)`, that is `[main, n)`. A store whose
dimensions are all intervals and whose loops each index one writes its box once; boxes that split the buffer's
extents (static sizes and the sizes `loop.extents` gives its `?` dimensions) dimension by dimension cover it once:

    [0, main) x [0, 48)  and  [main, n) x [0, 48)  cover  [0, n) x [0, 48)
"""

from __future__ import annotations

from xdsl.dialects import arith, memref
from xdsl.dialects.builtin import IntegerAttr, MemRefType
from xdsl.ir import Block, BlockArgument, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, distinct_writes, enclosing_loops, loop_of, top_level
from minimlc.lowering.loop.analysis import stores_apart as static_stores_apart

Form = dict[SSAValue | tuple | None, int]
"""`{value: coefficient, None: constant}` over induction variables, top-level values and remainders of forms without
induction variables by constants (`("remui", form, 16)`: the same term wherever a split computes it), no zero
terms."""
Interval = tuple[Form, Form]
"""`[low, high)`."""


def symbolic_form(value: SSAValue, block: Block) -> Form | None:
    """`value` as a linear form over induction variables and values defined in `block` (the kernel's body, outside
    its loops), or None."""
    if loop_of(value) is not None:
        return {value: 1}
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return _clean({None: owner.value.value.data})
    if isinstance(owner, arith.AddiOp | arith.SubiOp | arith.MuliOp):
        lhs, rhs = symbolic_form(owner.lhs, block), symbolic_form(owner.rhs, block)
        if lhs is not None and rhs is not None:
            if isinstance(owner, arith.MuliOp):
                scale, form = (lhs, rhs) if set(lhs) <= {None} else (rhs, lhs)
                return _scaled(form, scale.get(None, 0)) if set(scale) <= {None} else None
            return _sum(lhs, rhs if isinstance(owner, arith.AddiOp) else _scaled(rhs, -1))
    if isinstance(owner, arith.RemUIOp) and (modulus := symbolic_form(owner.rhs, block)) is not None:
        dividend = symbolic_form(owner.lhs, block)
        if dividend is not None and set(modulus) <= {None} and not any(_loop_of(key) for key in dividend):
            return {("remui", frozenset(dividend.items()), modulus.get(None, 0)): 1}
    defined_in = owner if isinstance(value, BlockArgument) else owner.parent_block()  # type: ignore[union-attr]
    return {value: 1} if defined_in is block else None


def writes_once(store: memref.StoreOp, block: Block) -> bool:
    """Whether `store` writes no element twice under its loops (up to the op of `block` holding it); a store under
    static loops only, with affine indices, as `analysis.distinct_writes` tells."""
    if _static(store, block):
        return distinct_writes(store, top_level(store, block)) is not None  # type: ignore[arg-type]
    return _box(store, block) is not None


def stores_apart(first: memref.StoreOp, second: memref.StoreOp, block: Block) -> bool:
    """Whether the two stores' index intervals are provably disjoint in some dimension (for two stores under static
    loops with affine indices, their ranges as `analysis.stores_apart` compares them too)."""
    for a, b in zip(_dimension_intervals(first, block), _dimension_intervals(second, block)):
        if a is not None and b is not None and (_at_most(a[1], b[0]) or _at_most(b[1], a[0])):
            return True
    return _static(first, block) and _static(second, block) and static_stores_apart(first, second)


def _static(store: memref.StoreOp, block: Block) -> bool:
    """Whether `store`'s loops (up to the op of `block` holding it) are static and its indices affine in them."""
    root = top_level(store, block)
    return (
        root is not None
        and not any(lp.is_dynamic for lp in enclosing_loops(store, root))
        and all(affine_form(index) is not None for index in store.indices)
    )


def cover_each_element_once(stores: list[memref.StoreOp], block: Block) -> bool:
    """Whether `stores` together write every element of their buffer exactly once (see the module docstring)."""
    if not stores:
        return False
    boxes = [_box(store, block) for store in stores]
    extents = _extents(stores[0].memref, block)
    if extents is None or any(box is None for box in boxes):
        return False
    return _split(boxes, extents)  # type: ignore[arg-type]


def _extents(buffer: SSAValue, block: Block) -> list[Interval] | None:
    """`[0, size)` per dimension of `buffer`: a static size, or the one `loop.extents` gives a `?`."""
    buffer_type = buffer.type
    assert isinstance(buffer_type, MemRefType)
    sizes = iter(buffer.owner.sizes) if isinstance(buffer.owner, loop.ExtentsOp) else iter(())
    extents: list[Interval] = []
    for size in buffer_type.get_shape():
        dynamic = next(sizes, None) if size < 0 else None
        high = _clean({None: size}) if size >= 0 else symbolic_form(dynamic, block) if dynamic is not None else None
        if high is None:
            return None
        extents.append(({}, high))
    return extents


def _split(boxes: list[list[Interval]], target: list[Interval]) -> bool:
    """Whether `boxes` partition `target`: one box equal to it, or boxes grouped by their interval in one dimension,
    the groups' intervals consecutive from the target's low to its high, each group partitioning its slice."""
    if len(boxes) == 1:
        return boxes[0] == target
    for dim, (low, high) in enumerate(target):
        groups: list[tuple[Interval, list[list[Interval]]]] = []
        for box in boxes:
            group = next((members for interval, members in groups if interval == box[dim]), None)
            if group is None:
                groups.append((box[dim], group := []))
            group.append(box)
        if len(groups) < 2:
            continue
        order, at = [], low
        while (step := next((g for g in groups if g[0][0] == at and g not in order), None)) is not None:
            order.append(step)
            at = step[0][1]
        if len(order) == len(groups) and at == high:
            return all(_split(members, [*target[:dim], interval, *target[dim + 1 :]]) for interval, members in order)
    return False


def _box(store: memref.StoreOp, block: Block) -> list[Interval] | None:
    """The intervals `store` writes, if it writes each element of them once: every dimension an interval, every loop
    around it that runs more than once (or a run-time number of times) indexing exactly one dimension."""
    intervals = _dimension_intervals(store, block)
    if any(interval is None for interval in intervals):
        return None
    root = top_level(store, block)
    assert root is not None
    forms = [symbolic_form(index, block) or {} for index in store.indices]
    for lp in enclosing_loops(store, root):
        if lp.is_dynamic or lp.trip_count > 1:
            if sum(lp.induction_var in form for form in forms) != 1:
                return None
    return intervals  # type: ignore[return-value]


def _dimension_intervals(store: memref.StoreOp, block: Block) -> list[Interval | None]:
    return [_interval(symbolic_form(index, block), block) for index in store.indices]


def _interval(form: Form | None, block: Block) -> Interval | None:
    """The values `form` takes, if they are an interval each taken once: its loops' digits have strides 1, the first
    one's trip count, ..., a loop of a run-time bound `U` (from 0, a multiple of its step) outermost."""
    if form is None:
        return None
    fixed: Form = {key: coeff for key, coeff in form.items() if _loop_of(key) is None}
    digits = sorted(
        ((coeff, _loop_of(key)) for key, coeff in form.items() if _loop_of(key) is not None),
        key=lambda digit: (digit[1].is_dynamic, digit[0] * digit[1].step.value.data),  # type: ignore[union-attr]
    )
    width: int | Form = 1
    for coeff, owner in digits:
        assert owner is not None
        lower, step = owner.lower.value.data, owner.step.value.data
        if not owner.is_dynamic and owner.trip_count <= 1:
            if not owner.trip_count:
                return None
            fixed = _sum(fixed, {None: coeff * lower})
            continue
        if isinstance(width, dict) or coeff * step != width:
            return None
        fixed = _sum(fixed, {None: coeff * lower})
        if not owner.is_dynamic:
            width = coeff * step * owner.trip_count
        elif lower == 0 and (step == 1 or _multiple_of(owner.dynamic_upper, step)):
            bound = symbolic_form(owner.dynamic_upper, block)  # type: ignore[arg-type]
            if bound is None:
                return None
            width = _scaled(bound, coeff)
        else:
            return None
    return _clean(fixed), _sum(fixed, width if isinstance(width, dict) else {None: width})


def _loop_of(key: SSAValue | tuple | None) -> loop.ForOp | None:
    return loop_of(key) if isinstance(key, SSAValue) else None


def _multiple_of(value: SSAValue | None, factor: int) -> bool:
    """Whether `value` is `x - x % m` with `factor` dividing `m` (a dynamic split's main part)."""
    owner = value.owner if value is not None else None
    if not isinstance(owner, arith.SubiOp) or not isinstance(rem := owner.rhs.owner, arith.RemUIOp):
        return False
    modulus = rem.rhs.owner
    return (
        rem.lhs is owner.lhs
        and isinstance(modulus, arith.ConstantOp)
        and isinstance(modulus.value, IntegerAttr)
        and modulus.value.value.data % factor == 0
    )


def _at_most(low: Form, high: Form) -> bool:
    """Whether `low <= high` for every value of the terms: their difference is a constant."""
    difference = _sum(high, _scaled(low, -1))
    return set(difference) <= {None} and difference.get(None, 0) >= 0


def _sum(lhs: Form, rhs: Form) -> Form:
    return _clean({key: lhs.get(key, 0) + rhs.get(key, 0) for key in [*lhs, *(key for key in rhs if key not in lhs)]})


def _scaled(form: Form, factor: int) -> Form:
    return _clean({key: coeff * factor for key, coeff in form.items()})


def _clean(form: Form) -> Form:
    return {key: coeff for key, coeff in form.items() if coeff}
