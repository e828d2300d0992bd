"""What the schedule passes share: finding kernels and loops by name, and reading index expressions.

A schedule pass names a kernel function (`kernel=matmul_0`) and loops in it (`loop=j`); both lookups fail with a
message naming the pass, the missing name and what exists. Index expressions are read as affine forms over loop
induction variables (`%i = arith.addi %i_o, %i_i` -> {i_o: 1, i_i: 1}), which split, cache-write, pack and the
vector code generator need to tell outer from inner parts of an index; `writes_each_element_once` tells a store that
visits each element of its buffer once (a register tile's write-back) from one that accumulates partial sums.
"""

from __future__ import annotations

import functools
import math
import weakref
from collections.abc import Callable, Iterable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import IndexType, IntegerAttr, MemRefType, ModuleOp, i1
from xdsl.ir import Block, BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.built_ops import addi, muli
from minimlc.lowering.strategy.data_layout import byte_size

OpT = TypeVar("OpT", bound=Operation)

Affine = dict[SSAValue | None, int]
"""`{iv: coefficient, None: constant}`: an index as a sum of induction variables times constants."""


_KERNELS: weakref.WeakKeyDictionary[ModuleOp, dict[str, func.FuncOp]] = weakref.WeakKeyDictionary()
"""Per module, its defined functions by name as last seen: every schedule step looks its kernel up, and searching a
DenseNet's thousand functions each time added up. An entry is used only while it is still that function of that
module; any other lookup rebuilds the index."""


def find_kernel(module: ModuleOp, pass_name: str, name: str) -> func.FuncOp:
    """The function `@name` of `module`, or an error listing the kernels."""
    known = _KERNELS.get(module, {}).get(name)
    if known is not None and known.parent is module.body.block and known.sym_name.data == name and known.body.blocks:
        return known
    index: dict[str, func.FuncOp] = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and op.body.blocks:
            index.setdefault(op.sym_name.data, op)
    _KERNELS[module] = index
    if name in index:
        return index[name]
    kernels = [op for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks]
    names = ", ".join(k.sym_name.data for k in kernels) or "none"
    raise DiagnosticException(f"{pass_name}: no kernel named '{name}' (kernels: {names})")


@dataclass(frozen=True)
class _EntryIndex:
    """What a `calls_fixed` block reads off the public functions once: the kernel calls by callee, and the bytes of
    the weights they bind."""

    calls: dict[str, list[func.CallOp]]
    weight_bytes: int


_ENTRY_INDEX: weakref.WeakKeyDictionary[ModuleOp, _EntryIndex] = weakref.WeakKeyDictionary()
"""Per module, its public functions' calls and weights, while a `calls_fixed` block runs."""


@contextmanager
def calls_fixed(module: ModuleOp) -> Iterator[None]:
    """Within this block, `call_sites(module, ...)` and `model_weight_bytes(module)` read an index of the public
    functions built once: for a pass that adds, removes and retargets no call and binds no weight (default-schedule,
    whose rules ask for the call sites of most kernels: a search of the entry each time was a twentieth of a
    DenseNet's lowering)."""
    calls: dict[str, list[func.CallOp]] = {}
    for call in _public_calls(module):
        calls.setdefault(call.callee.root_reference.data, []).append(call)
    _ENTRY_INDEX[module] = _EntryIndex(calls, _weight_bytes(module))
    try:
        yield
    finally:
        del _ENTRY_INDEX[module]


def call_sites(module: ModuleOp, name: str) -> list[func.CallOp]:
    """The calls of kernel `@name` in `module`. Kernels are called from the public functions (the entry and its init
    function), never from kernels, so only those are searched: walking every kernel's loops as well made scheduling
    quadratic in the model's size (and xDSL's generic `walk` doubled the cost of each search)."""
    index = _ENTRY_INDEX.get(module)
    if index is not None:
        return list(index.calls.get(name, ()))
    return [call for call in _public_calls(module) if call.callee.root_reference.data == name]


def model_weight_bytes(module: ModuleOp) -> int:
    """The bytes of the weights `module`'s public functions bind (`loop.weight`, as the model stores them). Where
    they exceed a core's L2, a run finds each kernel's weights in L3 or memory, not where its last call left them.

        %w = loop.weight "conv1.weight" : memref<64x3x7x7xf32>     // 37,632 bytes"""
    index = _ENTRY_INDEX.get(module)
    return index.weight_bytes if index is not None else _weight_bytes(module)


def _public_functions(module: ModuleOp) -> list[func.FuncOp]:
    return [op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_visibility is None]


def _public_calls(module: ModuleOp) -> list[func.CallOp]:
    return [call for function in _public_functions(module) for call in nested_ops(function, func.CallOp)]


def _weight_bytes(module: ModuleOp) -> int:
    total = 0
    for function in _public_functions(module):
        for weight in nested_ops(function, loop.WeightOp):
            memref_type = weight.result.type
            assert isinstance(memref_type, MemRefType)
            total += memref_type.element_count() * byte_size(memref_type.element_type)
    return total


def nested_ops(root: Operation, kind: type[OpT] | tuple[type[OpT], ...]) -> list[OpT]:
    """The ops of class `kind` inside `root`, in program order (an op before the ops nested in it). Descends only
    into ops with regions, and follows xDSL's block and op links (`_first_op`, `_next_op`) itself: twice as fast as
    iterating `region.blocks` and `block.ops` (an iterator object and a call per op), and far faster than `walk`. A
    class without subclasses is matched by `type(op) is kind` (xDSL's op classes are ABCs: `isinstance` runs
    Python's `ABCMeta.__instancecheck__`, a call per op)."""
    found: list[OpT] = []
    leaf = kind if isinstance(kind, type) and not kind.__subclasses__() else None

    def visit(op: Operation) -> None:
        for region in op.regions:
            block = region._first_block
            while block is not None:
                inner = block._first_op
                while inner is not None:
                    if type(inner) is leaf or (leaf is None and isinstance(inner, kind)):
                        found.append(inner)
                    if inner.regions:
                        visit(inner)
                    inner = inner._next_op
                block = block._next_block

    visit(root)
    return found


def walk_ops(root: Operation) -> list[Operation]:
    """`root` and every op inside it, in program order (an op before the ops nested in it): `root.walk()` as a
    list, built without xDSL's generator per nesting level (schedules and their checks walk kernels often)."""
    found: list[Operation] = [root]

    def visit(op: Operation) -> None:
        for region in op.regions:
            block = region._first_block
            while block is not None:
                inner = block._first_op
                while inner is not None:
                    found.append(inner)
                    if inner.regions:
                        visit(inner)
                    inner = inner._next_op
                block = block._next_block

    visit(root)
    return found


OpKinds = type[Operation] | tuple[type[Operation], ...]


def ops_by_kind(root: Operation, kinds: Iterable[OpKinds]) -> dict[OpKinds, list[Operation]]:
    """The ops inside `root` of each of `kinds` (a class, exactly, or a tuple of classes sharing one list), each
    list in program order: one walk for a pass that rewrites several kinds of op, where a walk per kind made it
    several times slower."""
    lists: dict[OpKinds, list[Operation]] = {kind: [] for kind in kinds}
    found = {cls: ops for kind, ops in lists.items() for cls in (kind if isinstance(kind, tuple) else (kind,))}

    def visit(op: Operation) -> None:
        for region in op.regions:
            block = region._first_block
            while block is not None:
                inner = block._first_op
                while inner is not None:
                    if (ops := found.get(type(inner))) is not None:
                        ops.append(inner)
                    if inner.regions:
                        visit(inner)
                    inner = inner._next_op
                block = block._next_block

    visit(root)
    return lists


def loops_of(root: Operation) -> list[loop.ForOp]:
    """Every `loop.for` under `root` (and `root` itself if it is one), outermost first, in program order (schedules
    ask this of a kernel after every step: with xDSL's `walk` it was a fifth of DenseNet-121's `default-schedule`)."""
    return ([root] if isinstance(root, loop.ForOp) else []) + nested_ops(root, loop.ForOp)


def parallel_band(loop_op: loop.ForOp) -> list[loop.ForOp]:
    """`loop_op` and the parallel loops perfectly nested in it (each the only op of its parent's body), outermost
    first: the loops one task range covers. Only `loop_op` may have a run-time trip count (the task decoding divides
    by the inner loops' static ones): the band stops before an inner dynamic loop."""
    band = [loop_op]
    while len(ops := list(band[-1].body.block.ops)) == 1 and isinstance(ops[0], loop.ForOp):
        if ops[0].kind.data != "parallel" or ops[0].is_dynamic:
            break
        band.append(ops[0])
    return band


def band_tasks(band: list[loop.ForOp]) -> int:
    """The tasks of a collapsed band of static loops: the product of its trip counts."""
    tasks = 1
    for member in band:
        tasks *= member.trip_count
    return tasks


def find_loop(kernel: func.FuncOp, pass_name: str, name: str) -> loop.ForOp:
    """The loop named `name` in `kernel`, or an error listing its loops."""
    loops = loops_of(kernel)
    for candidate in loops:
        if candidate.loop_name.data == name:
            return candidate
    names = ", ".join(candidate.loop_name.data for candidate in loops) or "none"
    raise DiagnosticException(
        f"{pass_name}: no loop named '{name}' in kernel '{kernel.sym_name.data}' (loops: {names})"
    )


def find_loops(kernel: func.FuncOp, pass_name: str, names: Iterable[str]) -> list[loop.ForOp]:
    """`find_loop` of each of `names`, the kernel's loops listed once (reordering a nest names each of its loops)."""
    first: dict[str, loop.ForOp] = {}
    for candidate in loops_of(kernel):
        first.setdefault(candidate.loop_name.data, candidate)
    return [first[name] if name in first else find_loop(kernel, pass_name, name) for name in names]


def check_new_names(kernel: func.FuncOp, pass_name: str, names: Iterable[str]) -> None:
    """Fail if a loop the pass is about to create would repeat an existing name."""
    existing = {candidate.loop_name.data for candidate in loops_of(kernel)}
    for name in names:
        if name in existing:
            raise DiagnosticException(f"{pass_name}: kernel '{kernel.sym_name.data}' already has a loop named '{name}'")


def new_loop(name: str, lower: int, upper: int | SSAValue, step: int = 1, kind: str = "serial") -> loop.ForOp:
    """An empty `loop.for` whose induction variable is named like the loop."""
    body = loop.ForOp.empty_body()
    body.args[0].name_hint = name
    return loop.ForOp(name, lower, upper, body, step, kind)


def loop_of(value: SSAValue) -> loop.ForOp | None:
    """The loop whose induction variable `value` is, if any."""
    if isinstance(value, BlockArgument) and isinstance(owner := value.owner.parent_op(), loop.ForOp):
        return owner
    return None


def enclosing_loops(op: Operation, root: Operation) -> list[loop.ForOp]:
    """The loops around `op`, innermost first, up to and including `root`."""
    loops: list[loop.ForOp] = []
    current = op.parent_op()
    while isinstance(current, loop.ForOp):
        loops.append(current)
        if current is root:
            break
        current = current.parent_op()
    return loops


def writes_each_element_once(store: memref.StoreOp, root: Operation) -> bool:
    """True if the loops around `store` (up to `root`) visit every element of its buffer exactly once: each index is
    a mixed-radix sum of distinct loops, and the iterations number the buffer's elements."""
    shape = store.memref.type.get_shape()  # type: ignore[union-attr]
    return distinct_writes(store, root) == math.prod(shape)


def distinct_writes(store: memref.StoreOp, root: Operation) -> int | None:
    """How many elements `store` writes under the loops around it (up to `root`) if it writes none twice (each index
    a mixed-radix sum of distinct loops, every loop of several iterations among them), else None."""
    loops = [lp for lp in enclosing_loops(store, root) if lp.trip_count > 1]
    forms = [affine_form(index) for index in store.indices]
    if any(form is None for form in forms):
        return None
    used: list[SSAValue] = []
    for form in forms:
        assert form is not None
        terms = []
        for value, coeff in form.items():
            owner = loop_of(value) if value is not None else None
            if owner is None or owner.trip_count <= 1 or not coeff:
                continue
            terms.append((coeff * owner.step.value.data, owner.trip_count))
            used.append(value)
        span = 0
        for stride, trips in sorted(terms):
            if stride <= span:
                return None
            span += stride * (trips - 1)
    if sorted(map(id, used)) != sorted(id(lp.induction_var) for lp in loops):
        return None
    return math.prod(lp.trip_count for lp in loops)


def stores_apart(first: memref.StoreOp, second: memref.StoreOp) -> bool:
    """True if the two stores' index ranges (over their loops) are disjoint in some dimension."""
    forms = [[affine_form(index) for index in store.indices] for store in (first, second)]
    if any(form is None for store_forms in forms for form in store_forms):
        return False
    ranges = [[form_range(form) for form in store_forms] for store_forms in forms]  # type: ignore[arg-type]
    return any(a[1] < b[0] or b[1] < a[0] for a, b in zip(*ranges))


def cover_each_element_once(stores: list[memref.StoreOp], block: Block) -> bool:
    """True if `stores` (each under its loops up to the op of `block` holding it) together write every element of
    their buffer exactly once: none writes an element twice, their index ranges are pairwise apart, and their counts
    add up to the buffer's size (a register tile's copy back and its tail's)."""
    counts = [distinct_writes(store, top_level(store, block)) for store in stores]  # type: ignore[arg-type]
    if None in counts or any(not stores_apart(a, b) for n, a in enumerate(stores) for b in stores[n + 1 :]):
        return False
    return sum(counts) == math.prod(stores[0].memref.type.get_shape())  # type: ignore[arg-type, union-attr]


def top_level(op: Operation, block: Block) -> Operation | None:
    """The op of `block` that is or contains `op` (None if `op` is not inside `block`)."""
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def affine_form(value: SSAValue, is_term: Callable[[SSAValue], bool] | None = None) -> Affine | None:
    """`value` as an affine form over loop induction variables (and the values `is_term` accepts, as terms of
    their own: a loop-invariant bound), or None if it is not one."""
    if loop_of(value) is not None or (is_term is not None and is_term(value)):
        return {value: 1}
    owner = value.owner
    if isinstance(owner, arith.ConstantOp) and isinstance(owner.value, IntegerAttr):
        return {None: owner.value.value.data}
    if isinstance(owner, arith.AddiOp | arith.MuliOp):
        lhs, rhs = affine_form(owner.lhs, is_term), affine_form(owner.rhs, is_term)
        if lhs is None or rhs is None:
            return None
        if isinstance(owner, arith.AddiOp):
            # Terms in the order they appear (a set union would order them by hash: output would vary by run).
            return {key: lhs.get(key, 0) + rhs.get(key, 0) for key in [*lhs, *(key for key in rhs if key not in lhs)]}
        for scale, form in ((lhs, rhs), (rhs, lhs)):
            if set(scale) <= {None}:
                return {key: coeff * scale.get(None, 0) for key, coeff in form.items()}
    return None


def sparse_form(value: SSAValue) -> Affine | None:
    """`affine_form` without its zero terms (so that `i + 0 * j` and `i` compare equal)."""
    form = affine_form(value)
    return None if form is None else {key: coeff for key, coeff in form.items() if coeff}


def form_range(form: Affine) -> tuple[int, int]:
    """The smallest and largest value `form` takes over its loops' iteration spaces."""
    low = high = form.get(None, 0)
    for value, coeff in form.items():
        if value is None or coeff == 0:
            continue
        owner = loop_of(value)
        assert owner is not None
        first = owner.lower.value.data
        last = first + (owner.trip_count - 1) * owner.step.value.data
        low += min(coeff * first, coeff * last)
        high += max(coeff * first, coeff * last)
    return low, high


def build_form(builder: Builder, form: Affine) -> SSAValue:
    """Materialise `form` as index arithmetic at `builder`."""
    total: SSAValue | None = None
    for value, coeff in form.items():
        if value is None or coeff == 0:
            continue
        term = value
        if coeff != 1:
            term = builder.insert(muli(value, index_constant(builder, coeff))).result
        total = term if total is None else builder.insert(addi(total, term)).result
    constant = form.get(None, 0)
    if total is None:
        return index_constant(builder, constant)
    if constant:
        total = builder.insert(addi(total, index_constant(builder, constant))).result
    return total


def index_constant(builder: Builder, value: int) -> SSAValue:
    """`arith.constant value : index` at `builder`."""
    return builder.insert(index_constant_op(value)).result


def index_constant_op(value: int) -> arith.ConstantOp:
    """`arith.constant value : index`, what `arith.ConstantOp(IntegerAttr(value, IndexType()))` builds, a quarter of
    the time: the attribute made once per value, the op by `create` (unrolling and lowering loops make thousands)."""
    attr = _index_attr(value)
    return arith.ConstantOp.create(result_types=[attr.type], properties={"value": attr})


@functools.cache
def _index_attr(value: int) -> IntegerAttr:
    return IntegerAttr(value, IndexType())


def defined_within(value: SSAValue, block: Block) -> bool:
    """True if `value` is defined in `block` or in a region nested in it."""
    owner = value.owner
    current = owner if isinstance(owner, Block) else owner.parent_block()
    while current is not None:
        if current is block:
            return True
        parent = current.parent_op()
        current = parent.parent_block() if parent is not None else None
    return False


def is_movable(op: Operation) -> bool:
    """Index arithmetic and constants: ops a schedule may move to another loop level."""
    return isinstance(op, arith.ConstantOp | arith.AddiOp | arith.MuliOp | arith.DivUIOp | arith.RemUIOp)


def is_bool_buffer(buffer: SSAValue) -> bool:
    """Whether `buffer` is a memref of i1 (one byte per element in memory, one bit per lane in an LLVM vector)."""
    return isinstance(buffer.type, MemRefType) and buffer.type.element_type == i1


def without_unit_tail(buffer: SSAValue, strides: list[int]) -> list[int]:
    """The per-index strides of an access to `buffer` without those of its trailing dimensions of extent 1 that the
    loop does not move: a `[C, 1, 1]` per-channel operand read at `[c, 0, 0]` walks memory with unit stride along c."""
    assert isinstance(buffer.type, MemRefType)
    shape = buffer.type.get_shape()
    while len(strides) > 1 and shape[len(strides) - 1] == 1 and strides[-1] == 0:
        strides = strides[:-1]
    return strides
