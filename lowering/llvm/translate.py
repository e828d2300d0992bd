"""The `llvm` dialect (plus `llvmx`) -> LLVM IR text, through `llvmlite.ir`.

Reuses xDSL's `convert_op` for the instructions it translates faithfully, and owns what xDSL's
`convert_module` drops or lacks: function linkage and `passthrough` attributes (`minsize optsize`),
the target's `vscale_range(N,N)` on every defined function (fixed-length SVE: `Target.sve_vscale`),
parameter attributes (`noalias`, ...), fast-math flags on `llvm.call_intrinsic` and `llvm.fcmp`,
and the `llvmx` casts. Expects a module of `llvm.func`s, as `convert-to-llvm` produces; the
triple is the module's `llvm.target_triple` or its target's (`minimlc.target`), with the target's data layout.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import IO

from llvmlite import ir
from llvmlite.ir import instructions
from xdsl.backend.llvm.convert_op import convert_op
from xdsl.backend.llvm.convert_type import convert_type
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import BFloat16Type, IntegerAttr, ModuleOp, StringAttr, VectorType
from xdsl.ir import Attribute, Block, Operation, SSAValue
from xdsl.utils.exceptions import LLVMTranslationException
from xdsl.utils.target import Target

from minimlc.dialects import llvm_ext
from minimlc.lowering.target import target_of

PARAM_FLAGS = {
    # `llvm.*` argument attributes -> LLVM parameter attributes (also `emit_ir.py`)
    "llvm.noalias": "noalias",
    "llvm.nocapture": "captures(none)",
    "llvm.nofree": "nofree",
    "llvm.nonnull": "nonnull",
    "llvm.noundef": "noundef",
}

_PARAM_INTS = {
    "llvm.align": "align",
    "llvm.dereferenceable": "dereferenceable",
}

_LLVMX_CASTS: dict[type[Operation], Callable[[ir.IRBuilder, ir.Value, ir.Type], ir.Value]] = {
    llvm_ext.FPToSIOp: ir.IRBuilder.fptosi,
    llvm_ext.FPToUIOp: ir.IRBuilder.fptoui,
    llvm_ext.UIToFPOp: ir.IRBuilder.uitofp,
}

_ValueMap = dict[SSAValue, ir.Value]

_QUOTED_NAME = re.compile(r'([%@])"([-a-zA-Z$._][-a-zA-Z$._0-9]*)"')


def translate_to_llvm_ir(module: ModuleOp) -> str:
    """Translate a module of `llvm.func`s to LLVM IR text.

    Raises `LLVMTranslationException` naming the first op it cannot translate.
    """
    # llvmlite quotes every name; LLVM needs quotes only outside its identifier syntax.
    return _QUOTED_NAME.sub(r"\1\2", str(to_llvmlite(module)))


def to_llvmlite(module: ModuleOp) -> ir.Module:
    """Translate a module of `llvm.func`s to an `llvmlite.ir.Module`."""
    llvm_module = ir.Module()
    triple = module.attributes.get("llvm.target_triple")
    target = target_of(module)
    llvm_module.triple = triple.data if isinstance(triple, StringAttr) else target.triple
    llvm_module.data_layout = target.data_layout
    functions: list[llvm.FuncOp] = []
    for op in module.ops:
        if not isinstance(op, llvm.FuncOp):
            raise LLVMTranslationException(f"cannot translate '{op.name}' at module level")
        functions.append(op)
    for function in functions:
        _declare_function(function, llvm_module)
        if function.body.blocks and target.sve_vscale:
            _add_vscale_range(llvm_module.get_global(function.sym_name.data), target.sve_vscale)
    for function in functions:
        if function.body.blocks:
            _define_function(function, llvm_module)
    return llvm_module


def _declare_function(op: llvm.FuncOp, llvm_module: ir.Module) -> None:
    function_type = convert_type(op.function_type)
    assert isinstance(function_type, ir.FunctionType)
    function = ir.Function(llvm_module, function_type, name=op.sym_name.data)
    if op.linkage.linkage.data != "external":
        function.linkage = op.linkage.linkage.data
    for attribute in op.passthrough.data if op.passthrough is not None else ():
        if not isinstance(attribute, StringAttr):
            raise LLVMTranslationException(f"@{op.sym_name.data}: passthrough attribute {attribute} is not a string")
        function.attributes.add(attribute.data)
    if op.arg_attrs is None:
        return
    for arg, attrs in zip(function.args, op.arg_attrs, strict=True):
        for name, value in attrs.data.items():
            if name in PARAM_FLAGS:
                arg.add_attribute(PARAM_FLAGS[name])
            elif name in _PARAM_INTS and isinstance(value, IntegerAttr):
                setattr(arg.attributes, _PARAM_INTS[name], value.value.data)


class _VscaleRangeAttributes(ir.FunctionAttributes):
    """llvmlite's function attributes and `vscale_range(N,N)` last (which llvmlite does not know), as `emit_ir.py`
    writes them: `define void @f(ptr %0) minsize optsize vscale_range(2,2)`."""

    def __init__(self, attributes: ir.FunctionAttributes, vscale: int) -> None:
        super().__init__(attributes)
        self.vscale = vscale

    def __bool__(self) -> bool:  # llvmlite prints a function's attributes only where the set is not empty
        return True

    def _to_list(self, ret_type: ir.Type) -> list[str]:
        return [*super()._to_list(ret_type), f"vscale_range({self.vscale},{self.vscale})"]


def _add_vscale_range(function: ir.Function, vscale: int) -> None:
    function.attributes = _VscaleRangeAttributes(function.attributes, vscale)


def _define_function(op: llvm.FuncOp, llvm_module: ir.Module) -> None:
    function = llvm_module.get_global(op.sym_name.data)
    val_map: _ValueMap = {}
    block_map: dict[Block, ir.Block] = {}
    for block in op.body.blocks:
        block_map[block] = function.append_basic_block(name=block.name_hint or "")
    entry = op.body.blocks.first
    assert entry is not None
    val_map.update(zip(entry.args, function.args))
    for block in op.body.blocks:
        if block is entry:
            continue
        builder = ir.IRBuilder(block_map[block])
        for arg in block.args:
            val_map[arg] = builder.phi(convert_type(arg.type), name=arg.name_hint or "")
    for block in op.body.blocks:
        builder = ir.IRBuilder(block_map[block])
        for inner in block.ops:
            _convert_op(inner, builder, val_map, block_map)


def _convert_op(op: Operation, builder: ir.IRBuilder, val_map: _ValueMap, block_map: dict[Block, ir.Block]) -> None:
    match op:
        case llvm.CallIntrinsicOp():
            _convert_call_intrinsic(op, builder, val_map)
        case llvm.FCmpOp() | llvm_ext.FCmpOp():
            predicate = llvm.FCmpPredicateFlag.from_int(op.predicate.value.data).value
            instr = instructions.FCMPInstr(
                builder.block,
                predicate.lstrip("_"),
                val_map[op.lhs],
                val_map[op.rhs],
                flags=_fastmath_flags(op) if isinstance(op, llvm.FCmpOp) else (),
            )
            builder._insert(instr)  # pyright: ignore[reportPrivateUsage]
            val_map[op.results[0]] = instr
        case llvm.GEPOp():
            # xDSL casts the base to a typed pointer, and llvmlite then types a multi-index result as that same
            # pointer (`[8 x float]*` for `%m[%i, %j]`): index the opaque base with the source element type instead.
            constants = iter(op.rawConstantIndices.iter_values())
            dynamic = iter(op.ssa_indices)
            indices = [
                val_map[next(dynamic)] if index == llvm.GEP_USE_SSA_VAL else ir.Constant(ir.IntType(32), index)
                for index in constants
            ]
            val_map[op.result] = builder.gep(
                val_map[op.ptr], indices, inbounds=op.inbounds is not None, source_etype=convert_type(op.elem_type)
            )
        case llvm.StoreOp() if isinstance(op.value.type, VectorType):
            # llvmlite checks the value against the pointer's element type; a vector store goes through a cast.
            value = val_map[op.value]
            pointer = builder.bitcast(val_map[op.ptr], value.type.as_pointer())
            store = builder.store(value, pointer)
            if op.alignment:
                store.align = op.alignment.value.data
        case llvm_ext.CallIndirectOp():
            args = [val_map[arg] for arg in op.args]
            function_type = ir.FunctionType(convert_type(op.result.type), [arg.type for arg in args])
            # llvmlite types a callee by its pointee: a (no-op) cast of the opaque pointer to a typed one carries it.
            callee = instructions.CastInstr(builder.block, "bitcast", val_map[op.callee], ir.PointerType(function_type))
            builder._insert(callee)  # pyright: ignore[reportPrivateUsage]
            val_map[op.result] = builder.call(callee, args)
        case llvm.BitcastOp() if _has_bfloat16(op.result.type):
            val_map[op.result] = builder.bitcast(val_map[op.arg], _bfloat16_type(op.result.type))
        case llvm.FPTruncOp() if _has_bfloat16(op.result.type):
            val_map[op.result] = builder.fptrunc(val_map[op.arg], _bfloat16_type(op.result.type))
        case llvm_ext.SelectOp():
            val_map[op.result] = builder.select(val_map[op.cond], val_map[op.lhs], val_map[op.rhs])
        case _ if (cast := _LLVMX_CASTS.get(type(op))) is not None:
            val_map[op.results[0]] = cast(builder, val_map[op.operands[0]], convert_type(op.results[0].type))
        case _:
            try:
                convert_op(op, builder, val_map, block_map)
            except NotImplementedError as error:
                raise LLVMTranslationException(f"cannot translate '{op.name}': {error}") from error
            if op.results and isinstance(instr := val_map.get(op.results[0]), instructions.Instruction):
                # xDSL lists fast-math flags in set order, which changes with Python's hash seed: sort them so
                # the same module always prints the same LLVM IR.
                instr.flags = sorted(instr.flags)


class _BFloat16(ir.Type):
    """LLVM's `bfloat`, which llvmlite.ir lacks (`llvm.dot_bf16`'s operands are vectors of it, `llvmx.pack_bf16`'s
    conversion gives it)."""

    def _to_string(self) -> str:
        return "bfloat"

    def __eq__(self, other: object) -> bool:
        return isinstance(other, _BFloat16)

    def __hash__(self) -> int:
        return hash("bfloat")


def _has_bfloat16(type: Attribute) -> bool:
    """Whether `type` is bfloat16 or a vector of it."""
    element = type.element_type if isinstance(type, VectorType) else type
    return isinstance(element, BFloat16Type)


def _bfloat16_type(type: Attribute) -> ir.Type:
    """llvmlite's type for bfloat16 or a vector of it."""
    if not isinstance(type, VectorType):
        return _BFloat16()
    (lanes,) = type.get_shape()
    return ir.VectorType(_BFloat16(), lanes)


def _convert_call_intrinsic(op: llvm.CallIntrinsicOp, builder: ir.IRBuilder, val_map: _ValueMap) -> None:
    args = [val_map[arg] for arg in op.args]
    result = convert_type(op.ress.type) if op.ress is not None else ir.VoidType()
    name = op.intrin.data
    intrinsic = builder.module.globals.get(name)
    if intrinsic is None:
        function_type = ir.FunctionType(result, [arg.type for arg in args])
        intrinsic = ir.Function(builder.module, function_type, name)
    call = builder.call(intrinsic, args, fastmath=_fastmath_flags(op))
    if op.ress is not None:
        val_map[op.ress] = call


def _fastmath_flags(op: llvm.FCmpOp | llvm.CallIntrinsicOp) -> list[str]:
    """The op's fast-math flags, from its property or, as xDSL parses `llvm.fcmp`, attribute."""
    flags = set(op.fastmathFlags.data)
    if isinstance(attribute := op.attributes.get("fastmathFlags"), llvm.FastMathAttr):
        flags |= attribute.data
    return sorted(flag.value for flag in flags)


@dataclass(frozen=True)
class LlvmIrTarget(Target):
    """`-t llvm`: prints the module as LLVM IR."""

    name = "llvm"

    def emit(self, ctx: Context, module: ModuleOp, output: IO[str]) -> None:
        output.write(translate_to_llvm_ir(module))
