"""`emit_llvm_ir`, the direct path from `cf`-level IR to LLVM IR text, gives the same LLVM IR as
`convert-to-llvm,reconcile-unrealized-casts` and `translate_to_llvm_ir` (up to local names) on real models and on a
kernel of the ops the models leave out, and LLVM parses and verifies it.

Light Inception-v2 and DenseNet-121 (25 s and 35 s to lower and compare) run with MINIMLC_TEST_ALL_LIGHT_MODELS=1.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable

import numpy as np
import pytest
from llvmlite import binding
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from minimlc.frontend.onnx import import_model
from minimlc.lowering.llvm.emit_ir import canonical_llvm_ir, emit_llvm_ir
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes, run_pipeline
from minimlc.lowering.target import set_target
from minimlc.tools.conformance import light_model_paths

EXTERN_GRAPH = """
func.func @main(%x: tensor<2x8xf32>, %w: tensor<4x8xf32>) -> tensor<2x4xf32> {
  %y = graph.call_extern "test.linear" (%x, %w) : (tensor<2x8xf32>, tensor<4x8xf32>) -> tensor<2x4xf32>
  %r = graph.relu %y : tensor<2x4xf32>
  func.return %r : tensor<2x4xf32>
}
"""

KERNEL = """
func.func private @helper(%x: f32) -> f32 {
  %y = arith.mulf %x, %x fastmath<fast> : f32
  func.return %y : f32
}
func.func private @log_value(f32)
func.func private @free(!llvm.ptr)
func.func @kernel(%in: memref<2x3xf32> {llvm.noalias}, %out: memref<?x3xf32> {llvm.noalias}, %n: index) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %t = arith.constant true
  %h = arith.constant 1.5 : f16
  %vi = arith.constant dense<[1, 2, 3, 4]> : vector<4xi32>
  %vf = arith.constant dense<[0.5, -0.0, 1.0e30, 3.0]> : vector<4xf32>
  cf.br ^head(%c0, %c0 : index, index)
^head(%i: index, %j: index):
  %more = arith.cmpi slt, %i, %c2 : index
  cf.cond_br %more, ^body(%i : index), ^exit(%j, %i : index, index)
^body(%k: index):
  %acc = memref.alloca() : memref<4xf32>
  %acc2 = memref.alloca() {alignment = 32 : i64} : memref<2x4xi32>
  %v = memref.load %in[%k, %c2] : memref<2x3xf32>
  %s = func.call @helper(%v) : (f32) -> f32
  %e = math.erf %s fastmath<afn> : f32
  %r = math.rsqrt %e fastmath<fast> : f32
  %x = math.exp %r : f32
  func.call @log_value(%x) : (f32) -> ()
  %b = vector.broadcast %x : f32 to vector<4xf32>
  %w = vector.fma %b, %vf, %b : vector<4xf32>
  vector.store %w, %acc[%c0] : memref<4xf32>, vector<4xf32>
  %w2 = vector.load %acc[%c0] : memref<4xf32>, vector<4xf32>
  %sh = vector.shuffle %w2, %w [0, 5, 2, 7] : vector<4xf32>, vector<4xf32>
  %mx = arith.maximumf %sh, %w : vector<4xf32>
  %cmp = arith.cmpf ogt, %v, %x fastmath<nnan> : f32
  %sel = arith.select %cmp, %v, %x : f32
  memref.store %sel, %out[%k, %c1] : memref<?x3xf32>
  memref.store %sel, %acc[%c1] : memref<4xf32>
  vector.store %vi, %acc2[%c1, %c0] : memref<2x4xi32>, vector<4xi32>
  %fd = arith.floordivsi %k, %c2 : index
  %cd = arith.ceildivsi %k, %c2 : index
  %cu = arith.ceildivui %k, %c2 : index
  %ic = arith.index_cast %fd : index to i32
  %u = arith.uitofp %ic : i32 to f32
  %ef = arith.extf %u : f32 to f64
  %tf = arith.truncf %ef : f64 to f32
  %fs = arith.fptosi %tf : f32 to i32
  %xo = arith.xori %fs, %ic : i32
  %sr = arith.shrui %xo, %ic : i32
  %mn = arith.minui %sr, %ic : i32
  %ng = arith.negf %tf fastmath<fast> : f32
  %buf = memref.alloc(%n) : memref<?x16xf32>
  %buf2 = memref.alloc() : memref<3x5xi8>
  loop.prefetch %buf[%k, %c1] : memref<?x16xf32>
  loop.prefetch %acc[%c1] : memref<4xf32>
  memref.dealloc %buf : memref<?x16xf32>
  memref.dealloc %buf2 : memref<3x5xi8>
  %next = arith.addi %k, %c1 overflow<nsw> : index
  cf.br ^head(%next, %cu : index, index)
^exit(%p: index, %q: index):
  func.return
}
func.func private @dots(%a: vector<12xi32>, %b: vector<12xi32>, %s: i32, %v: vector<16xi32>) -> vector<12xi32> {
  %r = llvmx.dot_u8s8 %a, %a, %b : vector<12xi32>
  %q = llvmx.dot_u8s8 %s, %s, %s : i32
  %w = llvmx.dot_u8s8 %v, %v, %v : vector<16xi32>
  func.return %r : vector<12xi32>
}
func.func @entry(%a: memref<4xf32> {llvm.noalias, llvm.align = 16 : i64}, %b: !llvm.ptr) attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %z = llvm.mlir.zero : !llvm.ptr
  %one = llvm.mlir.constant(1 : i64) : i64
  %g = llvm.getelementptr inbounds %b[%one, 2] : (!llvm.ptr, i64) -> !llvm.ptr, !llvm.struct<(i64, f32, f32)>
  %l = llvm.load %g {alignment = 4 : i64} : !llvm.ptr -> f32
  memref.store %l, %a[%c0] : memref<4xf32>
  llvm.store %z, %b : !llvm.ptr, !llvm.ptr
  func.return
}
"""


def _scf_level(module: ModuleOp, target: str | None = None) -> ModuleOp:
    """`module` lowered as the code generator lowers a partition at O3, up to the `scf` level it emits from."""
    run_pipeline(module, 3, stop_after="scf", target=target)
    run_passes(module, ["cse"])
    return module


def _light(name: str) -> Callable[[], ModuleOp]:
    (path,) = (p for p in light_model_paths() if p.stem == f"light_{name}")
    return lambda: _scf_level(import_model(path).module)


def _transformer(kind: str) -> ModuleOp:
    import dynamic_transformers
    import transformer_models
    from transformer_models import Dims

    dims = Dims(tokens=8, hidden=32, heads=2, ffn=64)
    if kind == "dynamic_bert":
        return _scf_level(import_model(dynamic_transformers.bert(dims, layers=1, vocab=50), symbolic=True).module)
    model = transformer_models.bert(dims, layers=1, vocab=50) if kind == "bert" else transformer_models.gpt(dims, 50)
    return _scf_level(import_model(model).module)


def _quantized(target: str | None) -> ModuleOp:
    from quantized_resnet import quantized_resnet

    return _scf_level(import_model(quantized_resnet(channels=16, size=8, blocks=1)).module, target)


def _dot_products_expanded() -> ModuleOp:
    """VNNI dot products (lowered for znver4) emitted for a target without them: shifts and multiplies."""
    module = _quantized("znver4")
    set_target(module, "x86-64-v3")
    return module


def _elementwise() -> ModuleOp:
    """Elementwise ops of the scalar lowerings: fmod and Mod (LLVM's `frem`), powers, roundings, libm functions."""
    from onnx import TensorProto, helper, numpy_helper

    nodes, value = [], "x"
    for index, (op, attributes) in enumerate(
        [
            ("Mod", {"fmod": 1}),
            ("Mod", {}),
            ("Pow", {}),
            ("Tanh", {}),
            ("Erf", {}),
            ("Floor", {}),
            ("Round", {}),
            ("Sign", {}),
            ("Abs", {}),
            ("Log", {}),
            ("Sqrt", {}),
            ("Reciprocal", {}),
            ("Sin", {}),
            ("Atan", {}),
        ]
    ):
        inputs = [value, "c"] if op in ("Mod", "Pow") else [value]
        nodes.append(helper.make_node(op, inputs, [f"t{index}"], **attributes))
        value = f"t{index}"
    c = numpy_helper.from_array(np.linspace(0.5, 2.5, 16, dtype=np.float32), "c")
    graph = helper.make_graph(
        nodes,
        "elementwise",
        [helper.make_tensor_value_info("x", TensorProto.FLOAT, [4, 16])],
        [helper.make_tensor_value_info(value, TensorProto.FLOAT, [4, 16])],
        [c],
    )
    return _scf_level(import_model(helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])).module)


def _extern() -> ModuleOp:
    return _scf_level(Parser(make_context(), EXTERN_GRAPH).parse_module())


CASES: dict[str, Callable[[], ModuleOp]] = {
    "light_squeezenet": _light("squeezenet"),
    "light_resnet50": _light("resnet50"),
    "light_shufflenet": _light("shufflenet"),
    "light_inception_v2": _light("inception_v2"),
    "light_densenet121": _light("densenet121"),
    "bert": functools.partial(_transformer, "bert"),
    "gpt": functools.partial(_transformer, "gpt"),
    "dynamic_bert": functools.partial(_transformer, "dynamic_bert"),
    "quantized_host": functools.partial(_quantized, None),
    "quantized_vnni": functools.partial(_quantized, "znver4"),
    "quantized_no_vnni": functools.partial(_quantized, "x86-64-v3"),
    "quantized_dot_products_expanded": _dot_products_expanded,
    "call_extern": _extern,
    "elementwise": _elementwise,
}
HEAVY = pytest.mark.skipif(not os.environ.get("MINIMLC_TEST_ALL_LIGHT_MODELS"), reason="25-40 s each")
"""The larger light models, left to a full run (MINIMLC_TEST_ALL_LIGHT_MODELS=1) to keep CI's time."""
MARKS = {
    "light_resnet50": [pytest.mark.slow],  # `slow`: 8 s or more a case, run first
    "light_shufflenet": [pytest.mark.slow, HEAVY],
    "light_inception_v2": [pytest.mark.slow, HEAVY],
    "light_densenet121": [pytest.mark.slow, HEAVY],
}
PARAMS = [pytest.param(name, marks=MARKS.get(name, [])) for name in CASES]


def _three_paths(module: ModuleOp) -> tuple[str, str, str]:
    """(the pass path's LLVM IR, the direct path's from the `cf` level, the direct path's from the `scf` level) of
    an `scf`-level module. The code generator emits from the `scf` level as it is (that LLVM IR is checked valid);
    the comparison drops dead ops first, as the rewriter of `convert-scf-to-cf` does (LLVM drops them too)."""
    binding.parse_assembly(emit_llvm_ir(module)).verify()
    run_passes(module, ["dce"])
    from_scf = emit_llvm_ir(module)
    run_passes(module, ["convert-scf-to-cf"])
    from_cf = emit_llvm_ir(module)
    run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
    return translate_to_llvm_ir(module), from_cf, from_scf


def _assert_same(expected: str, actual: str) -> None:
    expected_lines, actual_lines = canonical_llvm_ir(expected).splitlines(), canonical_llvm_ir(actual).splitlines()
    for number, (want, got) in enumerate(zip(expected_lines, actual_lines, strict=False), 1):
        assert got == want, f"line {number} differs"
    assert len(actual_lines) == len(expected_lines)


@pytest.mark.parametrize("name", PARAMS)
def test_direct_path_gives_the_llvm_ir_of_the_passes(name: str) -> None:
    expected, from_cf, from_scf = _three_paths(CASES[name]())
    _assert_same(expected, from_cf)
    _assert_same(expected, from_scf)
    binding.parse_assembly(from_scf).verify()


def test_direct_path_covers_the_ops_models_leave_out() -> None:
    """Libm and intrinsic math, rounding divisions, casts, allocas (typed pointers: bitcast vector stores),
    run-time sized allocations, prefetches, calls, phis from both branches, dot products the target has no
    instruction for, llvm ops, an entry's packed form and its wrapper."""
    module = Parser(make_context(), KERNEL).parse_module()
    before = str(module)
    actual = emit_llvm_ir(module)
    assert str(module) == before  # the direct path leaves the module as it was (the dot products too)
    run_passes(module, ["convert-to-llvm", "reconcile-unrealized-casts"])
    _assert_same(translate_to_llvm_ir(module), actual)
    binding.parse_assembly(actual).verify()
    for line in ("bitcast float* ", "call afn ccc float @erff(", "@llvm.umax.i64(", "define void @entry_packed(ptr"):
        assert line in actual


def test_an_op_it_cannot_emit_is_named() -> None:
    source = """
    func.func private @copy(%x: memref<4xf32>, %y: memref<4xf32>) {
      "memref.copy"(%x, %y) : (memref<4xf32>, memref<4xf32>) -> ()
      func.return
    }
    """
    with pytest.raises(DiagnosticException, match=r"cannot emit 'memref\.copy'"):
        emit_llvm_ir(Parser(make_context(), source).parse_module())


def test_comparison_sees_a_changed_flag_but_not_renamed_values() -> None:
    text = emit_llvm_ir(Parser(make_context(), KERNEL).parse_module())
    renamed = text.replace("%.", "%x.").replace("\n.", "\nx.")
    assert canonical_llvm_ir(renamed) == canonical_llvm_ir(text)
    assert canonical_llvm_ir(text.replace("fmul afn", "fmul", 1)) != canonical_llvm_ir(text)
    with pytest.raises(AssertionError, match="differs"):
        _assert_same(text, text.replace("align 32", "align 16", 1))


STRUCTURED = """
func.func private @structured(%x: memref<8xf32>, %n: index, %flag: i1) -> f32 {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c2 = arith.constant 2 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c2 iter_args(%acc = %zero) -> (f32) {
    %inner = scf.for %j = %i to %n step %c1 iter_args(%a = %acc) -> (f32) {
      %v = memref.load %x[%j] : memref<8xf32>
      %s = arith.addf %a, %v : f32
      scf.yield %s : f32
    }
    %picked = scf.if %flag -> (f32) {
      scf.yield %inner : f32
    } else {
      %d = arith.mulf %inner, %inner : f32
      scf.yield %d : f32
    }
    scf.if %flag {
      memref.store %picked, %x[%i] : memref<8xf32>
    }
    scf.yield %picked : f32
  }
  func.return %sum : f32
}
"""


def test_structured_control_flow_gives_the_llvm_ir_of_convert_scf_to_cf() -> None:
    """Nested loops carrying values, an `scf.if` with results and one without an else, as `convert-scf-to-cf`
    lowers them (`emit_scf.py`)."""
    module = Parser(make_context(), STRUCTURED).parse_module()
    expected, from_cf, from_scf = _three_paths(module)
    _assert_same(expected, from_scf)
    _assert_same(from_cf, from_scf)
    binding.parse_assembly(from_scf).verify()
    assert from_scf.count("phi ") == 5  # the two indices, the two accumulators, the if's result


def test_an_index_switch_is_named() -> None:
    """`scf.index_switch` has no LLVM lowering here (`convert-to-llvm` has none for `cf.switch` either)."""
    source = """
    func.func private @pick(%i: index, %x: memref<2xf32>) {
      %c0 = arith.constant 0 : index
      %one = arith.constant 1.0 : f32
      scf.index_switch %i
      case 0 {
        memref.store %one, %x[%c0] : memref<2xf32>
        scf.yield
      }
      default {
        scf.yield
      }
      func.return
    }
    """
    with pytest.raises(DiagnosticException, match=r"cannot emit 'scf\.index_switch'"):
        emit_llvm_ir(Parser(make_context(), source).parse_module())
