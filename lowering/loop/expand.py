"""Code generation for the `vectorize` and `unroll` loop kinds, run by `loop-to-scf` before it lowers loops (and by
`default-schedule` on a trial copy, to learn whether a schedule's vector code can be generated).

A `vectorize` loop of N iterations (from 0, step 1) becomes its body on `vector<N x T>` values. Each value of the
body is either uniform (the same in every lane: cloned once as a scalar) or varying (one vector). Index values are
tracked as affine in the loop index: an access whose last index has stride 1 and others stride 0 is a contiguous
`vector.load`/`vector.store` at the lane-0 indices; an access with stride 0 everywhere is a scalar access; a read
whose last index has a small stride s (2 to `MAX_INTERLEAVE`) and others stride 0 (a pool's window of stride s) is
one contiguous load of the (N - 1) * s + 1 elements it spans and a `vector.shuffle` of every s-th one (never past
the last lane's element); any other affine access (a column of a row-major tile, say) is one scalar access per lane
through a small stack buffer, which LLVM turns into insert/extract-element (cheap where it is rare: a register
tile's final store). A contracting `arith.mulf` whose only use is a contracting `arith.addf` becomes `vector.fma`,
and an `arith.addi` of an `llvmx.dot_u8s8` from 0 (`arith.addf` of an `llvmx.dot_bf16`), used only there, the dot
product onto that accumulator:

    loop.for "j" %j = 0 to 8 step 1 vectorize {
      %x = memref.load %a[%i, %j] ; %y = memref.load %s[%i] ; %p = arith.mulf %x, %y ; ...
    }
    // becomes
    %x = vector.load %a[%i, %c0] : memref<4x8xf32>, vector<8xf32>
    %y = memref.load %s[%i] ; %yv = vector.broadcast %y : f32 to vector<8xf32> ; ...

An `unroll` loop becomes one copy of its body per iteration, with the index a constant. A `vectorize` or `unroll`
loop with a run-time upper bound is refused (`loop-split` gives it a static inner loop to mark instead).
"""

from __future__ import annotations

import functools

from xdsl.builder import Builder
from xdsl.dialects import arith, memref, vector
from xdsl.dialects.builtin import DenseArrayBase, FloatAttr, IntegerAttr, VectorType, i64
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import llvm_ext, loop
from minimlc.lowering.generic.built_ops import addi, load, store, vector_load, vector_store
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.generic.cse import is_side_effect_free
from minimlc.lowering.loop.analysis import index_constant, is_bool_buffer, loops_of, without_unit_tail
from minimlc.lowering.strategy.vectorization import LIBM_FUNCTIONS, MAX_INTERLEAVE


def expand_loops(root: Operation, *, vectors_only: bool = False) -> None:
    """Generate code for every `vectorize` and `unroll` loop under `root`, innermost first. `vectors_only` leaves the
    unroll loops that are not inside a vectorize loop: enough to learn whether the vector code can be generated
    (raises DiagnosticException if not), without making the copies."""
    for target in reversed(loops_of(root)):
        if target.kind.data in ("vectorize", "unroll") and target.is_dynamic:
            raise DiagnosticException(
                f"loop-to-scf: cannot {target.kind.data} loop '{target.loop_name.data}': its trip count is a run-time "
                "value (split it by a static factor with loop-split first, and mark the static inner loop)"
            )
        if target.kind.data == "vectorize":
            _Vectorizer(target).run()
        elif target.kind.data == "unroll" and (not vectors_only or _inside_vectorize_loop(target)):
            unroll(target)


def _inside_vectorize_loop(op: Operation) -> bool:
    parent = op.parent_op()
    while parent is not None:
        if isinstance(parent, loop.ForOp) and parent.kind.data == "vectorize":
            return True
        parent = parent.parent_op()
    return False


def unroll(target: loop.ForOp) -> None:
    """Replace `target` by one copy of its body per iteration: copies for all but the last, which takes the body
    itself (unrolling is most of the copying `loop-to-scf` does). Outside `vectorize` loops, an op free of effects
    whose operands are the same in every iteration (`_invariant_ops`) is copied once, for the first iteration, and
    the others use that copy: the copies `cse` would merge into it after `loop-to-scf` are never made. (Inside a
    `vectorize` loop the vector code generator counts uses: a product used once becomes an `fma`.)"""
    builder = Builder(InsertPoint.before(target))
    lower, step = target.lower.value.data, target.step.value.data
    body = list(target.body.block.ops)
    invariant = _invariant_ops(target, body) if target.trip_count > 1 and not _inside_vectorize_loop(target) else set()
    shared: dict[SSAValue, SSAValue] = {}  # the results of invariant ops -> those of their first iteration's copies
    for iteration in range(target.trip_count - 1):
        mapping: dict[SSAValue, SSAValue] = {target.induction_var: index_constant(builder, lower + iteration * step)}
        mapping.update(shared)
        for op in body:
            if iteration and op in invariant:
                continue
            clone = builder.insert(clone_op(op, mapping))
            if op in invariant:
                shared.update(zip(op.results, clone.results))
    if target.trip_count > 0:
        last = index_constant(builder, lower + (target.trip_count - 1) * step)
        for use in tuple(target.induction_var.uses):  # not `replace_all_uses_with`: it names `last` after the index
            use.operation.operands[use.index] = last
        for op in body:
            op.detach()
            if op in invariant:
                for result in op.results:
                    result.replace_all_uses_with(shared[result])
                op.erase()
            else:
                builder.insert(op)
    target.detach()
    target.erase()


def _invariant_ops(target: loop.ForOp, body: list[Operation]) -> set[Operation]:
    """The ops of `target`'s body without regions and free of effects whose operands are defined outside the body
    or by such ops: every iteration's copy would be the same op."""
    inside = {result for op in body for result in op.results}
    inside.add(target.induction_var)
    invariant: set[Operation] = set()
    for op in body:
        if op.regions or not is_side_effect_free(op):
            continue
        if all(operand not in inside or operand.owner in invariant for operand in op.operands):
            invariant.add(op)
    return invariant


@functools.cache
def vector_type_of(element_type: Attribute, lanes: int) -> VectorType:
    """`vector<lanes x element_type>`, made once (building one checks its parameters, a tenth of vectorizing)."""
    return VectorType(element_type, [lanes])


def _is_zero(value: SSAValue) -> bool:
    """Whether `value` is a constant 0 or a broadcast of one."""
    owner = value.owner
    if isinstance(owner, vector.BroadcastOp):
        owner = owner.source.owner
    constant = owner.value if isinstance(owner, arith.ConstantOp) else None
    return isinstance(constant, IntegerAttr | FloatAttr) and not constant.value.data


def _contracts(op: Operation) -> bool:
    flags = getattr(op, "fastmath", None)
    return flags is not None and FastMathFlag.ALLOW_CONTRACT in flags.data


_REGIONS = "has regions (only the innermost loop can be vectorized)"
_REDUCTION = "stores a value that differs per lane to one address (a reduction)"
_SCALAR_CALL = "has no vector form (it is a scalar libm call)"


def check_in_place(root: loop.ForOp) -> bool:
    """Whether `root`, a `vectorize` loop, was checked without copying it: raise DiagnosticException where
    `expand_loops(root, vectors_only=True)` would, without building its code, if `root` has a static trip count and
    all loops in it are static `unroll` loops; else return False (copy it and expand the copy)."""
    if root.kind.data != "vectorize" or root.is_dynamic:
        return False
    if any(inner.kind.data != "unroll" or inner.is_dynamic for inner in loops_of(root)[1:]):
        return False
    try:
        _Vectorizer(root, build=False).check(root.body.block)
    except _Undecided:
        return False
    return True


class _Undecided(Exception):
    """The check in place cannot tell: a stride that differs between an unrolled loop's copies."""


class _Vectorizer:
    """Rewrites one `vectorize` loop into straight-line vector code before it."""

    def __init__(self, target: loop.ForOp, build: bool = True):
        self.target = target
        self.build = build
        self.lanes = target.trip_count
        self.builder = Builder(InsertPoint.before(target))
        self.scalar: dict[SSAValue, SSAValue] = {target.induction_var: index_constant(self.builder, 0)} if build else {}
        self.stride: dict[SSAValue, int] = {target.induction_var: 1}
        self.vector: dict[SSAValue, SSAValue] = {}
        self.broadcasts: dict[SSAValue, SSAValue] = {}

    def fail(self, op: Operation, reason: str) -> DiagnosticException:
        return DiagnosticException(
            f"loop-vectorize: cannot vectorize loop '{self.target.loop_name.data}': '{op.name}' {reason}"
        )

    def run(self) -> None:
        for op in self.target.body.block.ops:
            if isinstance(op, memref.LoadOp):
                self.load(op)
            elif isinstance(op, memref.StoreOp):
                self.store(op)
            elif any(operand in self.stride for operand in op.operands):
                self.index_op(op)
            elif any(operand in self.vector for operand in op.operands):
                self.vector_op(op)
            elif op.regions:
                raise self.fail(op, _REGIONS)
            else:
                self.builder.insert(clone_op(op, self.scalar))
        self.target.detach()
        self.target.erase()

    def index_op(self, op: Operation) -> None:
        stride = self.index_stride(op)
        clone = self.builder.insert(clone_op(op, self.scalar))
        self.scalar[op.results[0]] = clone.results[0]
        self.stride[op.results[0]] = stride

    def index_stride(self, op: Operation) -> int:
        """How far the result of `op`, an op on the loop index, moves per lane (raises if it is not affine)."""
        strides = [self.stride.get(operand, 0) for operand in op.operands]
        if isinstance(op, arith.AddiOp):
            return strides[0] + strides[1]
        if isinstance(op, arith.SubiOp):
            return strides[0] - strides[1]
        if isinstance(op, arith.MuliOp) and 0 in strides:
            other = op.operands[strides.index(0)].owner
            if not self.build and self.unrolled_index(other):  # a constant in each copy, each its own
                raise _Undecided()
            if not isinstance(other, arith.ConstantOp):
                raise self.fail(op, "scales the loop index by a non-constant")
            return max(strides) * other.value.value.data  # type: ignore[union-attr]
        raise self.fail(op, "uses the loop index in a non-affine way")

    def unrolled_index(self, owner: Operation | Block) -> bool:
        """Whether `owner` holds the index of an `unroll` loop inside the loop (the block of its body)."""
        loop_op = owner.parent_op() if isinstance(owner, Block) else None
        return isinstance(loop_op, loop.ForOp) and loop_op is not self.target and self.target.is_ancestor(loop_op)

    def check(self, block: Block) -> None:
        """Raise what `run` would raise on `block` (the loop's body), building nothing: strides and varying values
        are tracked as `run` tracks them (a varying value maps to itself). A static `unroll` loop in the body is
        read once, its index uniform like the constants its copies get (`expand_loops` unrolls it first)."""
        for op in block.ops:
            if isinstance(op, memref.LoadOp):
                if self.access_kind(op) != "scalar":
                    self.vector[op.res] = op.res
            elif isinstance(op, memref.StoreOp):
                if self.access_kind(op) == "scalar" and op.value in self.vector:
                    raise self.fail(op, _REDUCTION)
            elif any(operand in self.stride for operand in op.operands):
                self.stride[op.results[0]] = self.index_stride(op)
            elif any(operand in self.vector for operand in op.operands):
                if type(op) in LIBM_FUNCTIONS:
                    raise self.fail(op, _SCALAR_CALL)
                self.vector.update((result, result) for result in op.results)
            elif isinstance(op, loop.ForOp) and op.kind.data == "unroll" and not op.is_dynamic:
                if op.trip_count:
                    self.check(op.body.block)
            elif op.regions:
                raise self.fail(op, _REGIONS)

    def access_kind(self, op: memref.LoadOp | memref.StoreOp) -> str:
        indices = list(op.indices)
        if any(index in self.vector for index in indices):
            raise self.fail(op, "reads or writes at an index that differs per lane (a gather or scatter)")
        strides = self.strides(op)
        if any(strides) and is_bool_buffer(op.memref):
            raise self.fail(op, "accesses bool (i1) memory, one byte per element, which LLVM vectors pack into bits")
        if not any(strides):
            return "scalar"
        if strides[-1] == 1 and not any(strides[:-1]):
            return "contiguous"
        if 1 < strides[-1] <= MAX_INTERLEAVE and not any(strides[:-1]):
            return "interleaved"
        return "strided"

    def strides(self, op: memref.LoadOp | memref.StoreOp) -> list[int]:
        """How far each index of `op` moves per lane (trailing dimensions of extent 1 left out)."""
        return without_unit_tail(op.memref, [self.stride.get(index, 0) for index in op.indices])

    def lane_indices(self, indices: list[SSAValue], lane: int) -> list[SSAValue]:
        """The indices lane `lane` of a strided access reads or writes."""
        result: list[SSAValue] = []
        for index in indices:
            base, stride = self.scalar.get(index, index), self.stride.get(index, 0)
            if stride and lane:
                offset = index_constant(self.builder, stride * lane)
                base = self.builder.insert(addi(base, offset)).result
            result.append(base)
        return result

    def lanes_buffer(self, element_type: Attribute) -> SSAValue:
        """A stack buffer of one vector, to move lanes between a vector and scalar accesses."""
        return self.builder.insert(memref.AllocaOp.get(element_type, 64, [self.lanes])).memref

    def indices(self, indices: list[SSAValue]) -> list[SSAValue]:
        return [self.scalar.get(index, index) for index in indices]

    def load(self, op: memref.LoadOp) -> None:
        kind = self.access_kind(op)
        if kind == "scalar":
            self.builder.insert(clone_op(op, self.scalar))
            return
        vector_type = vector_type_of(op.res.type, self.lanes)
        if kind == "contiguous":
            loaded = self.builder.insert(vector_load(op.memref, self.indices(list(op.indices)), vector_type))
        elif kind == "interleaved":
            loaded = self.interleaved_load(op, vector_type)
        else:
            lanes = self.lanes_buffer(op.res.type)
            for lane in range(self.lanes):
                value = self.builder.insert(load(op.memref, self.lane_indices(list(op.indices), lane)))
                self.builder.insert(store(value.res, lanes, [index_constant(self.builder, lane)]))
            loaded = self.builder.insert(vector_load(lanes, [index_constant(self.builder, 0)], vector_type))
        self.vector[op.res] = loaded.result

    def interleaved_load(self, op: memref.LoadOp, vector_type: VectorType) -> vector.ShuffleOp:
        """Every s-th element of the contiguous span lane 0 to the last lane reads (stride s of the last index)."""
        stride = self.strides(op)[-1]
        span = vector_type_of(op.res.type, (self.lanes - 1) * stride + 1)
        whole = self.builder.insert(vector_load(op.memref, self.indices(list(op.indices)), span)).result
        mask = DenseArrayBase.from_list(i64, [lane * stride for lane in range(self.lanes)])
        return self.builder.insert(vector.ShuffleOp(whole, whole, mask, result_type=vector_type))

    def store(self, op: memref.StoreOp) -> None:
        kind = self.access_kind(op)
        if kind == "scalar":
            if op.value in self.vector:
                raise self.fail(op, _REDUCTION)
            self.builder.insert(clone_op(op, self.scalar))
            return
        value = self.as_vector(op.value)
        if kind == "contiguous":
            self.builder.insert(vector_store(value, op.memref, self.indices(list(op.indices))))
            return
        lanes = self.lanes_buffer(op.value.type)
        self.builder.insert(vector_store(value, lanes, [index_constant(self.builder, 0)]))
        for lane in range(self.lanes):
            element = self.builder.insert(load(lanes, [index_constant(self.builder, lane)]))
            self.builder.insert(store(element.res, op.memref, self.lane_indices(list(op.indices), lane)))

    def as_vector(self, value: SSAValue) -> SSAValue:
        if value in self.vector:
            return self.vector[value]
        if value not in self.broadcasts:
            scalar = self.scalar.get(value, value)
            broadcast = vector.BroadcastOp(scalar, vector_type_of(scalar.type, self.lanes))
            self.broadcasts[value] = self.builder.insert(broadcast).vector
        return self.broadcasts[value]

    def vector_op(self, op: Operation) -> None:
        if type(op) in LIBM_FUNCTIONS:
            raise self.fail(op, _SCALAR_CALL)
        if isinstance(op, arith.AddfOp) and _contracts(op) and self.fused(op):
            return
        if isinstance(op, arith.AddiOp | arith.AddfOp) and self.accumulated_dot_product(op):
            return
        operands = [self.as_vector(operand) for operand in op.operands]
        if isinstance(op, arith.SelectOp) and op.cond in self.vector:
            # One condition per lane: LLVM's vector compare and select, which arith's ops (one i1) cannot express.
            self.vector[op.result] = self.builder.insert(llvm_ext.SelectOp(*operands)).result
            return
        if isinstance(op, arith.CmpfOp):
            compare = llvm_ext.FCmpOp(operands[0], operands[1], op.predicate.value.data)
            self.vector[op.result] = self.builder.insert(compare).result
            return
        if isinstance(op, arith.SelectOp):
            operands[0] = self.scalar.get(op.cond, op.cond)
        result_types = [vector_type_of(result.type, self.lanes) for result in op.results]
        new_op = op.create(
            operands=operands,
            result_types=result_types,
            properties=dict(op.properties),
            attributes=dict(op.attributes),
        )
        self.builder.insert(new_op)
        for old, new in zip(op.results, new_op.results):
            self.vector[old] = new

    def accumulated_dot_product(self, op: arith.AddiOp | arith.AddfOp) -> bool:
        """Emit `acc + dot_u8s8(0, a, b)` as `dot_u8s8(acc, a, b)` (one `vpdpbusd`), and `acc + dot_bf16(0.0, a, b)`
        as `dot_bf16(acc, a, b)` (one `vdpbf16ps`: its sum is rounded as the instruction rounds it, within the
        bfloat16 tolerance the op states), if the dot product is used only here."""
        kind = llvm_ext.DotU8S8Op if isinstance(op, arith.AddiOp) else llvm_ext.DotBF16Op
        for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            dot = self.vector[product].owner if product in self.vector else None
            if isinstance(dot, kind) and _is_zero(dot.acc) and product.has_one_use():
                accumulated = kind(self.as_vector(addend), dot.lhs, dot.rhs)
                accumulated.properties.update(dot.properties)  # the operands' bounds (`lhs_max`, `rhs_bits`)
                self.vector[op.result] = self.builder.insert(accumulated).result
                dot.detach()
                dot.erase()
                return True
        return False

    def fused(self, op: arith.AddfOp) -> bool:
        """Emit `op` as `vector.fma` if one operand is a contracting vector product used only here."""
        for product, addend in ((op.lhs, op.rhs), (op.rhs, op.lhs)):
            mul = self.vector[product].owner if product in self.vector else None
            if isinstance(mul, arith.MulfOp) and _contracts(mul) and product.has_one_use():
                fma = vector.FMAOp(mul.lhs, mul.rhs, self.as_vector(addend))
                self.vector[op.result] = self.builder.insert(fma).res
                mul.detach()
                mul.erase()
                return True
        return False
