"""The op handlers of `emit_ir.emit_llvm_ir`: each appends the LLVM instructions that `convert-to-llvm` and the
translation give an op, and records the (type, reference) text of its results.

A value is known by its LLVM type and reference text (`("i64", "%.7")`, `("float", "0x3ff0000000000000")`). Pointers
are typed as llvmlite types them: an `alloca` of `float` is a `float*`, and whatever the translation derives from it
(a `getelementptr`, a `select`) keeps that type; every other pointer is an opaque `ptr`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

from xdsl.dialects import arith, builtin, cf, func, llvm, math, memref, vector
from xdsl.dialects.builtin import MemRefType, NoneAttr, VectorType
from xdsl.ir import BlockArgument, Operation, SSAValue
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import llvm_ext, loop
from minimlc.lowering.llvm import arith_patterns as ap
from minimlc.lowering.llvm.conversion import addressable_memref, llvm_fastmath, static_memref, type_suffix
from minimlc.lowering.llvm.convert_to_llvm import ALLOC_ALIGNMENT
from minimlc.lowering.llvm.dot_bf16 import emit_bf16_dot
from minimlc.lowering.llvm.dot_pieces import emit_expanded, emit_joined, emit_split_pieces, shuffle_mask
from minimlc.lowering.llvm.dot_product import dot_intrinsic, dot_product_expansion, emit_dot_piece, intrinsic_lanes
from minimlc.lowering.llvm.emit_ir import FunctionEmitter, Handler, Value, constant_text, global_name, undef_text
from minimlc.lowering.llvm.emit_llvm_dialect import LLVM_HANDLERS, is_pointer
from minimlc.lowering.llvm.pack_bf16 import converts_bf16, pack_bf16_expansion
from minimlc.lowering.strategy.data_layout import byte_size, llvm_type
from minimlc.lowering.strategy.vectorization import LIBM_FUNCTIONS


def _fastmath(op: Operation) -> str:
    """The op's fast-math flags (`fastmath`, or an `llvm` op's `fastmathFlags`) as the translation prints them:
    sorted, each after a space."""
    flags = op.properties.get("fastmath") or op.properties.get("fastmathFlags")
    if not isinstance(flags, builtin.Attribute) or not getattr(flags, "data", None):
        return ""
    return _FASTMATH.get(flags) or _FASTMATH.setdefault(
        flags,
        "".join(" " + f for f in sorted(flag.value for flag in llvm_fastmath(flags).data)),  # type: ignore
    )


_FASTMATH: dict[builtin.Attribute, str] = {}
_OVERFLOW: dict[builtin.Attribute, str] = {}


def _overflow(op: Operation) -> str:
    flags = getattr(op, "overflow_flags", None)
    if flags is None or not flags.data:
        return ""
    if flags not in _OVERFLOW:
        attr = llvm.OverflowAttr(llvm.OverflowFlag(f) for f in flags.data)
        listed = sorted(f.value for f in llvm.OverflowAttr.from_int(attr.to_int()).data)
        _OVERFLOW[flags] = "".join(" " + f for f in listed)
    return _OVERFLOW[flags]


# arith


def _constant(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, arith.ConstantOp | llvm.ConstantOp)
    result = op.results[0]
    type = fe.module.type(result.type)
    element = fe.module.type(result.type.element_type) if isinstance(result.type, VectorType) else None
    fe.values[result] = (type, constant_text(op.value, type, element))


def _binary(opcode: str, flags: Callable[[Operation], str] | None) -> Handler:
    def handler(fe: FunctionEmitter, op: Operation) -> None:
        lhs, rhs = op.operands
        type, left = fe.values[lhs]
        fe.emit(f"{opcode}{flags(op) if flags else ''} {type} {left}, {fe.values[rhs][1]}", op.results[0], type)

    return handler


def _negf(fe: FunctionEmitter, op: Operation) -> None:
    type, ref = fe.values[op.operands[0]]
    fe.emit(f"fneg{_fastmath(op)} {type} {ref}", op.results[0], type)


def _cast(opcode: str) -> Handler:
    def handler(fe: FunctionEmitter, op: Operation) -> None:
        target = fe.module.type(op.results[0].type)
        fe.emit(f"{opcode} {fe.typed(op.operands[0])} to {target}", op.results[0], target)

    return handler


def _index_cast(fe: FunctionEmitter, op: Operation) -> None:
    source = fe.values[op.operands[0]]
    target = fe.module.type(op.results[0].type)
    width, target_width = int(source[0][1:]), int(target[1:])
    if width < target_width:
        fe.emit(f"sext {source[0]} {source[1]} to {target}", op.results[0], target)
    elif width > target_width:
        fe.emit(f"trunc {source[0]} {source[1]} to {target}", op.results[0], target)
    else:
        fe.values[op.results[0]] = source


_ICMP = [llvm.ICmpPredicateFlag.from_int(i).value for i in range(10)]
_FCMP = [llvm.FCmpPredicateFlag.from_int(i).value.lstrip("_") for i in range(16)]


def _compare(opcode: str, predicates: list[str]) -> Handler:
    def handler(fe: FunctionEmitter, op: Operation) -> None:
        assert isinstance(op, arith.CmpiOp | arith.CmpfOp | llvm_ext.FCmpOp)
        type, lhs = fe.values[op.lhs]
        flags = _fastmath(op) if isinstance(op, arith.CmpfOp) else ""
        result = "i1" if not type.startswith("<") else f"<{type[1:].split(' ', 1)[0]} x i1>"
        text = f"{opcode}{flags} {predicates[op.predicate.value.data]} {type} {lhs}, {fe.values[op.rhs][1]}"
        fe.emit(text, op.results[0], result)

    return handler


def _select(fe: FunctionEmitter, op: Operation) -> None:
    cond, lhs, rhs = (fe.values[v] for v in op.operands)
    fe.emit(f"select  {cond[0]} {cond[1]}, {lhs[0]} {lhs[1]}, {rhs[0]} {rhs[1]}", op.results[0], lhs[0])


def _call_intrinsic(fe: FunctionEmitter, name: str, args: list[Value], result: str, flags: str = "") -> str:
    fe.module.intrinsic(name, result, [a[0] for a in args])
    text = f"call{flags} {result} {global_name(name)}({', '.join(f'{t} {r}' for t, r in args)})"
    return fe.emit(text) if result == "void" else fe.emit(text, None, result)


def _intrinsic(base: str) -> Handler:
    def handler(fe: FunctionEmitter, op: Operation) -> None:
        args = [fe.values[v] for v in op.operands]
        type = args[0][0]
        name = f"{base}.{type_suffix(llvm_type(op.operands[0].type))}"
        fe.values[op.results[0]] = (type, _call_intrinsic(fe, name, args, type, _fastmath(op)))

    return handler


def _libm(base: str) -> Handler:
    def handler(fe: FunctionEmitter, op: Operation) -> None:
        (arg,) = op.operands
        type, ref = fe.values[arg]
        if type not in ("float", "double"):
            raise DiagnosticException(f"convert-to-llvm: '{op.name}' on {arg.type} unsupported")
        name = f"{base}f" if type == "float" else base
        fe.module.declare(name, type, [type])
        fe.emit(f"call{_fastmath(op)} ccc {type} {global_name(name)}({type} {ref})", op.results[0], type)

    return handler


def _rsqrt(fe: FunctionEmitter, op: Operation) -> None:
    type, ref = fe.values[op.operands[0]]
    if type not in ("float", "double"):
        raise DiagnosticException(f"emit-llvm-ir: 'math.rsqrt' on {type} unsupported")
    flags = _fastmath(op)
    sqrt = _call_intrinsic(fe, f"llvm.sqrt.{type_suffix(op.operands[0].type)}", [(type, ref)], type, flags)
    one = constant_text(builtin.FloatAttr(1.0, op.operands[0].type), type, None)  # type: ignore[arg-type]
    fe.emit(f"fdiv{flags} {type} {one}, {sqrt}", op.results[0], type)


def _rounding_division(fe: FunctionEmitter, op: Operation) -> None:
    (type, lhs), (_, rhs) = fe.values[op.operands[0]], fe.values[op.operands[1]]
    if not type.startswith("i"):
        raise DiagnosticException(f"emit-llvm-ir: '{op.name}' on {type} unsupported")
    signed = not isinstance(op, arith.CeilDivUIOp)
    div, rem = ("sdiv", "srem") if signed else ("udiv", "urem")
    quotient = fe.emit(f"{div} {type} {lhs}, {rhs}", None, type)
    remainder = fe.emit(f"{rem} {type} {lhs}, {rhs}", None, type)
    adjust = fe.emit(f"icmp ne {type} {remainder}, 0", None, "i1")
    if signed:
        remainder_negative = fe.emit(f"icmp slt {type} {remainder}, 0", None, "i1")
        divisor_negative = fe.emit(f"icmp slt {type} {rhs}, 0", None, "i1")
        predicate = "ne" if isinstance(op, arith.FloorDivSIOp) else "eq"
        signs = fe.emit(f"icmp {predicate} i1 {remainder_negative}, {divisor_negative}", None, "i1")
        adjust = fe.emit(f"and i1 {adjust}, {signs}", None, "i1")
    step = "sub" if isinstance(op, arith.FloorDivSIOp) else "add"
    adjusted = fe.emit(f"{step} {type} {quotient}, 1", None, type)
    fe.emit(f"select  i1 {adjust}, {type} {adjusted}, {type} {quotient}", op.results[0], type)


# memory


def _element_pointer(fe: FunctionEmitter, op: Operation, buffer: SSAValue, indices: Sequence[SSAValue]) -> Value:
    """The address of `buffer[indices]` (`conversion.element_pointer`)."""
    base = fe.values[buffer]
    pointee = fe.module.pointees.get(buffer)
    if pointee is None:
        type = addressable_memref(op, buffer.type)
        pointee = fe.module.type(type.element_type)
        for size in reversed(type.get_shape()[1:]):
            pointee = f"[{size} x {pointee}]"
        fe.module.pointees[buffer] = pointee
    if not indices:
        return base
    subscripts = ", ".join(fe.typed(index) for index in indices)
    return base[0], fe.emit(f"getelementptr inbounds {pointee}, {base[0]} {base[1]}, {subscripts}", None, base[0])


def _store(fe: FunctionEmitter, value: Value, pointer: Value, alignment: int | None) -> None:
    align = f", align {alignment}" if alignment else ""
    if value[0].startswith("<"):  # the translation bitcasts a typed pointer to the vector's
        if pointer[0].endswith("*") and pointer[0][:-1] != value[0]:
            cast = fe.emit(f"bitcast {pointer[0]} {pointer[1]} to {value[0]}*", None, "ptr")
            pointer = (f"{value[0]}*", cast)
    elif (
        pointer[0].endswith("*")
        and pointer[0][:-1] != value[0]
        and not (is_pointer(pointer[0][:-1]) and is_pointer(value[0]))
    ):
        raise DiagnosticException(f"emit-llvm-ir: cannot store {value[0]} to {pointer[0]}: mismatching types")
    fe.emit(f"store {value[0]} {value[1]}, {pointer[0]} {pointer[1]}{align}")


def _load(fe: FunctionEmitter, op: Operation) -> None:
    operands, result = op.operands, op.results[0]
    pointer = _element_pointer(fe, op, operands[0], operands[1:])
    type = fe.module.type(result.type)
    align = f", align {byte_size(result.type.element_type)}" if isinstance(result.type, VectorType) else ""
    fe.emit(f"load {type}, {pointer[0]} {pointer[1]}{align}", result, type)


def _store_op(fe: FunctionEmitter, op: Operation) -> None:
    value, buffer, *indices = op.operands
    pointer = _element_pointer(fe, op, buffer, indices)
    align = byte_size(value.type.element_type) if isinstance(value.type, VectorType) else None
    _store(fe, fe.values[value], pointer, align)


def _prefetch(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, loop.PrefetchOp)
    pointer = _element_pointer(fe, op, op.buffer, tuple(op.indices))
    _call_intrinsic(fe, "llvm.prefetch.p0", [pointer, ("i32", "0"), ("i32", "3"), ("i32", "1")], "void")


def _alloc(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, memref.AllocOp)
    type = op.memref.type
    if not isinstance(type, MemRefType) or not isinstance(type.layout, NoneAttr):
        raise DiagnosticException("convert-to-llvm: 'memref.alloc' needs an identity-layout memref")
    alignment = max(ALLOC_ALIGNMENT, op.alignment.value.data if op.alignment else 0)
    fe.module.declare("aligned_alloc", "ptr", ["i64", "i64"])
    if op.dynamic_sizes:
        static = byte_size(type.element_type)
        for dim in type.get_shape():
            static *= max(dim, 1)
        size = str(static)
        for dynamic in op.dynamic_sizes:
            size = fe.emit(f"mul i64 {size}, {fe.values[dynamic][1]}", None, "i64")
        size = _call_intrinsic(fe, "llvm.umax.i64", [("i64", size), ("i64", "1")], "i64")
        size = fe.emit(f"add i64 {size}, {alignment - 1}", None, "i64")
        size = fe.emit(f"and i64 {size}, {-alignment}", None, "i64")
    else:
        total = type.element_count() * byte_size(type.element_type)
        size = str(max(alignment, -(-total // alignment) * alignment))
    fe.emit(f"call ccc ptr @aligned_alloc(i64 {alignment}, i64 {size})", op.memref, "ptr")


def _dealloc(fe: FunctionEmitter, op: Operation) -> None:
    fe.module.declare("free", "void", ["ptr"])
    fe.emit(f"call ccc void @free({fe.typed(op.operands[0])})")


def _alloca(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, memref.AllocaOp)
    type = static_memref(op, op.memref.type)
    element = fe.module.type(type.element_type)
    alignment = op.alignment.value.data if op.alignment else byte_size(llvm_type(type.element_type))
    name = fe.name()  # hoisted into the entry block, before what is there (`AllocaLowering`)
    fe.hoisted.append(f"  {name} = alloca {element}, i64 {type.element_count()}, align {alignment}\n")
    fe.values[op.memref] = ("ptr" if element == "ptr" else f"{element}*", name)


def _view(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, memref.ViewOp)
    arena = fe.values[op.source]
    shift = fe.typed(op.byte_shift)
    fe.emit(f"getelementptr inbounds i8, {arena[0]} {arena[1]}, {shift}", op.results[0], arena[0])


def _same_value(fe: FunctionEmitter, op: Operation) -> None:
    fe.values[op.results[0]] = fe.values[op.operands[0]]


def _cast_value(fe: FunctionEmitter, op: Operation) -> None:
    if len(op.operands) != 1 or len(op.results) != 1:
        raise DiagnosticException("emit-llvm-ir: cannot emit a 'builtin.unrealized_conversion_cast' of several values")
    source, result = op.operands[0], op.results[0]
    used = any(not isinstance(use.operation, builtin.UnrealizedConversionCastOp) for use in result.uses)
    if used and fe.module.type(source.type) != fe.module.type(result.type):
        raise DiagnosticException(f"convert-to-llvm: unresolved cast from {source.type} to {result.type}")
    fe.values[result] = fe.values[source]


# control flow and calls


def _call(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, func.CallOp)
    callee = op.callee.string_value()
    if len(op.res) > 1:
        raise DiagnosticException(f"convert-to-llvm: call to {op.callee} returns >1 value")
    signature = fe.module.signatures.get(callee)
    if signature is None:
        raise DiagnosticException(f"emit-llvm-ir: call to @{callee}, which the module does not declare")
    args = ", ".join(fe.typed(arg) for arg in op.arguments)
    text = f"call ccc {signature[0]} {global_name(callee)}({args})"
    fe.emit(text, op.res[0], signature[0]) if op.res else fe.emit(text)


def _return(fe: FunctionEmitter, op: Operation) -> None:
    fe.emit(f"ret {fe.typed(op.operands[0])}" if op.operands else "ret void")


def _branch(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, cf.BranchOp | llvm.BrOp)
    fe.branch_to(op.successor, op.arguments)
    fe.emit(f"br label %{fe.labels[op.successor]}")


def _cond_branch(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, cf.ConditionalBranchOp | llvm.CondBrOp)
    fe.branch_to(op.then_block, op.then_arguments)
    fe.branch_to(op.else_block, op.else_arguments)
    then, other = fe.labels[op.then_block], fe.labels[op.else_block]
    fe.emit(f"br i1 {fe.values[op.cond][1]}, label %{then}, label %{other}")


def _call_extern(fe: FunctionEmitter, op: Operation) -> None:
    """`convert_to_llvm.CallExternLowering`: the buffers' addresses in a stack array, the call through the function
    pointer, the first failure recorded in the status word."""
    assert isinstance(op, loop.CallExternOp)
    if not isinstance(op.function, BlockArgument) or op.status is None:
        raise DiagnosticException(
            f"convert-to-llvm: call_extern '{op.callee.data}' has no function pointer parameter (run loop-to-scf)"
        )
    array = fe.emit(f"alloca ptr, i64 {len(op.buffers)}, align 8", None, "ptr")
    for index, buffer in enumerate(op.buffers):
        slot = fe.emit(f"getelementptr inbounds ptr, ptr {array}, i32 {index}", None, "ptr")
        _store(fe, fe.values[buffer], ("ptr", slot), None)
    function = fe.values[op.function]
    callee = fe.emit(f"bitcast {function[0]} {function[1]} to i32 (ptr)*", None, "ptr")
    result = fe.emit(f"call i32 {callee}(ptr {array})", None, "i32")
    status = fe.values[op.status]
    first = fe.emit(f"load i32, {status[0]} {status[1]}", None, "i32")
    clear = fe.emit(f"icmp eq i32 {first}, 0", None, "i1")
    failed = fe.emit(f"icmp ne i32 {result}, 0", None, "i1")
    record = fe.emit(f"and i1 {clear}, {failed}", None, "i1")
    second_slot = fe.emit(f"getelementptr inbounds i32, {status[0]} {status[1]}, i32 1", None, status[0])
    second = fe.emit(f"load i32, {status[0]} {second_slot}", None, "i32")
    new_first = fe.emit(f"select  i1 {record}, i32 {op.function.index + 1}, i32 {first}", None, "i32")
    new_second = fe.emit(f"select  i1 {record}, i32 {result}, i32 {second}", None, "i32")
    _store(fe, ("i32", new_first), status, None)
    _store(fe, ("i32", new_second), (status[0], second_slot), None)


# vector


def _lanes(type: str) -> int:
    return int(type[1:].split(" ", 1)[0])


def _broadcast(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, vector.BroadcastOp)
    type = fe.module.type(op.vector.type)
    element = type[1:-1].split(" x ", 1)[1]
    undef = undef_text(type, element)
    first = fe.emit(f"insertelement {type} {undef}, {fe.typed(op.source)}, i64 0", None, type)
    mask = shuffle_mask([0] * _lanes(type))
    fe.emit(f"shufflevector {type} {first}, {type} {undef}, {mask}", op.vector, type)


def _vector_fma(fe: FunctionEmitter, op: Operation) -> None:
    args = [fe.values[v] for v in op.operands]
    type = fe.module.type(op.results[0].type)
    name = f"llvm.fma.{type_suffix(op.results[0].type)}"
    fe.module.intrinsic(name, type, [type] * 3)
    text = ", ".join(f"{t} {r}" for t, r in args)
    fe.emit(f"call {type} {global_name(name)}({text})", op.results[0], type)


def _shuffle(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, vector.ShuffleOp)
    type = fe.module.type(op.result.type)
    mask = shuffle_mask(list(op.mask.get_values()))
    fe.emit(f"shufflevector {fe.typed(op.v1)}, {fe.typed(op.v2)}, {mask}", op.result, type)


def _dot_u8s8(fe: FunctionEmitter, op: Operation) -> None:
    """`dot_product.DotU8S8Lowering`: one `vpdpbusd` (`usdot`, two `vpmaddwd`) per register-wide piece, joined."""
    assert isinstance(op, llvm_ext.DotU8S8Op)
    kind = op.result.type
    width = intrinsic_lanes(fe.module.target, kind)
    if not width:
        fe.values[op.result] = emit_expanded(fe, op, dot_product_expansion, _emit)
        return
    name, as_bytes = dot_intrinsic(fe.module.target, width, op.lhs_bound, op.rhs_width)
    as_i8 = f"<{4 * width} x i8>"  # `usdot` takes the bytes; the accumulator stays i32 words
    operands = [fe.values[v] for v in op.operands]
    pieces = emit_split_pieces(fe, operands, width, lambda position: as_i8 if as_bytes and position else None)
    results = [emit_dot_piece(fe, name, width, piece, _call_intrinsic) for piece in pieces]
    fe.values[op.result] = emit_joined(fe, results)


def _dot_bf16(fe: FunctionEmitter, op: Operation) -> None:
    """`dot_bf16.DotBF16Lowering`: one `vdpbf16ps` (`bfdot`) per register-wide piece, joined."""
    assert isinstance(op, llvm_ext.DotBF16Op)
    fe.values[op.result] = emit_bf16_dot(fe, op, _call_intrinsic, _emit)


def _pack_bf16(fe: FunctionEmitter, op: Operation) -> None:
    """`pack_bf16.pack_bf16_expansion`: the target's conversion (`fptrunc`) or integer rounding."""
    assert isinstance(op, llvm_ext.PackBF16Op)
    expansion = functools.partial(pack_bf16_expansion, hardware=converts_bf16(fe.module.target))
    fe.values[op.result] = emit_expanded(fe, op, expansion, _emit)


def _emit(fe: FunctionEmitter, op: Operation) -> None:
    HANDLERS[type(op)](fe, op)


def _llvm_store(fe: FunctionEmitter, op: Operation) -> None:
    assert isinstance(op, llvm.StoreOp)
    _store(fe, fe.values[op.value], fe.values[op.ptr], op.alignment.value.data if op.alignment else None)


_WITH_OVERFLOW = (arith.AddiOp, arith.SubiOp, arith.MuliOp, arith.ShLIOp)
_INTEGER = (arith.DivSIOp, arith.DivUIOp, arith.RemSIOp, arith.RemUIOp, arith.AndIOp, arith.OrIOp, arith.XOrIOp)
_INTEGER += (arith.ShRSIOp, arith.ShRUIOp)
_FLOAT = (arith.AddfOp, arith.SubfOp, arith.MulfOp, arith.DivfOp)
_CASTS = (arith.ExtSIOp, arith.ExtUIOp, arith.TruncIOp, arith.ExtFOp, arith.TruncFOp, arith.SIToFPOp, arith.UIToFPOp)
_MORE_CASTS = (arith.FPToSIOp, arith.FPToUIOp, arith.BitcastOp, llvm_ext.FPToSIOp, llvm_ext.FPToUIOp, llvm_ext.UIToFPOp)

HANDLERS: dict[type[Operation], Handler] = {
    arith.ConstantOp: _constant,
    **{op: _binary(code, _overflow) for op, code in zip(_WITH_OVERFLOW, "add sub mul shl".split())},
    **{op: _binary(code, None) for op, code in zip(_INTEGER, "sdiv udiv srem urem and or xor ashr lshr".split())},
    **{op: _binary(code, _fastmath) for op, code in zip(_FLOAT, "fadd fsub fmul fdiv".split())},
    **{op: _cast(code) for op, code in zip(_CASTS, "sext zext trunc fpext fptrunc sitofp uitofp".split())},
    **{op: _cast(code) for op, code in zip(_MORE_CASTS, "fptosi fptoui bitcast fptosi fptoui uitofp".split())},
    **{op: _intrinsic(name) for op, name in ap.INTRINSICS.items()},
    **{op: _libm(name) for op, name in LIBM_FUNCTIONS.items()},
    **dict.fromkeys((arith.FloorDivSIOp, arith.CeilDivSIOp, arith.CeilDivUIOp), _rounding_division),
    arith.NegfOp: _negf,
    arith.IndexCastOp: _index_cast,
    arith.CmpiOp: _compare("icmp", _ICMP),
    arith.CmpfOp: _compare("fcmp", _FCMP),
    arith.SelectOp: _select,
    math.RsqrtOp: _rsqrt,
    memref.LoadOp: _load,
    memref.StoreOp: _store_op,
    memref.AllocOp: _alloc,
    memref.DeallocOp: _dealloc,
    memref.AllocaOp: _alloca,
    memref.ViewOp: _view,
    memref.CollapseShapeOp: _same_value,
    loop.ViewOp: _same_value,
    vector.LoadOp: _load,
    vector.StoreOp: _store_op,
    vector.BroadcastOp: _broadcast,
    vector.FMAOp: _vector_fma,
    vector.ShuffleOp: _shuffle,
    loop.PrefetchOp: _prefetch,
    loop.CallExternOp: _call_extern,
    builtin.UnrealizedConversionCastOp: _cast_value,
    func.CallOp: _call,
    func.ReturnOp: _return,
    cf.BranchOp: _branch,
    cf.ConditionalBranchOp: _cond_branch,
    llvm_ext.FCmpOp: _compare("fcmp", _FCMP),
    llvm_ext.SelectOp: _select,
    llvm_ext.DotU8S8Op: _dot_u8s8,
    llvm_ext.DotBF16Op: _dot_bf16,
    llvm_ext.PackBF16Op: _pack_bf16,
    llvm.ConstantOp: _constant,
    llvm.StoreOp: _llvm_store,
    llvm.FRemOp: _binary("frem", _fastmath),  # graph-to-te's fmod: arith has no remf
    **LLVM_HANDLERS,
}
"""The handler of each op class."""
