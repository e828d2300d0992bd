"""The `convert-to-llvm` pass and the LLVM IR translation, checked on their output IR."""

from __future__ import annotations

import io

import pytest
from xdsl.context import Context
from xdsl.dialects import llvm
from xdsl.dialects.builtin import ArrayAttr, IntegerAttr, ModuleOp, i64
from xdsl.ir import Block, Region
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, LLVMTranslationException

from minimlc.dialects import get_all_dialects
from minimlc.lowering import get_all_passes
from minimlc.lowering.llvm.convert_to_llvm import ConvertToLlvmPass
from minimlc.lowering.llvm.translate import LlvmIrTarget, translate_to_llvm_ir


def make_context() -> Context:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    return ctx


def lower(source: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, source).parse_module()
    ConvertToLlvmPass().apply(ctx, module)
    module.verify()
    return module


KERNEL = """
func.func private @square(%x: f32) -> f32 {
  %y = arith.mulf %x, %x fastmath<fast> : f32
  func.return %y : f32
}
func.func private @log_value(f32)
func.func @main(%in: memref<2x3xf32> {llvm.noalias}, %out: memref<2x3xf32> {llvm.noalias})
    attributes {minimlc.entry} {
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %c3 = arith.constant 3 : index
  cf.br ^head(%c1 : index)
^head(%i: index):
  %more = arith.cmpi slt, %i, %c2 : index
  cf.cond_br %more, ^body, ^exit
^body:
  %acc = memref.alloca() : memref<1xf32>
  %v = memref.load %in[%i, %c2] : memref<2x3xf32>
  %s = func.call @square(%v) : (f32) -> f32
  %t = math.tanh %s fastmath<afn> : f32
  memref.store %t, %out[%i, %c2] : memref<2x3xf32>
  %next = arith.addi %i, %c1 : index
  cf.br ^head(%next : index)
^exit:
  func.return
}
"""


def functions(module: ModuleOp) -> dict[str, llvm.FuncOp]:
    return {op.sym_name.data: op for op in module.ops if isinstance(op, llvm.FuncOp)}


def test_pass_is_registered_under_its_name() -> None:
    assert ConvertToLlvmPass.name == "convert-to-llvm"
    assert get_all_passes()["convert-to-llvm"]() is ConvertToLlvmPass


def test_output_is_pure_llvm() -> None:
    module = lower(KERNEL)
    names = {op.name.split(".")[0] for op in module.walk() if op is not module}
    assert names == {"llvm"}


def test_linkage_follows_visibility() -> None:
    funcs = functions(lower(KERNEL))
    assert funcs["square"].linkage.linkage.data == "internal"
    assert funcs["log_value"].linkage.linkage.data == "external"
    assert not funcs["log_value"].body.blocks
    assert funcs["main"].linkage.linkage.data == "external"
    assert funcs["main_packed"].linkage.linkage.data == "external"


def test_entry_becomes_its_packed_body_and_an_unpacked_wrapper() -> None:
    """`@main_packed(args)` holds the entry's body; with several blocks it loads both buffers at the start (after
    the hoisted alloca). `@main` keeps the signature and `noalias`, and only packs its arguments and calls it."""
    funcs = functions(lower(KERNEL))
    main, packed = funcs["main"], funcs["main_packed"]
    assert main.arg_attrs is not None
    assert all("llvm.noalias" in attrs.data for attrs in main.arg_attrs)
    assert "minimlc.entry" in packed.attributes
    assert list(packed.function_type.inputs) == [llvm.LLVMPointerType()]
    entry = packed.body.blocks.first
    assert entry is not None
    assert [type(op) for op in entry.ops][:6] == [
        llvm.ConstantOp,
        llvm.AllocaOp,
        llvm.GEPOp,
        llvm.LoadOp,
        llvm.GEPOp,
        llvm.LoadOp,
    ]
    calls = [op for op in main.walk() if isinstance(op, llvm.CallOp)]
    assert [c.callee.string_value() for c in calls if c.callee] == ["main_packed"]


def test_alloca_is_hoisted_into_the_entry_block() -> None:
    main = functions(lower(KERNEL))["main_packed"]
    allocas = [op for op in main.walk() if isinstance(op, llvm.AllocaOp)]
    assert len(allocas) == 1
    assert allocas[0].parent_block() is main.body.blocks.first


def test_translation_keeps_linkage_noalias_and_fastmath() -> None:
    text = translate_to_llvm_ir(lower(KERNEL))
    assert "define internal float @square(float" in text
    assert "define void @main(ptr noalias %.1, ptr noalias %.2)" in text
    assert "define void @main_packed(ptr %.1)" in text
    assert "declare void @log_value(float" in text
    assert "call afn float @llvm.tanh.f32(float" in text
    fmul = next(line for line in text.splitlines() if " fmul " in line)
    flags = fmul.split(" fmul ")[1].split(" float ")[0].split()
    assert set(flags) == {"reassoc", "nnan", "ninf", "nsz", "arcp", "contract", "afn"}


def test_target_prints_the_same_ir() -> None:
    module = lower(KERNEL)
    output = io.StringIO()
    LlvmIrTarget().emit(make_context(), module, output)
    assert output.getvalue() == translate_to_llvm_ir(module)
    assert LlvmIrTarget.name == "llvm"


def test_fcmp_fastmath_survives_a_text_round_trip() -> None:
    source = """
func.func @f(%x: f32, %y: f32) -> i1 {
  %c = arith.cmpf olt, %x, %y fastmath<nnan,nsz> : f32
  func.return %c : i1
}
"""
    printed = str(lower(source))
    reparsed = Parser(make_context(), printed).parse_module()
    assert "fcmp nnan nsz olt float" in translate_to_llvm_ir(reparsed)


UNSUPPORTED = {
    "math.ctlz": """func.func @f(%x: i32) -> i32 {
  %y = math.ctlz %x : i32
  func.return %y : i32
}""",
    "scf.for": """func.func @f() {
  %c0 = arith.constant 0 : index
  scf.for %i = %c0 to %c0 step %c0 {
  }
  func.return
}""",
    "entry": """func.func @f(%x: f32) attributes {minimlc.entry} {
  func.return
}""",
    "results": "func.func private @g() -> (f32, f32)",
}


@pytest.mark.parametrize("case", sorted(UNSUPPORTED))
def test_unsupported_input_raises_a_diagnostic_naming_it(case: str) -> None:
    expected = {"entry": "entry @f takes f32, neither a memref nor a pointer", "results": "@g returns >1 value"}
    with pytest.raises(DiagnosticException, match=expected.get(case, f"'{case}'")):
        lower(UNSUPPORTED[case])


def test_translation_rejects_unlowered_ops() -> None:
    module = Parser(make_context(), "func.func @f() {\n  func.return\n}").parse_module()
    with pytest.raises(LLVMTranslationException, match=r"func\.func"):
        translate_to_llvm_ir(module)


def test_translation_rejects_a_passthrough_attribute_that_is_not_a_string() -> None:
    function = llvm.FuncOp(
        "f",
        llvm.LLVMFunctionType([], llvm.LLVMVoidType()),
        body=Region(Block([llvm.ReturnOp()])),
        other_props={"passthrough": ArrayAttr([IntegerAttr(1, i64)])},
    )
    module = ModuleOp([function])
    with pytest.raises(LLVMTranslationException, match=r"@f: passthrough attribute 1 : i64 is not a string"):
        translate_to_llvm_ir(module)


LLVMX = {
    "llvmx.fptosi %x : f32 to i64": "fptosi float %.1 to i64",
    "llvmx.fptoui %x : f32 to i32": "fptoui float %.1 to i32",
    "llvmx.uitofp %i : i64 to f32": "uitofp i64 %.2 to float",
}


@pytest.mark.parametrize("op", sorted(LLVMX))
def test_llvmx_ops_round_trip_and_translate(op: str) -> None:
    source = f"llvm.func @f(%x: f32, %i: i64) {{\n  %r = {op}\n  llvm.return\n}}"
    module = Parser(make_context(), source).parse_module()
    module.verify()
    assert f"%r = {op}" in str(module)
    generic = io.StringIO()
    Printer(generic, print_generic_format=True).print_op(module)
    assert str(Parser(make_context(), generic.getvalue()).parse_module()) == str(module)
    assert LLVMX[op] in translate_to_llvm_ir(module)


def test_llvmx_cast_rejects_wrong_operand_kind() -> None:
    source = "llvm.func @f(%i: i64) {\n  %r = llvmx.fptosi %i : i64 to i64\n  llvm.return\n}"
    with pytest.raises(DiagnosticException):
        Parser(make_context(), source).parse_module().verify()
