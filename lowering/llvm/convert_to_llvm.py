"""`convert-to-llvm`: `func`, `cf`, `memref`, `arith` and `math` -> the `llvm` dialect.

Input is what `loop-to-scf` followed by `convert-scf-to-cf` produce: functions of `cf` blocks over identity-layout
memrefs, static-shaped but for the outermost dimension (`loop-to-scf` linearises accesses to buffers with inner `?`s;
an access to one that reaches this pass is refused). A memref becomes a bare `!llvm.ptr` to its first element and an
access one `getelementptr` over the buffer as nested arrays (`%m[%i, %j]` of a `memref<4x8xf32>`:
`getelementptr [8 x float], ptr %m, i64 %i, i64 %j`), and a `loop.prefetch` an `llvm.prefetch` of such an address;
`index` becomes `i64`.
`memref.alloc`/`dealloc` call `aligned_alloc`/`free` (a run-time byte size for run-time extents),
`memref.collapse_shape` and `loop.view` are their source's pointer, `memref.alloca` becomes an `llvm.alloca`
in the entry block, where `mem2reg` promotes it, and `memref.view` (a typed buffer inside a byte
arena, from `loop-plan-memory`) a byte `getelementptr` to its offset. Private functions get internal linkage;
`llvm.*` argument attributes (such as `llvm.noalias`) and `minimlc.*` function attributes (for
the runtime: `minimlc.entry`, `minimlc.weights`) are kept. A function marked
`minimlc.entry` becomes `@<name>_packed(%args: !llvm.ptr)`, the one native entry the runtime calls: the entry's
body, reading its i-th buffer's pointer from `args[i]` where it first needs it (`packed_reads`); `@<name>`, with
the entry's own signature, becomes a wrapper that stores its pointers into a stack array and calls it. A model's
entry takes every weight. Passing ~480 of them on the stack cost LLVM's store merging in the instruction selector
108 of light DenseNet-121's 129 s of code generation; loading all of them at the start of the body kept each one
live across the whole entry (that partition's LLVM time: 0.80 s, against 0.38 s loading each at its first use).
Load-time code (`minimlc.load_time`) is marked `minsize optsize` (`abi.llvm_function_flags`).

The arith/math patterns live in `arith_patterns.py`, the vector ones in `vector_patterns.py`. Patterns bridge
types with unrealized casts, and the pass resolves them at the end, so its output is pure `llvm`/`llvmx`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import builtin, cf, func, llvm, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    NoneAttr,
    StringAttr,
    i32,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.pattern_rewriter import (
    PatternRewriter,
    PatternRewriteWalker,
    RewritePattern,
    op_type_rewrite_pattern,
)
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException, PassFailedException

from minimlc.dialects import llvm_ext, loop
from minimlc.lowering.abi import ENTRY_ATTR, llvm_function_flags, packed_name
from minimlc.lowering.llvm.arith_patterns import ARITH_MATH_PATTERNS
from minimlc.lowering.llvm.conversion import (
    OpClassPatternApplier,
    as_llvm,
    declare_function,
    element_pointer,
    i64_constant,
    replace_lowered,
    resolve_casts,
    static_memref,
)
from minimlc.lowering.llvm.dot_bf16 import DotBF16Lowering, bf16_dot_expander
from minimlc.lowering.llvm.dot_pieces import expand_ops
from minimlc.lowering.llvm.dot_product import DotU8S8Lowering, dot_product_expander
from minimlc.lowering.llvm.pack_bf16 import pack_bf16_expander
from minimlc.lowering.llvm.vector_patterns import VECTOR_PATTERNS
from minimlc.lowering.strategy.data_layout import byte_size, llvm_type
from minimlc.lowering.target import target_of

"""Unit attribute marking a function that gets a `<name>_packed` entry."""

ALLOC_ALIGNMENT = 64
"""Byte alignment of heap buffers: a cache line, and enough for any vector load."""

_PTR = llvm.LLVMPointerType()


@dataclass
class FuncLowering(RewritePattern):
    """Lowers `func.func` to `llvm.func`; an entry to `@<name>_packed` and its wrapper `@<name>`. `parameters`
    gets, for each argument a packed entry loads, the value that stands for it and its index."""

    parameters: dict[SSAValue, int]

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.FuncOp, rewriter: PatternRewriter) -> None:
        outputs = op.function_type.outputs.data
        if len(outputs) > 1:
            raise DiagnosticException(f"convert-to-llvm: @{op.sym_name.data} returns >1 value")
        inputs = [llvm_type(t) for t in op.function_type.inputs]
        output = llvm_type(outputs[0]) if outputs else llvm.LLVMVoidType()
        defined = bool(op.body.blocks)
        private = op.sym_visibility is not None and op.sym_visibility.data == "private"
        linkage = "internal" if defined and private else "external"
        entry = ENTRY_ATTR in op.attributes and defined
        reads: dict[Operation | None, list[BlockArgument]] = {}
        names: list[str | None] = []
        if entry:
            check_entry_signature(op)
            reads, names = packed_reads(op), [argument.name_hint for argument in op.args]
        body = rewriter.move_region_contents_to_new_regions(op.body)
        if entry:
            self.parameters.update(_read_arguments_from_array(body, reads))
        for block in body.blocks:
            self._convert_arguments(block, rewriter)
        arg_attrs: dict[str, Attribute | None] = {}
        if (kept := self._llvm_arg_attrs(op)) is not None:
            arg_attrs["arg_attrs"] = kept
        props: dict[str, Attribute | None] = {} if entry else dict(arg_attrs)
        if flags := llvm_function_flags(op.attributes):
            props["passthrough"] = ArrayAttr([StringAttr(flag) for flag in flags])
        extra = {k: v for k, v in op.attributes.items() if k.startswith("minimlc.")}
        function_type = llvm.LLVMFunctionType(inputs, output)
        if not entry:
            new_func = llvm.FuncOp(
                op.sym_name, function_type, llvm.LinkageAttr(linkage), body=body, other_props=props, extra_attrs=extra
            )
            rewriter.replace(op, [new_func], [])
            return
        packed = llvm.FuncOp(
            packed_name(op.sym_name.data),
            llvm.LLVMFunctionType([_PTR], output),
            llvm.LinkageAttr("external"),
            body=body,
            other_props=props,
            extra_attrs=extra,
        )
        unpacked = llvm.FuncOp(
            op.sym_name,
            function_type,
            llvm.LinkageAttr("external"),
            body=_unpacked_body(op, names),
            other_props=arg_attrs,
        )
        rewriter.replace(op, [packed, unpacked], [])

    @staticmethod
    def _convert_arguments(block: Block, rewriter: PatternRewriter) -> None:
        for arg in block.args:
            target = llvm_type(arg.type)
            if target == arg.type:
                continue
            old_type = arg.type
            new_arg = rewriter.replace_value_with_new_type(arg, target)
            cast = builtin.UnrealizedConversionCastOp.get([new_arg], [old_type])
            rewriter.insert(cast, InsertPoint.at_start(block))
            rewriter.replace_uses_with_if(new_arg, cast.results[0], lambda use, cast=cast: use.operation is not cast)

    @staticmethod
    def _llvm_arg_attrs(op: func.FuncOp) -> ArrayAttr[DictionaryAttr] | None:
        if op.arg_attrs is None:
            return None
        kept = [
            DictionaryAttr({k: v for k, v in attrs.data.items() if k.startswith("llvm.")}) for attrs in op.arg_attrs
        ]
        if not any(attrs.data for attrs in kept):
            return None
        return ArrayAttr(kept)


def check_entry_signature(op: func.FuncOp) -> None:
    """Raise unless entry `op` takes only memrefs or pointers and returns nothing (what `<name>_packed` can call)."""
    name = op.sym_name.data
    for type in op.function_type.inputs:
        if not isinstance(type, MemRefType | llvm.LLVMPointerType):
            raise DiagnosticException(f"convert-to-llvm: entry @{name} takes {type}, neither a memref nor a pointer")
    if op.function_type.outputs.data:
        raise DiagnosticException(f"convert-to-llvm: entry @{name} must not return values")


def packed_reads(entry: func.FuncOp) -> dict[Operation | None, list[BlockArgument]]:
    """Where `@<entry>_packed` loads the arguments its body uses from its array: in a straight-line entry (one
    block, no op with regions: a static model's), each just before the first op that takes it (key: that op), in
    operand order, so that a pointer is live only from its first use on; in any other entry all at the start (key
    None), in argument order. `emit_ir` follows the same plan.

        call @conv(%x, %w, %t)  ->  %x = load args[0]; %w = load args[2]; %t = load args[3]; call @conv(%x, %w, %t)
        call @relu(%t, %y)      ->  %y = load args[1]; call @relu(%t, %y)
    """
    entry_block = entry.body.blocks.first
    assert entry_block is not None
    if len(entry.body.blocks) > 1 or any(op.regions for op in entry_block.ops):
        return {None: [arg for arg in entry_block.args if arg.first_use is not None]}
    reads: dict[Operation | None, list[BlockArgument]] = {}
    read: set[SSAValue] = set()
    for op in entry_block.ops:
        for value in op.operands:
            if isinstance(value, BlockArgument) and value.block is entry_block and value not in read:
                read.add(value)
                reads.setdefault(op, []).append(value)
    return reads


def _read_arguments_from_array(
    body: builtin.Region, reads: dict[Operation | None, list[BlockArgument]]
) -> dict[SSAValue, int]:
    """Replace the arguments of an entry's `body` by one pointer `%args` and the loads of its `packed_reads`:
    `args[i]` for the i-th argument, bridged back to its type by a cast; returns each cast's value and i."""
    parameters: dict[SSAValue, int] = {}
    block = body.blocks.first
    assert block is not None
    start = block.first_op
    array = block.insert_arg(_PTR, len(block.args))
    array.name_hint = "args"
    for before, arguments in reads.items():
        for argument in arguments:
            slot = llvm.GEPOp(array, [argument.index], _PTR, inbounds=True)
            pointer = llvm.LoadOp(slot, _PTR)
            cast = builtin.UnrealizedConversionCastOp.get([pointer.dereferenced_value], [argument.type])
            anchor = before if before is not None else start
            assert anchor is not None
            block.insert_ops_before([slot, pointer, cast], anchor)
            argument.replace_all_uses_with(cast.results[0])
            parameters[cast.results[0]] = argument.index
    for argument in block.args[:-1]:
        block.erase_arg(argument)
    return parameters


def _unpacked_body(entry: func.FuncOp, names: list[str | None]) -> builtin.Region:
    """`@<name>(%b0, %b1, ...)` of an entry, its arguments named `names`: its pointers stored into a stack array,
    then `@<name>_packed(array)`."""
    block = Block(arg_types=[_PTR] * len(entry.function_type.inputs))
    for argument, name in zip(block.args, names, strict=True):
        argument.name_hint = name
    count = i64_constant(len(block.args))
    array = llvm.AllocaOp(count, _PTR, 8)
    block.add_ops([count, array])
    for index, argument in enumerate(block.args):
        slot = llvm.GEPOp(array.res, [index], _PTR, inbounds=True)
        block.add_ops([slot, llvm.StoreOp(argument, slot.result)])
    block.add_ops([llvm.CallOp(packed_name(entry.sym_name.data), array.res), llvm.ReturnOp()])
    return builtin.Region(block)


class CallLowering(RewritePattern):
    """Lowers `func.call` to `llvm.call`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.CallOp, rewriter: PatternRewriter) -> None:
        if len(op.res) > 1:
            raise DiagnosticException(f"convert-to-llvm: call to {op.callee} returns >1 value")
        args = [as_llvm(rewriter, arg) for arg in op.arguments]
        result = llvm_type(op.res[0].type) if op.res else None
        replace_lowered(rewriter, op, [llvm.CallOp(op.callee, *args, return_type=result)])


class ReturnLowering(RewritePattern):
    """Lowers `func.return` to `llvm.return`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: func.ReturnOp, rewriter: PatternRewriter) -> None:
        value = as_llvm(rewriter, op.arguments[0]) if op.arguments else None
        rewriter.replace(op, llvm.ReturnOp(value))


class BranchLowering(RewritePattern):
    """Lowers `cf.br` to `llvm.br`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.BranchOp, rewriter: PatternRewriter) -> None:
        args = [as_llvm(rewriter, arg) for arg in op.arguments]
        rewriter.replace(op, llvm.BrOp(op.successor, *args))


class CondBranchLowering(RewritePattern):
    """Lowers `cf.cond_br` to `llvm.cond_br`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: cf.ConditionalBranchOp, rewriter: PatternRewriter) -> None:
        then_args = [as_llvm(rewriter, arg) for arg in op.then_arguments]
        else_args = [as_llvm(rewriter, arg) for arg in op.else_arguments]
        new_op = llvm.CondBrOp(op.cond, op.then_block, then_args, op.else_block, else_args)
        rewriter.replace(op, new_op)


class LoadLowering(RewritePattern):
    """Lowers `memref.load` to `llvm.load` from the element's address."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.LoadOp, rewriter: PatternRewriter) -> None:
        pointer = element_pointer(rewriter, op, op.memref, tuple(op.indices))
        replace_lowered(rewriter, op, [llvm.LoadOp(pointer, llvm_type(op.res.type))])


class StoreLowering(RewritePattern):
    """Lowers `memref.store` to `llvm.store` to the element's address."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.StoreOp, rewriter: PatternRewriter) -> None:
        pointer = element_pointer(rewriter, op, op.memref, tuple(op.indices))
        rewriter.replace(op, llvm.StoreOp(as_llvm(rewriter, op.value), pointer))


class PrefetchLowering(RewritePattern):
    """Lowers `loop.prefetch` to `llvm.prefetch` of the element's address: a read, kept in every cache level
    (locality 3), of data."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.PrefetchOp, rewriter: PatternRewriter) -> None:
        pointer = element_pointer(rewriter, op, op.buffer, tuple(op.indices))
        flags = [llvm.ConstantOp(IntegerAttr(value, i32), i32) for value in (0, 3, 1)]
        call = llvm.CallIntrinsicOp("llvm.prefetch.p0", [pointer, *(flag.result for flag in flags)], [])
        rewriter.replace(op, [*flags, call], [])


class AllocLowering(RewritePattern):
    """Lowers `memref.alloc` to `aligned_alloc(64, size rounded up to 64)`; with run-time sizes, the byte size is
    computed at run time: `max(bytes, 1)` rounded up to the alignment (`aligned_alloc` needs a multiple of it)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocOp, rewriter: PatternRewriter) -> None:
        type = op.memref.type
        if not isinstance(type, MemRefType) or not isinstance(type.layout, NoneAttr):
            raise DiagnosticException("convert-to-llvm: 'memref.alloc' needs an identity-layout memref")
        alignment = max(ALLOC_ALIGNMENT, op.alignment.value.data if op.alignment else 0)
        alloc_type = llvm.LLVMFunctionType([i64, i64], _PTR)
        declare_function(rewriter, op, "aligned_alloc", alloc_type)
        align_op = rewriter.insert(i64_constant(alignment))
        if op.dynamic_sizes:
            size = _run_time_size(rewriter, op, alignment)
        else:
            size = type.element_count() * byte_size(type.element_type)
            size = rewriter.insert(i64_constant(max(alignment, -(-size // alignment) * alignment))).result
        call = llvm.CallOp("aligned_alloc", align_op, size, return_type=_PTR)
        replace_lowered(rewriter, op, [call])


def _run_time_size(rewriter: PatternRewriter, op: memref.AllocOp, alignment: int) -> SSAValue:
    """`max(bytes, 1)` rounded up to `alignment`, `bytes` the product of the static extents, the element size and
    the run-time sizes of `op`: inserted before `op`."""
    assert isinstance(op.memref.type, MemRefType)
    static = byte_size(op.memref.type.element_type)
    for dim in op.memref.type.get_shape():
        static *= max(dim, 1)
    size = rewriter.insert(i64_constant(static)).result
    for dynamic in op.dynamic_sizes:
        size = rewriter.insert(llvm.MulOp(size, as_llvm(rewriter, dynamic))).res
    one = rewriter.insert(i64_constant(1)).result
    size = rewriter.insert(llvm.CallIntrinsicOp("llvm.umax.i64", [size, one], [i64])).results[0]
    size = rewriter.insert(llvm.AddOp(size, rewriter.insert(i64_constant(alignment - 1)).result)).res
    return rewriter.insert(llvm.AndOp(size, rewriter.insert(i64_constant(-alignment)).result)).res


class SamePointerLowering(RewritePattern):
    """Lowers `memref.collapse_shape` (the one-dimensional view `loop-to-scf` gives a buffer with run-time extents)
    and `loop.view` (a buffer's bytes as another shape and element type) to the buffer's own pointer."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.CollapseShapeOp | loop.ViewOp, rewriter: PatternRewriter) -> None:
        source = op.src if isinstance(op, memref.CollapseShapeOp) else op.source
        replace_lowered(rewriter, op, [], [as_llvm(rewriter, source)])


class DeallocLowering(RewritePattern):
    """Lowers `memref.dealloc` to `free`."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.DeallocOp, rewriter: PatternRewriter) -> None:
        declare_function(rewriter, op, "free", llvm.LLVMFunctionType([_PTR], llvm.LLVMVoidType()))
        rewriter.replace(op, llvm.CallOp("free", as_llvm(rewriter, op.memref)))


class AllocaLowering(RewritePattern):
    """Lowers `memref.alloca` to an `llvm.alloca` hoisted into the function's entry block."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.AllocaOp, rewriter: PatternRewriter) -> None:
        type = static_memref(op, op.memref.type)
        function = op.parent_op()
        while function is not None and not isinstance(function, func.FuncOp | llvm.FuncOp):
            function = function.parent_op()
        if function is None:
            raise DiagnosticException("convert-to-llvm: 'memref.alloca' outside a function")
        element = llvm_type(type.element_type)
        alignment = op.alignment.value.data if op.alignment else byte_size(element)
        count = i64_constant(type.element_count())
        alloca = llvm.AllocaOp(count, element, alignment)
        entry = function.regions[0].blocks.first
        assert entry is not None
        rewriter.insert([count, alloca], InsertPoint.at_start(entry))
        replace_lowered(rewriter, op, [], [alloca.res])


class ViewLowering(RewritePattern):
    """Lowers `memref.view` of a byte arena to the address `arena + byte_shift` (a byte `getelementptr`); its
    sizes, static or run-time, only type the view (`memref.view` verifies an identity layout)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: memref.ViewOp, rewriter: PatternRewriter) -> None:
        arena = as_llvm(rewriter, op.source)
        shift = as_llvm(rewriter, op.byte_shift)
        gep = llvm.GEPOp.from_mixed_indices(arena, [shift], IntegerType(8), inbounds=True)
        replace_lowered(rewriter, op, [gep])


@dataclass
class CallExternLowering(RewritePattern):
    """Lowers `loop.call_extern "f" via %fn status %st (%a, %b)` to `%fn(args)`, `args` a stack array of the buffers'
    addresses (the external-function ABI, `int32_t f(void **buffers)`), then records a non-zero result in the run's
    status word if it is still clear: `st[0]` = the function pointer's parameter index + 1, `st[1]` = the result."""

    parameters: dict[SSAValue, int]
    """A packed entry's loaded arguments and their indexes (`FuncLowering`)."""

    @op_type_rewrite_pattern
    def match_and_rewrite(self, op: loop.CallExternOp, rewriter: PatternRewriter) -> None:
        function = op.function
        parameter = function.index if isinstance(function, BlockArgument) else self.parameters.get(function)
        if parameter is None or op.status is None:
            raise DiagnosticException(
                f"convert-to-llvm: call_extern '{op.callee.data}' has no function pointer parameter (run loop-to-scf)"
            )
        i32 = IntegerType(32)
        count = i64_constant(len(op.buffers))
        array = llvm.AllocaOp(count, _PTR, 8)
        ops: list[Operation] = [count, array]
        for index, buffer in enumerate(op.buffers):
            slot = llvm.GEPOp(array.res, [index], _PTR, inbounds=True)
            ops += [slot, llvm.StoreOp(as_llvm(rewriter, buffer), slot.result)]
        result = llvm_ext.CallIndirectOp(op.function, [array.res], i32)
        zero = llvm.ConstantOp(IntegerAttr(0, i32), i32)
        site = llvm.ConstantOp(IntegerAttr(parameter + 1, i32), i32)
        first = llvm.LoadOp(op.status, i32)
        clear = llvm.ICmpOp(first.dereferenced_value, zero.result, IntegerAttr(0, i64))  # eq
        failed = llvm.ICmpOp(result.result, zero.result, IntegerAttr(1, i64))  # ne
        record = llvm.AndOp(clear.res, failed.res)
        second_slot = llvm.GEPOp(op.status, [1], i32, inbounds=True)
        second = llvm.LoadOp(second_slot.result, i32)
        new_first = llvm.SelectOp(record.res, site.result, first.dereferenced_value)
        new_second = llvm.SelectOp(record.res, result.result, second.dereferenced_value)
        ops += [result, zero, site, first, clear, failed, record, second_slot, second, new_first, new_second]
        ops += [llvm.StoreOp(new_first.res, op.status), llvm.StoreOp(new_second.res, second_slot.result)]
        rewriter.replace(op, ops, [])


@dataclass(frozen=True)
class ConvertToLlvmPass(ModulePass):
    """Lowers func/cf/memref/arith/math to the llvm dialect (see the module docstring)."""

    name = "convert-to-llvm"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        expand_ops(
            op,
            {
                llvm_ext.DotU8S8Op: dot_product_expander(target),
                llvm_ext.DotBF16Op: bf16_dot_expander(target),
                llvm_ext.PackBF16Op: pack_bf16_expander(target),
            },
        )
        parameters: dict[SSAValue, int] = {}
        patterns: list[RewritePattern] = [
            FuncLowering(parameters),
            CallLowering(),
            ReturnLowering(),
            BranchLowering(),
            CondBranchLowering(),
            LoadLowering(),
            StoreLowering(),
            PrefetchLowering(),
            AllocLowering(),
            DeallocLowering(),
            AllocaLowering(),
            ViewLowering(),
            SamePointerLowering(),
            CallExternLowering(parameters),
            *ARITH_MATH_PATTERNS,
            *VECTOR_PATTERNS,
            DotU8S8Lowering(target),
            DotBF16Lowering(target),
        ]
        # One walk: every pattern builds only `llvm` ops, which no pattern matches.
        PatternRewriteWalker(OpClassPatternApplier(patterns), apply_recursively=False).rewrite_module(op)
        _check_lowered(op)
        resolve_casts(op)
        for cast in op.walk():
            if isinstance(cast, builtin.UnrealizedConversionCastOp):
                types = f"{cast.inputs.types} to {cast.result_types}"
                raise PassFailedException(f"convert-to-llvm: unresolved cast from {types}")


def _check_lowered(module: ModuleOp) -> None:
    for op in module.walk():
        if isinstance(op, ModuleOp | builtin.UnrealizedConversionCastOp):
            continue
        if not op.name.startswith(("llvm.", "llvmx.")):
            raise PassFailedException(f"convert-to-llvm: cannot lower '{op.name}'")
