"""`emit_llvm_ir`'s handlers of the `llvm` and `llvmx` ops that reach it as they are: those earlier passes create
(`loop-outline-parallel`'s task structs and indirect calls), written as `convert-to-llvm` and translation write them:

    %p = llvm.getelementptr inbounds %b[%one, 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(i64, f32, f32)>
    // becomes
    %.4 = getelementptr inbounds {i64, float, float}, ptr %.2, i64 1, i32 2
"""

from __future__ import annotations

from xdsl.dialects import llvm
from xdsl.dialects.builtin import VectorType
from xdsl.ir import Operation
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import llvm_ext
from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Handler, global_name, undef_text


def _llvm_undef(fe: FunctionEmitter, op: Operation) -> None:
    result = op.results[0]
    type = fe.module.type(result.type)
    element = fe.module.type(result.type.element_type) if isinstance(result.type, VectorType) else None
    fe.values[result] = (type, undef_text(type, element))


def _llvm_zero(fe: FunctionEmitter, op: Operation) -> None:
    type = fe.module.type(op.results[0].type)
    null = "0.0" if type in ("float", "double", "half") else "null" if is_pointer(type) else "zeroinitializer"
    fe.values[op.results[0]] = (type, "0" if type.startswith("i") else null)


def _llvm_addressof(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.AddressOfOp)
    name = op.global_name.root_reference.data
    signature = fe.module.signatures.get(name)
    if signature is None:
        raise DiagnosticException(f"emit-llvm-ir: 'llvm.mlir.addressof' of @{name}, which is no function")
    fe.values[op.result] = (f"{signature[0]} ({', '.join(signature[1])})*", global_name(name))


def _llvm_alloca(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.AllocaOp)
    element = fe.module.type(op.elem_type)
    align = f", align {op.alignment.value.data}" if op.alignment else ""
    result = "ptr" if element == "ptr" else f"{element}*"
    fe.emit(f"alloca {element}, {fe.typed(op.size)}{align}", op.res, result)


def _llvm_load(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.LoadOp)
    type = fe.module.type(op.dereferenced_value.type)
    align = f", align {op.alignment.value.data}" if op.alignment else ""
    fe.emit(f"load {type}, {fe.typed(op.ptr)}{align}", op.dereferenced_value, type)


def _llvm_gep(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.GEPOp)
    dynamic = iter(op.ssa_indices)
    indices = [
        fe.typed(next(dynamic)) if index == llvm.GEP_USE_SSA_VAL else f"i32 {index}"
        for index in op.rawConstantIndices.iter_values()
    ]
    base = fe.values[op.ptr]
    inbounds = " inbounds" if op.inbounds is not None else ""
    element = fe.module.type(op.elem_type)
    fe.emit(f"getelementptr{inbounds} {element}, {base[0]} {base[1]}, {', '.join(indices)}", op.result, base[0])


def _llvm_insertvalue(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.InsertValueOp)
    container = fe.values[op.container]
    position = ", ".join(str(i) for i in op.position.iter_values())
    text = f"insertvalue {container[0]} {container[1]}, {fe.typed(op.value)}, {position}"
    fe.emit(text, op.res, container[0])


def _llvm_extractvalue(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.ExtractValueOp)
    position = ", ".join(str(i) for i in op.position.iter_values())
    type = fe.module.type(op.res.type)
    fe.emit(f"extractvalue {fe.typed(op.container)}, {position}", op.res, type)


def _call_indirect(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm_ext.CallIndirectOp)
    args = [fe.values[arg] for arg in op.args]
    result = fe.module.type(op.result.type)
    callee = fe.values[op.callee]
    pointer = f"{result} ({', '.join(t for t, _ in args)})*"
    cast = fe.emit(f"bitcast {callee[0]} {callee[1]} to {pointer}", None, pointer)
    text = f"call {result} {cast}({', '.join(f'{t} {r}' for t, r in args)})"
    if result == "void":
        fe.emit(text)
    else:
        fe.emit(text, op.result, result)


def is_pointer(type: str) -> bool:
    """Whether an LLVM type text is a pointer, opaque or typed."""
    return type == "ptr" or type.endswith("*")


LLVM_HANDLERS: dict[type[Operation], Handler] = {
    llvm.UndefOp: _llvm_undef,
    llvm.ZeroOp: _llvm_zero,
    llvm.AddressOfOp: _llvm_addressof,
    llvm.AllocaOp: _llvm_alloca,
    llvm.LoadOp: _llvm_load,
    llvm.GEPOp: _llvm_gep,
    llvm.InsertValueOp: _llvm_insertvalue,
    llvm.ExtractValueOp: _llvm_extractvalue,
    llvm_ext.CallIndirectOp: _call_indirect,
}
"""Handlers of the `llvm` and `llvmx` ops that reach `convert-to-llvm` as they are."""
