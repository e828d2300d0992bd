"""Cast bridging shared by the `convert-to-llvm` patterns.

Types map as `strategy/data_layout.py` decides (`llvm_type`): `index` becomes `i64`, every `memref` becomes a bare
`!llvm.ptr`, other scalar and vector types stay as they are. Patterns read operands through `as_llvm` and replace
ops through `replace_lowered`, so converted and not-yet-converted ops meet at `builtin.unrealized_conversion_cast`s
that `reconcile-unrealized-casts` removes.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.dialects import builtin, llvm
from xdsl.dialects.builtin import (
    Float16Type,
    Float32Type,
    Float64Type,
    IntegerAttr,
    IntegerType,
    MemRefType,
    NoneAttr,
    VectorType,
    i64,
)
from xdsl.dialects.utils.fast_math import FastMathAttrBase, FastMathFlag
from xdsl.ir import Attribute, BlockArgument, Operation, OpResult, SSAValue
from xdsl.pattern_rewriter import PatternRewriter, RewritePattern
from xdsl.rewriter import InsertPoint
from xdsl.traits import SymbolTable
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.strategy.data_layout import llvm_type


class OpClassPatternApplier(RewritePattern):
    """Applies the first of `patterns` that rewrites an op, trying first the one that rewrote the last op of the
    same class: a conversion has one pattern per op class, so each op costs one match instead of one per pattern
    (`GreedyRewritePatternApplier` tries them all in order; on ResNet-50's ~80,000 ops that was a third of
    `convert-to-llvm`)."""

    def __init__(self, patterns: Sequence[RewritePattern]) -> None:
        self.patterns = tuple(patterns)
        self._last_match: dict[type[Operation], RewritePattern] = {}

    def match_and_rewrite(self, op: Operation, rewriter: PatternRewriter) -> None:
        known = self._last_match.get(type(op))
        if known is not None:
            known.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                return
        for pattern in self.patterns:
            if pattern is known:
                continue
            pattern.match_and_rewrite(op, rewriter)
            if rewriter.has_done_action:
                self._last_match[type(op)] = pattern
                return


def as_llvm(rewriter: PatternRewriter, value: SSAValue) -> SSAValue:
    """`value` with its LLVM type, through one cast per value placed right after its definition, which every use
    shares (a cast per use cost ResNet-50 29,000 casts for `reconcile-unrealized-casts` to remove)."""
    target = llvm_type(value.type)
    if target == value.type:
        return value
    # Only this function casts a value of a non-LLVM type to an LLVM one, always right after the definition, so
    # such a cast dominates every use of the value.
    for use in value.uses:
        user = use.operation
        if isinstance(user, builtin.UnrealizedConversionCastOp) and user.results[0].type == target:
            return user.results[0]
    cast = builtin.UnrealizedConversionCastOp.get([value], [target])
    if isinstance(value, OpResult):
        rewriter.insert(cast, InsertPoint.after(value.op))
    else:
        assert isinstance(value, BlockArgument)
        rewriter.insert(cast, InsertPoint.at_start(value.block))
    return cast.results[0]


def replace_lowered(
    rewriter: PatternRewriter,
    op: Operation,
    new_ops: Sequence[Operation],
    new_results: Sequence[SSAValue] | None = None,
) -> None:
    """Replace `op` by `new_ops`, casting new results back to the types of the old ones."""
    if new_results is None:
        new_results = new_ops[-1].results if new_ops else ()
    ops = list(new_ops)
    results: list[SSAValue] = []
    for old, new in zip(op.results, new_results, strict=True):
        if new.type != old.type:
            cast = builtin.UnrealizedConversionCastOp.get([new], [old.type])
            ops.append(cast)
            new = cast.results[0]
        results.append(new)
    rewriter.replace(op, ops, results)


def resolve_casts(module: builtin.ModuleOp) -> None:
    """Removes the casts `as_llvm` and `replace_lowered` left once every op is lowered: a cast whose chain of casts
    starts at a value of its own result type is replaced by that value, then casts without uses are erased. Casts
    that do not resolve stay (the caller reports them). Only the casts are visited, unlike xDSL's
    `reconcile-unrealized-casts`, whose greedy walk over every op of the module took 5% of compiling a small model.

        %a = llvm.add ... : i64             %a = llvm.add ... : i64
        %i = cast %a : i64 to index    ->   llvm.mul %a, ...
        %l = cast %i : index to i64
        llvm.mul %l, ...
    """
    casts = [op for op in module.walk() if isinstance(op, builtin.UnrealizedConversionCastOp)]
    for cast in casts:
        if len(cast.inputs) != 1 or len(cast.results) != 1:
            continue
        source = cast.inputs[0]
        while isinstance(source, OpResult) and isinstance(source.op, builtin.UnrealizedConversionCastOp):
            if len(source.op.inputs) != 1:
                break
            source = source.op.inputs[0]
        if source.type == cast.results[0].type:
            if source.name_hint is None:
                source.name_hint = cast.results[0].name_hint  # as the rewriter does: `%acc` keeps its name
            cast.results[0].replace_all_uses_with(source)
    dead = [cast for cast in casts if not any(result.uses for result in cast.results)]
    while dead:
        cast = dead.pop()
        if cast.parent is None:
            continue  # erased already: it was reached from two users
        inputs = list(cast.inputs)
        if len(inputs) == 1 and inputs[0].name_hint is None:
            inputs[0].name_hint = cast.results[0].name_hint
        cast.detach()
        cast.erase()
        for value in inputs:
            owner = value.owner
            if isinstance(owner, builtin.UnrealizedConversionCastOp) and owner.parent is not None:
                if not any(result.uses for result in owner.results):
                    dead.append(owner)


def llvm_fastmath(flags: FastMathAttrBase) -> llvm.FastMathAttr:
    """The `#llvm.fastmath` attribute with the same flags as an `arith`/`math` one."""
    # FastMathFlag(...) also accepts the plain strings an attribute may have been built from.
    return llvm.FastMathAttr(FastMathFlag(flag) for flag in flags.data)


def declare_function(rewriter: PatternRewriter, user: Operation, name: str, type: llvm.LLVMFunctionType) -> None:
    """Declare the external function `name` in the module around `user`, unless it exists."""
    module = user.get_toplevel_object()
    assert isinstance(module, builtin.ModuleOp)
    if SymbolTable.lookup_symbol(module, name) is None:
        declaration = llvm.FuncOp(name, type, linkage=llvm.LinkageAttr("external"))
        rewriter.insert(declaration, InsertPoint.at_end(module.body.block))


def type_suffix(type: Attribute) -> str:
    """The overload suffix LLVM mangles into intrinsic names: `f32`, `i64`, `v8f32`."""
    if isinstance(type, VectorType):
        (count,) = type.get_shape()
        return f"v{count}{type_suffix(type.element_type)}"
    if isinstance(type, Float16Type | Float32Type | Float64Type):
        return f"f{type.bitwidth}"
    if isinstance(type, IntegerType):
        return f"i{type.width.data}"
    raise DiagnosticException(f"convert-to-llvm: no intrinsic overload for type {type}")


def static_memref(op: Operation, type: Attribute) -> MemRefType:
    """`type` as a static identity-layout memref, or an error naming `op`."""
    if not isinstance(type, MemRefType) or not isinstance(type.layout, NoneAttr):
        raise DiagnosticException(f"convert-to-llvm: '{op.name}' needs an identity-layout memref")
    if not type.has_static_shape():
        raise DiagnosticException(f"convert-to-llvm: '{op.name}' needs a static shape, got {type}")
    return type


def addressable_memref(op: Operation, type: Attribute) -> MemRefType:
    """`type` as an identity-layout memref whose only run-time extent, if any, is the outermost one (the element
    address never uses it), or an error naming `op`: an inner `?` needs the linear index `loop-to-scf` computes."""
    if not isinstance(type, MemRefType) or not isinstance(type.layout, NoneAttr):
        raise DiagnosticException(f"convert-to-llvm: '{op.name}' needs an identity-layout memref")
    if any(dim < 0 for dim in type.get_shape()[1:]):
        raise DiagnosticException(
            f"convert-to-llvm: '{op.name}' on {type}: a run-time extent below the outermost dimension needs a "
            "linear index (loop-to-scf rewrites such accesses to a one-dimensional view)"
        )
    return type


def i64_constant(value: int) -> llvm.ConstantOp:
    """An `i64` LLVM constant."""
    return llvm.ConstantOp(IntegerAttr(value, i64), i64)


def element_pointer(
    rewriter: PatternRewriter, op: Operation, buffer: SSAValue, indices: tuple[SSAValue, ...]
) -> SSAValue:
    """The address of `buffer[indices]`: one `getelementptr` inserted before `op`, over the buffer seen as nested
    arrays (`memref<4x8xf32>` -> `getelementptr [8 x float], ptr %buffer, i64 %i, i64 %j`), so LLVM computes the
    row-major offset and keeps the subscripts for its dependence analysis. The outermost extent may be a run-time
    one (`memref<?x8xf32>`, `memref<?xf32>`): the address never uses it."""
    type = addressable_memref(op, buffer.type)
    base = as_llvm(rewriter, buffer)
    if not indices:
        return base
    pointee = llvm_type(type.element_type)
    for size in reversed(type.get_shape()[1:]):
        pointee = llvm.LLVMArrayType(size, pointee)
    subscripts = [as_llvm(rewriter, index) for index in indices]
    gep = llvm.GEPOp.from_mixed_indices(base, subscripts, pointee, inbounds=True)
    return rewriter.insert(gep).result
