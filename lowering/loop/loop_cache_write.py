"""`loop-cache-write`: accumulate a loop's output tile in local storage (TVM `cache_write`).

`loop-cache-write{kernel=matmul_0 loop=i_o}` finds the one buffer the body of loop `i_o` writes, the tile of it
that one iteration touches (indices are affine: a part fixed per iteration plus inner loop indices), and redirects
every access in the body to a `loop.alloc "local"` tile, loaded before and stored after the body by copy loops
`<loop>_ld<d>` / `<loop>_st<d>` (with `accumulate=true`: zeroed before, added to the output after; with `fill=true`:
started at the output's fill constant, stored after, the fill nest gone once nothing needs it). A copy loop takes
the kind of the loop that indexes its dimension, so that an unrolled, vectorized tile (a GEMM micro-kernel's
accumulators) stays in registers. The tile keeps the buffer's
dimension order except that a vectorized dimension goes last, so that the body's tile accesses are whole vectors
even when the buffer's vectorized dimension is not its innermost (a convolution vectorized over output channels
of an NCHW output: only the copy back is strided):

    loop.for "i_o" %i_o = 0 to 64 step 4 serial {
      loop.for "k" ... { loop.for "i_i" ... unroll { loop.for "j_i" ... vectorize {
        %i = arith.addi %i_o, %i_i ; ... out[%i, %j] = out[%i, %j] + ... } } }
    }
    // becomes
    %tile = loop.alloc "local" : memref<4x16xf32>
    loop.for "i_o" %i_o = 0 to 64 step 4 serial {
      loop.for "i_o_ld0" ... unroll { loop.for "i_o_ld1" ... vectorize { tile[a, b] = out[%i_o + a, %j_o + b] } }
      loop.for "k" ... { ... tile[%i_i, %j_i] = tile[%i_i, %j_i] + ... }
      loop.for "i_o_st0" ... unroll { loop.for "i_o_st1" ... vectorize { out[%i_o + a, %j_o + b] = tile[a, b] } }
    }
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import FloatAttr, IntegerAttr, IntegerType, MemRefType, ModuleOp
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.generic.built_ops import addi, load, store
from minimlc.lowering.loop import cache_write_coverage
from minimlc.lowering.loop.analysis import (
    Affine,
    affine_form,
    build_form,
    check_new_names,
    cover_each_element_once,
    defined_within,
    distinct_writes,
    find_kernel,
    find_loop,
    form_range,
    loop_of,
    loops_of,
    new_loop,
    stores_apart,
    top_level,
    walk_ops,
    writes_each_element_once,
)

_Access = memref.LoadOp | memref.StoreOp
_SUM_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT))


@dataclass(frozen=True)
class LoopCacheWritePass(ModulePass):
    """Accumulate the tile of the output that one iteration of `loop` writes in a local buffer."""

    name = "loop-cache-write"

    kernel: str
    loop: str
    accumulate: bool = False
    """Start the tile at zero and add it to the output afterwards (for a sum into the output): a blocked sum,
    more accurate than one long chain, and no load of the output before the body."""
    fill: bool = False
    """Start the tile at the constant that the kernel's nest before this one fills the whole output with (the
    identity `loop-decompose-reduction` stores) and store it back (the whole reduction must be inside the loop: the
    copy back writes no element twice); once the copies back in the nest, and nothing else there, write every element
    of the output once (one tile, or a tile and a tail's tile), remove the fill nest. Saves a pass over the output
    (a serial one where that nest is too small to run in parallel) and the read of it. In a kernel with loops of a
    run-time trip count the proof is symbolic (`cache_write_coverage`: a dynamic split's main tiles over
    `[0, n - n % f)` and its remainder's over `[n - n % f, n)` cover `[0, n)`); where it fails, the fill stays."""

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(f"{self.name}: loop '{self.loop}' of kernel '{self.kernel}': {reason}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        target = find_loop(kernel, self.name, self.loop)
        if self.fill and self.accumulate:
            raise self.fail("fill=true starts the tile at the output's fill; accumulate=true at zero: choose one")
        body = target.body.block
        written = {store.memref for store in walk_ops(target) if isinstance(store, memref.StoreOp)}
        if len(written) != 1:
            raise self.fail(f"its body must write exactly one buffer, not {len(written)}")
        (buffer,) = written
        buffer_type = buffer.type
        assert isinstance(buffer_type, MemRefType)
        inner_ivs = {lp.induction_var for lp in loops_of(target) if lp is not target}
        accesses = [a for a in walk_ops(target) if isinstance(a, _Access) and a.memref is buffer]
        self.check_static_tile(kernel, target, accesses)
        dynamic = _has_dynamic_loop(kernel)  # the steps below add static loops only
        opaque = target.body.block if dynamic else None
        outer_parts, inner_parts = self.split_indices(accesses, inner_ivs, opaque)
        rank = len(buffer_type.get_shape())
        extents = [max(form_range(parts[d])[1] for parts in inner_parts) + 1 for d in range(rank)]
        kinds = [self.kind_of(inner_parts, d) for d in range(rank)]
        order = sorted(range(rank), key=lambda d: kinds[d] == "vectorize")
        names = [f"{self.loop}_{io}{d}" for io in ("ld", "st", "ldt", "stt") for d in range(rank)]
        check_new_names(kernel, self.name, names)

        tile_type = MemRefType(buffer_type.element_type, [extents[d] for d in order])
        tile = loop.AllocOp(tile_type, "local")
        tile.result.name_hint = "tile"
        kernel.body.block.insert_op_before(tile, kernel.body.block.first_op)  # type: ignore[arg-type]
        for access, parts in zip(accesses, inner_parts):
            builder = Builder(InsertPoint.before(access))
            indices = [build_form(builder, parts[d]) for d in order]
            if isinstance(access, memref.LoadOp):
                new_access = builder.insert(load(tile.result, indices))
                access.res.replace_all_uses_with(new_access.res)
            else:
                builder.insert(store(access.value, tile.result, indices))
            access.detach()
            access.erase()
        fill_nest, fill = self.fill_nest(kernel, target, buffer, dynamic) if self.fill else (None, None)
        start = Builder(InsertPoint.at_start(body))
        bases = [build_form(start, part) for part in outer_parts]
        copies = _Copies(self.loop, self.accumulate, order, extents, kinds, bases, buffer, fill)
        end = Builder(InsertPoint.at_end(body))
        if order == list(range(rank)):
            copies.load(start, tile.result)
            copies.store(end, tile.result)
        else:
            self.staged(kernel, tile, tile_type, copies, start, end)
        if fill_nest is not None:
            self.remove_fill(kernel, target, buffer, fill_nest, dynamic)

    def staged(
        self,
        kernel: func.FuncOp,
        tile: loop.AllocOp,
        tile_type: MemRefType,
        copies: _Copies,
        start: Builder,
        end: Builder,
    ) -> None:
        """The vector dimension is not the buffer's innermost: copy through a staging tile in memory, so that the
        register tile is only ever accessed by whole vectors (LLVM keeps it in registers) and the transposed copy is
        a small run-time loop instead of unrolled per-lane code."""
        stage = loop.AllocOp(tile_type, "local")
        stage.result.name_hint = "stage"
        kernel.body.block.insert_op_before(stage, tile)
        if self.accumulate or copies.fill is not None:  # the tile starts at a constant: no staging on the way in
            copies.load(start, tile.result)
        else:
            copies.load(start, stage.result, serial=True)
            copies.move(start, "ldt", stage.result, tile.result)
        copies.move(end, "stt", tile.result, stage.result)
        copies.store(end, stage.result, serial=True)

    def fill_nest(
        self, kernel: func.FuncOp, target: loop.ForOp, buffer: SSAValue, dynamic: bool
    ) -> tuple[loop.ForOp, Attribute]:
        """The nest that fills all of `buffer` with a constant before `target`'s, and that constant (see `fill`): the
        nearest such nest before it, past nests that store to `buffer` without reading it (tiles already started at
        the fill: a row tail's tile after its main tiles' nest)."""
        nest = top_level(target, kernel.body.block)
        before = nest.prev_op if nest is not None else None
        block = kernel.body.block if dynamic else None
        while before is not None:
            if isinstance(before, loop.ForOp) and (store := _fill_store(before, buffer, block)) is not None:
                return before, store.value.owner.value  # type: ignore[union-attr]
            if any(isinstance(op, memref.LoadOp) and op.memref is buffer for op in walk_ops(before)):
                break
            before = before.prev_op
        raise self.fail("fill=true needs a nest before it to fill the whole output with a constant")

    def remove_fill(
        self, kernel: func.FuncOp, target: loop.ForOp, buffer: SSAValue, fill: loop.ForOp, dynamic: bool
    ) -> None:
        """Check that the copy back writes no element of `buffer` twice nor one that a store since the fill writes,
        and erase the fill once the stores since it write every element once and nothing since reads `buffer` (with
        a tail's tile still to convert, the fill stays for it). With loops of a run-time trip count the proofs are
        `cache_write_coverage`'s: where it cannot show the tiles cover the output, the fill stays."""
        block = kernel.body.block
        nest = top_level(target, block)
        assert nest is not None
        (write_back,) = [op for op in walk_ops(target) if isinstance(op, memref.StoreOp) and op.memref is buffer]
        if not (
            cache_write_coverage.writes_once(write_back, block)
            if dynamic
            else distinct_writes(write_back, nest) is not None
        ):
            if dynamic:
                raise self.fail(
                    "fill=true needs the whole reduction inside the loop: the copy back may write an element twice "
                    "(a loop of a run-time trip count counts once only from 0 by 1, or as a split's main part): "
                    "use accumulate=true"
                )
            raise self.fail("fill=true needs the whole reduction inside the loop: the copy back would write twice")
        since: list[Operation] = []
        op = fill.next_op
        while op is not None and op is not nest.next_op:
            since += [a for a in walk_ops(op) if isinstance(a, _Access) and a.memref is buffer]
            op = op.next_op
        stores = [a for a in since if isinstance(a, memref.StoreOp)]
        apart = (lambda a, b: cache_write_coverage.stores_apart(a, b, block)) if dynamic else stores_apart
        if any(not apart(write_back, store) for store in stores if store is not write_back):
            raise self.fail("fill=true: a store since the fill writes elements of the tile's region")
        cover = cache_write_coverage.cover_each_element_once if dynamic else cover_each_element_once
        if len(stores) == len(since) and cover(stores, block):
            fill.detach()
            fill.erase()

    def check_static_tile(self, kernel: func.FuncOp, target: loop.ForOp, accesses: list[_Access]) -> None:
        """Refuse a tile indexed by a loop inside `target` of a run-time trip count (its size would not be static)."""
        dynamic = {lp.induction_var: lp for lp in loops_of(target) if lp is not target and lp.is_dynamic}
        for access in accesses:
            for index in access.indices:
                if owner := next((dynamic[v] for v in affine_form(index) or {} if v in dynamic), None):
                    raise self.fail(
                        f"the tile is indexed by loop '{owner.loop_name.data}', which runs a run-time number of "
                        "iterations"
                    )

    def split_indices(self, accesses: list[_Access], inner_ivs: set[SSAValue], opaque: Block | None = None):
        """Per access and dimension: the part fixed in one iteration (same for all) and the inner-loop part. With
        `opaque` (the loop's body, in a kernel with loops of a run-time trip count), an index defined outside it that
        is not affine (a remainder loop's row `%main + r`) is one fixed term."""
        outer_parts: list[Affine] | None = None
        inner_parts: list[list[Affine]] = []
        for access in accesses:
            forms = [
                affine_form(index) if opaque is None else _with_fixed_terms(index, opaque) for index in access.indices
            ]
            outer: list[Affine] = []
            inner: list[Affine] = []
            for form in forms:
                if form is None:
                    raise self.fail(f"an index of '{access.name}' is not affine in the loop indices")
                outer.append({v: c for v, c in form.items() if v not in inner_ivs})
                inner.append({v: c for v, c in form.items() if v in inner_ivs})
            if outer_parts is None:
                outer_parts = outer
            elif outer != outer_parts:
                raise self.fail("its accesses to the output do not share one tile origin")
            if any(form_range(part)[0] < 0 for part in inner):
                raise self.fail("an inner index may be negative")
            inner_parts.append(inner)
        if outer_parts is None:
            raise self.fail("it does not access the buffer it writes")
        return outer_parts, inner_parts

    @staticmethod
    def kind_of(inner_parts: list[list[Affine]], dim: int) -> str:
        """The kind of the loop that alone indexes `dim` (unit stride, from 0), else serial."""
        owners = {next(iter(parts[dim])) for parts in inner_parts if len(parts[dim]) == 1}
        if len(owners) != 1 or any(len(parts[dim]) != 1 for parts in inner_parts):
            return "serial"
        (iv,) = owners
        owner = loop_of(iv) if iv is not None else None
        if owner is None or inner_parts[0][dim][iv] != 1 or owner.step.value.data != 1:
            return "serial"
        return owner.kind.data


def _with_fixed_terms(value: SSAValue, body: Block) -> Affine | None:
    """`affine_form` of `value`, where a value defined outside `body` that is not affine (a remainder loop's run-time
    start `%main`) is a term of its own, so that `%main + r` is `{%main: 1, r: 1}`."""
    form = affine_form(value)
    if form is not None:
        return form
    if not defined_within(value, body):
        return {value: 1}
    owner = value.owner
    if not isinstance(owner, arith.AddiOp):
        return None
    lhs, rhs = _with_fixed_terms(owner.lhs, body), _with_fixed_terms(owner.rhs, body)
    if lhs is None or rhs is None:
        return None
    return {key: lhs.get(key, 0) + rhs.get(key, 0) for key in [*lhs, *(key for key in rhs if key not in lhs)]}


def _has_dynamic_loop(kernel: func.FuncOp) -> bool:
    return any(lp.is_dynamic for lp in loops_of(kernel))


def _fill_store(nest: loop.ForOp, buffer: SSAValue, dynamic: Block | None) -> memref.StoreOp | None:
    """A store of `nest` if the nest stores one constant to every element of `buffer` once and does nothing else.
    With `dynamic` (the kernel's body, whose loops run run-time trip counts) the nest may store it from several
    stores (a split's main part and remainder: `i_init_o { i_init_i }`, `i_init_t`)."""
    stores = [op for op in walk_ops(nest) if isinstance(op, memref.StoreOp)]
    constants = [store.value.owner for store in stores]
    if (
        (len(stores) == 1 or (dynamic is not None and stores))
        and all(store.memref is buffer for store in stores)
        and all(isinstance(constant, arith.ConstantOp) for constant in constants)
        and len({constant.value for constant in constants}) == 1  # type: ignore[union-attr]
        and not any(isinstance(op, memref.LoadOp) for op in walk_ops(nest))
        and (
            cache_write_coverage.cover_each_element_once(stores, dynamic)
            if dynamic is not None
            else writes_each_element_once(stores[0], nest)
        )
    ):
        return stores[0]
    return None


@dataclass
class _Copies:
    """The copy nests between a buffer's tile and a local tile of the same extents (dimensions in `order`)."""

    loop: str
    accumulate: bool
    order: list[int]
    extents: list[int]
    kinds: list[str]
    bases: list[SSAValue]
    buffer: SSAValue
    fill: Attribute | None = None
    """The constant the tile starts at instead of the buffer's values (`fill=true`)."""

    def nest(self, builder: Builder, prefix: str, serial: bool) -> tuple[Builder, list[SSAValue], list[SSAValue]]:
        """Loops `<loop>_<prefix><d>` over the tile; returns the innermost builder and buffer and tile indices.

        Register copies run in tile order with the indexing loops' kinds; `serial` ones in buffer order."""
        dims = list(range(len(self.extents))) if serial else self.order
        loops = [
            new_loop(f"{self.loop}_{prefix}{d}", 0, self.extents[d], 1, "serial" if serial else self.kinds[d])
            for d in dims
        ]
        builder.insert(loops[0])
        for outer, inner in itertools.pairwise(loops):
            outer.body.block.add_op(inner)
        innermost: Block = loops[-1].body.block
        inner_builder = Builder(InsertPoint.at_end(innermost))
        by_dim = {d: lp.induction_var for d, lp in zip(dims, loops)}
        buffer_indices = [inner_builder.insert(addi(b, by_dim[d])).result for d, b in enumerate(self.bases)]
        return inner_builder, buffer_indices, [by_dim[d] for d in self.order]

    def load(self, builder: Builder, tile: SSAValue, serial: bool = False) -> None:
        inner, buffer_indices, tile_indices = self.nest(builder, "ld", serial)
        if self.accumulate:
            element_type = self.buffer.type.element_type  # type: ignore[union-attr]
            integer = isinstance(element_type, IntegerType)
            zero = IntegerAttr(0, element_type) if integer else FloatAttr(0.0, element_type)
            value = inner.insert(arith.ConstantOp(zero)).result
        elif self.fill is not None:
            value = inner.insert(arith.ConstantOp(self.fill)).result
        else:
            value = inner.insert(load(self.buffer, buffer_indices)).res
        inner.insert(store(value, tile, tile_indices))

    def store(self, builder: Builder, tile: SSAValue, serial: bool = False) -> None:
        inner, buffer_indices, tile_indices = self.nest(builder, "st", serial)
        value = inner.insert(load(tile, tile_indices)).res
        if self.accumulate:
            old = inner.insert(load(self.buffer, buffer_indices))
            if isinstance(value.type, IntegerType):
                value = inner.insert(addi(old.res, value)).result
            else:
                value = inner.insert(arith.AddfOp(old.res, value, _SUM_FLAGS)).result
        inner.insert(store(value, self.buffer, buffer_indices))

    def move(self, builder: Builder, prefix: str, source: SSAValue, target: SSAValue) -> None:
        """Copy one local tile into another, in registers."""
        inner, _, tile_indices = self.nest(builder, prefix, serial=False)
        value = inner.insert(load(source, tile_indices)).res
        inner.insert(store(value, target, tile_indices))
