"""`loop-pack`: give a kernel's weight operand a tiled layout, computed once at load time.

`loop-pack{kernel=matmul_0 operand=1 dim=1 factor=16}` moves dimension `dim` of the kernel's parameter `operand`
out as panels of `factor`: a `KxN` matrix tiled along N becomes `(N/16)xKx16` (GEMM panels the micro-kernel
streams contiguously; NCHWc weights are the same rule). Every read `B[k, j]` becomes `Bp[j / 16, k, j % 16]`,
simplified with the loop structure: the loops indexing `dim` must already be split so that `j = j_o + j_i` with
`j_o` a multiple of 16 and `0 <= j_i < 16`, giving `Bp[j_o / 16, k, j_i]`. `order` (default: as they are) lists
the other dimensions in the order the panel keeps them, so that a kernel walks its panel front to back: a
convolution reducing over (kh, kw, c), innermost last, packs its `FxCxKHxKW` weight with `dim=0 order=2,3,1` into
`(F/16)xKHxKWxCx16`. Each call site must pass a weight (or a
precomputed buffer); it now passes `loop.precompute @<kernel>_pack<operand>(%w)`, a copy kernel that `loop-to-scf`
runs once, when the model is loaded (see docs/design/runtime.md, "Binding"):

    %b = loop.weight "b" : memref<32x48xf32>
    func.call @matmul_0(%a, %b, %c) : ...
    // becomes
    %b = loop.weight "b" : memref<32x48xf32>
    %b_packed = loop.precompute @matmul_0_pack1(%b) : (memref<32x48xf32>) -> memref<3x32x16xf32>
    func.call @matmul_0(%a, %b_packed, %c) : ...
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import DYNAMIC_INDEX, MemRefType, ModuleOp
from xdsl.ir import SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import (
    Affine,
    affine_form,
    build_form,
    call_sites,
    find_kernel,
    form_range,
    index_constant,
    loop_of,
    new_loop,
)


def packed_shape(shape: list[int], dim: int, factor: int, order: list[int]) -> list[int]:
    """The shape of a buffer of `shape` tiled along `dim` by `factor`: panels first, then the other dimensions in
    `order`, the panel's lanes last."""
    return [shape[dim] // factor, *(shape[d] for d in order), factor]


@dataclass(frozen=True)
class LoopPackPass(ModulePass):
    """Tile weight parameter `operand` of kernel `kernel` along `dim` by `factor`, packed once at load time."""

    name = "loop-pack"

    kernel: str
    operand: int
    dim: int
    factor: int
    order: tuple[int, ...] = ()
    """The other dimensions, in the order the packed buffer keeps them (empty: their own order)."""

    def fail(self, reason: str) -> DiagnosticException:
        return DiagnosticException(f"{self.name}: operand {self.operand} of kernel '{self.kernel}': {reason}")

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernel = find_kernel(op, self.name, self.kernel)
        params = kernel.body.block.args
        if not 0 <= self.operand < len(params) - 1:
            raise self.fail(f"no such input (the kernel has inputs 0..{len(params) - 2})")
        param = params[self.operand]
        old_type = param.type
        assert isinstance(old_type, MemRefType)
        shape = list(old_type.get_shape())
        if not 0 <= self.dim < len(shape) or shape[self.dim] % self.factor or shape[self.dim] == DYNAMIC_INDEX:
            raise self.fail(f"cannot tile dimension {self.dim} of shape {shape} by {self.factor}")
        others = [d for d in range(len(shape)) if d != self.dim]
        if self.order and sorted(self.order) != others:
            raise self.fail(f"order {list(self.order)} is not a permutation of the other dimensions {others}")
        order = list(self.order) or others
        new_type = MemRefType(old_type.element_type, packed_shape(shape, self.dim, self.factor, order))
        calls = call_sites(op, self.kernel)
        for call in calls:
            if not isinstance(call.arguments[self.operand].owner, loop.WeightOp | loop.PrecomputeOp):
                raise self.fail("it is not a weight at every call site")
        param = Rewriter.replace_value_with_new_type(param, new_type)
        for use in list(param.uses):
            access = use.operation
            if not isinstance(access, memref.LoadOp):
                raise self.fail(f"it is used by '{access.name}', not only read")
            self.rewrite_load(access, order)
        kernel.function_type = func.FunctionType.from_lists(
            [arg.type for arg in kernel.body.block.args], kernel.function_type.outputs.data
        )
        pack_name = f"{self.kernel}_pack{self.operand}"
        op.body.block.add_op(self.pack_kernel(pack_name, old_type, new_type, order))
        for call in calls:
            weight = call.arguments[self.operand]
            precompute = loop.PrecomputeOp(pack_name, [weight], new_type)
            precompute.result.name_hint = f"{weight.name_hint or 'w'}_packed"
            Builder(InsertPoint.before(call)).insert(precompute)
            call.operands[self.operand] = precompute.result

    def rewrite_load(self, load: memref.LoadOp, order: list[int]) -> None:
        indices = list(load.indices)
        form = affine_form(indices[self.dim])
        if form is None:
            raise self.fail("an index of the tiled dimension is not affine in the loop indices")
        outer: Affine = {}
        inner: Affine = {None: form.get(None, 0)}
        for value, coeff in form.items():
            if value is None:
                continue
            owner = loop_of(value)
            assert owner is not None
            aligned = (coeff * owner.lower.value.data) % self.factor == 0 and (
                coeff * owner.step.value.data
            ) % self.factor == 0
            if owner.is_dynamic and not aligned:
                raise self.fail(
                    f"dimension {self.dim} is indexed by loop '{owner.loop_name.data}', which runs a run-time number "
                    f"of iterations: split it by {self.factor} first"
                )
            (outer if aligned else inner)[value] = coeff
        low, high = form_range(inner)
        if low < 0 or high >= self.factor:
            raise self.fail(
                f"split the loops indexing dimension {self.dim} so that the index is a multiple of {self.factor} "
                "plus an inner index below it"
            )
        builder = Builder(InsertPoint.before(load))
        panel = builder.insert(arith.DivUIOp(build_form(builder, outer), index_constant(builder, self.factor)))
        lane = build_form(builder, inner)
        new_indices: list[SSAValue] = [panel.result, *(indices[d] for d in order), lane]
        new_load = builder.insert(memref.LoadOp.get(load.memref, new_indices))
        new_load.res.name_hint = load.res.name_hint
        load.res.replace_all_uses_with(new_load.res)
        load.detach()
        load.erase()

    def pack_kernel(self, name: str, source: MemRefType, packed: MemRefType, order: list[int]) -> func.FuncOp:
        """`@name(%w, %packed)`: `packed[p, ..., l] = w[..., p * factor + l, ...]` (the middle dims in `order`)."""
        kernel = func.FuncOp(name, ([source, packed], []), visibility="private")
        body = kernel.body.block
        body.args[0].name_hint, body.args[1].name_hint = "in0", "out"
        loops = [new_loop(f"p{n}", 0, extent) for n, extent in enumerate(packed.get_shape())]
        body.add_op(loops[0])
        for outer, inner in zip(loops, loops[1:]):
            outer.body.block.add_op(inner)
        ivs = [lp.induction_var for lp in loops]
        builder = Builder(InsertPoint.at_end(loops[-1].body.block))
        scaled = builder.insert(arith.MuliOp(ivs[0], index_constant(builder, self.factor)))
        index = builder.insert(arith.AddiOp(scaled.result, ivs[-1])).result
        source_indices = [index] * (len(order) + 1)
        for d, iv in zip(order, ivs[1:-1]):
            source_indices[d] = iv
        value = builder.insert(memref.LoadOp.get(body.args[0], source_indices))
        builder.insert(memref.StoreOp.get(value.res, body.args[1], ivs))
        body.add_op(func.ReturnOp())
        return kernel
