"""Epilogues at the write-back: an elementwise stage computed where its contraction stage writes each finished
element, instead of in a pass of its own over the intermediate (TVM's epilogue at the cache write). Used by
`loop-fuse-kernels` on the stages of one fused kernel.

A contraction stage writes each element of an internal buffer once, with its finished value, in one of two forms:

- **stored**: its register tiles start at zero and are stored (`loop-cache-write fill=true`): the stores of the
  tile and of its tail tiles (in the same nest or in nests one after the other) write every element once;
- **added**: a nest zeroes the buffer, then the tile adds its finished sum (`loop-cache-write accumulate=true` with the
  whole reduction inside the tile loop: the write-back loops visit every element once).

If the elementwise stage follows directly and reads the buffer once, at its own store's indices, its body moves to
each write-back and reads the finished value there; the stage, the zeroing and the buffer go:

    loop.for "w_o" ... { ... loop.for "w_o_st0" ... { %v = memref.load %tile[...]; memref.store %v, %c[i, j] } }
    loop.for "i" ... { loop.for "j" ... { %a = memref.load %c[i, j]; %b = memref.load %bias[j] ...
                                          memref.store %relu, %out[i, j] } }
    // becomes
    loop.for "w_o" ... { ... loop.for "w_o_st0" ... { %v = memref.load %tile[...]; %b = memref.load %bias[j] ...
                                                      memref.store %relu, %out[i, j] } }

In a vectorized write-back (a channels-last convolution's, a GEMM's) the epilogue becomes vector code too, so one
with a libm call or a bool (i1) read (no vector form) stays a stage of its own. So does, in the stored form, one that
reads another whole tensor at the output's indices (a residual): a channels-last convolution's tiles walk the
output one row of channels apart, so each write-back would read a cold line of the residual per output pixel, where
the stage streams it. Light ResNet-50 on Zen 3 (one thread, per-kernel CPU time, same process): its eight residual
convolutions took 29.4 ms as stages, 31.9 ms folded, 30.2 ms folded with the lines prefetched before the tile's
reduction; its bias + ReLU epilogues folded: 54.1-54.4 ms against 55.3 as stages. A residual epilogue is folded where
the tile walks several panels of channels inside its column loop (the convolution's `channel_block` knob): each
pixel's lines are then read one after another. On light ResNet-50 (Zen 3, one thread, 81 interleaved runs in the
model) a 256-channel block folded that way ran the 1x1 128->512 junctions in 0.896x their default's time and the
64->256 ones in 0.957x; other shapes lost (the 1x1/2 1024->2048 1.035x), so the block is the tuner's choice, not the
default.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import FloatAttr, IndexType, MemRefType, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import (
    Affine,
    cover_each_element_once,
    enclosing_loops,
    is_bool_buffer,
    loop_of,
    sparse_form,
    top_level,
    writes_each_element_once,
)
from minimlc.lowering.strategy.vectorization import LIBM_FUNCTIONS

_ZERO = FloatAttr(0.0, f32)


@dataclass
class _Epilogue:
    """Internal buffer `buffer`'s write-backs (each store with the finished value it writes), the ops that go once the
    stage is folded into them (the stores, and in the added form the adds, their loads and the zeroing nest), and the
    elementwise stage `stage` right after them, whose innermost body `body` reads `buffer` once, at its store's
    indices `forms`."""

    buffer: SSAValue
    write_backs: list[tuple[memref.StoreOp, SSAValue]]
    dead: list[Operation]
    stage: loop.ForOp
    body: Block
    forms: list[Affine | None]


@dataclass(frozen=True)
class _Added:
    """The added form on a buffer: the write-back `store` of `old` (a load of the element) plus `value` (the finished
    sum) through `add`, after the `zeroing` nest."""

    store: memref.StoreOp
    add: arith.AddfOp
    old: memref.LoadOp
    zeroing: Operation

    @property
    def value(self) -> SSAValue:
        return self.add.rhs


def fold_epilogue(block: Block, buffer: SSAValue) -> bool:
    """Move the elementwise stage that reads internal buffer `buffer` of fused kernel body `block` into the write-backs
    of the contraction stage that writes it, if the pattern is there (see the module docstring); True if moved."""
    epilogue = _find_epilogue(block, buffer)
    return epilogue is not None and _fold(epilogue)


def store_scalar_write_back(kernel: func.FuncOp) -> None:
    """Where a contraction zeroes its output and adds each element's finished sum once from its tile, element by
    element (an NCHW output of a convolution vectorized over channels: LLVM makes the add a gather and a scatter),
    store the sum instead and drop the zeroing pass (SqueezeNet's expand convolutions, ShuffleNet's stem)."""
    block = kernel.body.block
    if not block.args:
        return
    added = _added_write_back(block, block.args[-1], reads=0)
    if added is None:
        return
    nest = top_level(added.store, block)
    vector = any(lp.kind.data == "vectorize" for lp in enclosing_loops(added.store, nest))  # type: ignore[arg-type]
    if not vector:  # vector write-backs: no faster (docs/measurements.md, "Fusion and epilogues")
        Rewriter.replace_op(added.add, [], [added.value])
        for op in (added.old, added.zeroing):
            Rewriter.erase_op(op)


def _added_write_back(block: Block, buffer: SSAValue, reads: int) -> _Added | None:
    """The added form on `buffer`, read `reads` more times after it, if it is there."""
    uses = [use.operation for use in buffer.uses]
    stores = [op for op in uses if isinstance(op, memref.StoreOp)]
    zero = [op for op in stores if _stores_zero(op)]
    if len(stores) != 2 or len(zero) != 1 or len(uses) != 3 + reads:
        return None
    write_back = next(op for op in stores if op is not zero[0])
    total = write_back.value.owner
    here = write_back.parent_block()
    old = next((op for op in uses if isinstance(op, memref.LoadOp) and op.parent_block() is here), None)
    if not isinstance(total, arith.AddfOp) or old is None or total.lhs is not old.res:
        return None
    if len(list(total.result.uses)) != 1 or len(list(old.res.uses)) != 1:
        return None
    if list(old.indices) != list(write_back.indices):
        return None
    zeroing, nest = top_level(zero[0], block), top_level(write_back, block)
    if zeroing is None or nest is None or block.get_operation_index(zeroing) >= block.get_operation_index(nest):
        return None
    if any(isinstance(op, memref.StoreOp | memref.LoadOp) and op is not zero[0] for op in zeroing.walk()):
        return None
    if not writes_each_element_once(write_back, nest):
        return None
    return _Added(write_back, total, old, zeroing)


def _stored_write_backs(block: Block, buffer: SSAValue) -> list[tuple[memref.StoreOp, SSAValue]] | None:
    """The stored form on `buffer` (read once after it): its stores, which together write every element once."""
    stores = [use.operation for use in buffer.uses if isinstance(use.operation, memref.StoreOp)]
    if not stores or not cover_each_element_once(stores, block):
        return None
    return [(store, store.value) for store in stores]


def _find_epilogue(block: Block, buffer: SSAValue) -> _Epilogue | None:
    """The epilogue pattern on internal buffer `buffer` of a fused kernel's `block`, if it is there."""
    loads = [use.operation for use in buffer.uses if isinstance(use.operation, memref.LoadOp)]
    added = _added_write_back(block, buffer, reads=1)
    if added is not None:
        write_backs = [(added.store, added.value)]
        dead: list[Operation] = [added.store, added.add, added.old, added.zeroing]
        read = next(load for load in loads if load is not added.old)
    else:
        stored = _stored_write_backs(block, buffer)
        if stored is None or len(loads) != 1 or len(loads) + len(stored) != len(list(buffer.uses)):
            return None
        write_backs, dead, read = stored, [store for store, _ in stored], loads[0]
    nests = list(dict.fromkeys(top_level(store, block) for store, _ in write_backs))
    nests.sort(key=block.get_operation_index)  # type: ignore[arg-type]
    stage = top_level(read, block)
    if not isinstance(stage, loop.ForOp) or any(a.next_op is not b for a, b in zip(nests, [*nests[1:], stage])):
        return None
    for nest in nests:
        for op in nest.walk():  # type: ignore[union-attr]
            if isinstance(op, memref.StoreOp) and op.memref is not buffer:
                local = op.memref.owner
                if not (isinstance(local, loop.AllocOp) and local.scope.data == "local"):
                    return None
    body = read.parent_block()
    assert body is not None
    vectorized = any(
        lp.kind.data == "vectorize"
        for s, _ in write_backs
        for lp in enclosing_loops(s, top_level(s, block))  # type: ignore[arg-type]
    )
    if vectorized and any(type(op) in LIBM_FUNCTIONS or _reads_bools(op) for op in body.walk()):
        return None  # the write-back is one vector operation per tile row; a libm call or an i1 load has no vector form
    current: Operation = stage
    while isinstance(current, loop.ForOp) and current.body.block is not body:
        ops = [op for op in current.body.block.ops if not _is_index_arithmetic(op)]
        if len(ops) != 1:
            return None  # the index sums of a split loop (`i2_o * 14 + i2_i`) go with the stage; nothing else may
        current = ops[0]
    out_stores = [op for op in stage.walk() if isinstance(op, memref.StoreOp)]
    if len(out_stores) != 1 or out_stores[0].parent_block() is not body:
        return None
    output, internal = out_stores[0].memref.type, buffer.type
    assert isinstance(output, MemRefType)
    assert isinstance(internal, MemRefType)
    if output.get_shape() != internal.get_shape():
        return None  # a slice or broadcast: the write-back's elements are not the stage's (its element type may differ)
    forms = [sparse_form(index) for index in out_stores[0].indices]
    if [sparse_form(index) for index in read.indices] != forms or any(form is None for form in forms):
        return None
    residual = any(_reads_at(op, forms) for op in body.ops if op is not read)
    if added is None and residual and not all(_tile_walks_channel_panels(s, block) for s, _ in write_backs):
        return None  # a residual: its lines would be read cold, one per output row of channels (module docstring)
    return _Epilogue(buffer, write_backs, dead, stage, body, forms)


def _tile_walks_channel_panels(write_back: memref.StoreOp, block: Block) -> bool:
    """Whether, around `write_back`, a loop over the output's last (channel) index runs inside a loop over another of
    its indices: each output pixel of the tile gets several panels of channels in a row (a channels-last
    convolution's `channel_block`), so a residual's lines are read one after another, not one per pass."""
    forms = [sparse_form(index) for index in write_back.indices]
    if not forms or any(form is None for form in forms):
        return False
    channels = {value for value in forms[-1] if value is not None}  # type: ignore[union-attr]
    others = {value for form in forms[:-1] for value in form if value is not None}  # type: ignore[union-attr]
    loops = list(reversed(enclosing_loops(write_back, top_level(write_back, block))))  # type: ignore[arg-type]
    if not any(lp.kind.data == "vectorize" for lp in loops):
        return False  # not a register tile's write-back
    inside_other = False
    for lp in loops:
        value = lp.induction_var
        if value in others and lp.trip_count > 1:
            inside_other = True
        elif value in channels and inside_other and lp.kind.data != "vectorize" and lp.trip_count > 1:
            return True
    return False


def _is_index_arithmetic(op: Operation) -> bool:
    """An `arith` op computing an index only for loads, stores and other such ops (a split loop's `outer * factor +
    inner`): the fold re-derives the indices from the write-back's."""
    if not op.name.startswith("arith.") or not op.results or any(not isinstance(r.type, IndexType) for r in op.results):
        return False
    users = [use.operation for result in op.results for use in result.uses]
    return all(isinstance(user, memref.LoadOp | memref.StoreOp) or _is_index_arithmetic(user) for user in users)


def _reads_at(op: Operation, forms: list[Affine | None]) -> bool:
    return isinstance(op, memref.LoadOp) and [sparse_form(index) for index in op.indices] == forms


def _stores_zero(store: memref.StoreOp) -> bool:
    return isinstance(store.value.owner, arith.ConstantOp) and store.value.owner.value == _ZERO


def _reads_bools(op: Operation) -> bool:
    return isinstance(op, memref.LoadOp) and is_bool_buffer(op.memref)


def _dims(forms: list[Affine | None], indices: list[SSAValue]) -> list[int] | None:
    dims = []
    for index in indices:
        form = sparse_form(index)
        if form not in forms:
            return None
        dims.append(forms.index(form))
    return dims


def _fold(epilogue: _Epilogue) -> bool:
    """Compute the elementwise stage at each write-back instead of in a pass of its own."""
    plan: list[tuple[Operation, list[int] | None]] = []
    skipped: set[SSAValue] = set()
    for op in epilogue.body.ops:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            dims = _dims(epilogue.forms, list(op.indices))
            if dims is None:
                return False
            plan.append((op, dims))
        elif all(isinstance(result.type, IndexType) for result in op.results) and op.results:
            if any(not isinstance(use.operation, memref.LoadOp | memref.StoreOp) for r in op.results for use in r.uses):
                return False
            skipped.update(op.results)
        else:
            if any(operand in skipped or loop_of(operand) is not None for operand in op.operands):
                return False
            plan.append((op, None))
    for write_back, value in epilogue.write_backs:
        _emit(plan, epilogue.buffer, write_back, value)
    for op in [*epilogue.dead, epilogue.stage]:
        Rewriter.erase_op(op)
    return True


def _emit(
    plan: list[tuple[Operation, list[int] | None]], buffer: SSAValue, write_back: memref.StoreOp, value: SSAValue
) -> None:
    """The epilogue's `plan` before `write_back`, reading `value` for `buffer` and indexing by the write-back's
    indices."""
    builder = Builder(InsertPoint.before(write_back))
    indices = list(write_back.indices)
    mapping: dict[SSAValue, SSAValue] = {}
    for op, dims in plan:
        if isinstance(op, memref.LoadOp) and op.memref is buffer:
            mapping[op.res] = value
        elif isinstance(op, memref.LoadOp):
            assert dims is not None
            load = builder.insert(memref.LoadOp.get(op.memref, [indices[d] for d in dims]))
            load.res.name_hint = op.res.name_hint
            mapping[op.res] = load.res
        elif isinstance(op, memref.StoreOp):
            assert dims is not None
            stored = mapping.get(op.value, op.value)
            builder.insert(memref.StoreOp.get(stored, op.memref, [indices[d] for d in dims]))
        else:
            builder.insert(clone_op(op, mapping))
