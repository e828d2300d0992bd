"""End to end through the bottom of the pipeline: scf/memref/arith/math/func -> convert-scf-to-cf ->
convert-to-llvm -> reconcile-unrealized-casts -> LLVM IR -> JIT, called through the packed entry."""

from __future__ import annotations

import ctypes
import math
import os
import re
import subprocess
import sys
from pathlib import Path

import llvmlite.binding as llvm
import numpy as np
import pytest
from xdsl.context import Context
from xdsl.parser import Parser
from xdsl.transforms.convert_scf_to_cf import ConvertScfToCf
from xdsl.transforms.reconcile_unrealized_casts import ReconcileUnrealizedCastsPass

from minimlc.dialects import get_all_dialects
from minimlc.lowering.llvm.convert_to_llvm import ConvertToLlvmPass
from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule, ObjectModule, optimized_module, target_machine


def llvm_ir_of(source: str) -> str:
    ctx = Context()
    for name, factory in get_all_dialects().items():
        ctx.register_dialect(name, factory)
    module = Parser(ctx, source).parse_module()
    for compiler_pass in (ConvertScfToCf(), ConvertToLlvmPass(), ReconcileUnrealizedCastsPass()):
        compiler_pass.apply(ctx, module)
    module.verify()
    return translate_to_llvm_ir(module)


def compile_mlir(source: str) -> JitModule:
    return JitModule(llvm_ir_of(source))


def call_packed(jit: JitModule, name: str, *buffers: np.ndarray) -> None:
    """Call `<name>_packed` with an array of the buffers' addresses, as the runtime does."""
    addresses = (ctypes.c_void_p * len(buffers))(*(b.ctypes.data for b in buffers))
    entry = ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.function_address(f"{name}_packed"))
    entry(addresses)


def elementwise_kernel(body: str, n: int, arity: int) -> str:
    """`out[i] = body(%x, %y)` over `n` elements; `body` ends in a value named %r."""
    inputs = ", ".join(f"%in{k}: memref<{n}xf32>" for k in range(arity))
    loads = "\n".join(f"    %{'xy'[k]} = memref.load %in{k}[%i] : memref<{n}xf32>" for k in range(arity))
    return f"""
func.func @kernel({inputs}, %out: memref<{n}xf32>) attributes {{minimlc.entry}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant {n} : index
  scf.for %i = %c0 to %n step %c1 {{
{loads}
    {body}
    memref.store %r, %out[%i] : memref<{n}xf32>
  }}
  func.return
}}
"""


_erf = np.vectorize(math.erf, otypes=[np.float32])

UNARY = {
    "math.exp": (lambda x: np.exp(x), (-5.0, 5.0)),
    "math.log": (lambda x: np.log(x), (0.01, 10.0)),
    "math.tanh": (lambda x: np.tanh(x), (-4.0, 4.0)),
    "math.sqrt": (lambda x: np.sqrt(x), (0.0, 10.0)),
    "math.rsqrt": (lambda x: 1 / np.sqrt(x), (0.1, 10.0)),
    "math.absf": (lambda x: np.abs(x), (-3.0, 3.0)),
    "math.floor": (lambda x: np.floor(x), (-3.0, 3.0)),
    "math.ceil": (lambda x: np.ceil(x), (-3.0, 3.0)),
    "math.erf": (_erf, (-3.0, 3.0)),
    "math.sin": (lambda x: np.sin(x), (-3.0, 3.0)),
    "arith.negf": (lambda x: -x, (-3.0, 3.0)),
}


@pytest.mark.parametrize("op", sorted(UNARY))
@pytest.mark.parametrize("fastmath", ["", " fastmath<fast>"])
def test_unary_elementwise(op: str, fastmath: str) -> None:
    reference, (low, high) = UNARY[op]
    jit = compile_mlir(elementwise_kernel(f"%r = {op} %x{fastmath} : f32", 1000, 1))
    x = np.random.default_rng(0).uniform(low, high, 1000).astype(np.float32)
    out = np.zeros_like(x)
    call_packed(jit, "kernel", x, out)
    np.testing.assert_allclose(out, reference(x), rtol=2e-6, atol=2e-6)


BINARY = {
    "arith.addf": np.add,
    "arith.subf": np.subtract,
    "arith.mulf": np.multiply,
    "arith.divf": np.divide,
    "arith.maximumf": np.maximum,
    "arith.minimumf": np.minimum,
    "math.powf": lambda x, y: np.power(np.abs(x), y),
    "math.copysign": np.copysign,
}


@pytest.mark.parametrize("op", sorted(BINARY))
def test_binary_elementwise(op: str) -> None:
    body = f"%r = {op} %x, %y : f32"
    if op == "math.powf":
        body = f"%a = math.absf %x : f32\n    %r = {op} %a, %y : f32"
    jit = compile_mlir(elementwise_kernel(body, 257, 2))
    rng = np.random.default_rng(1)
    signs = rng.choice([-1.0, 1.0], (2, 257))
    x, y = (rng.uniform(0.5, 3.0, (2, 257)) * signs).astype(np.float32)
    out = np.zeros_like(x)
    call_packed(jit, "kernel", x, y, out)
    np.testing.assert_allclose(out, BINARY[op](x, y).astype(np.float32), rtol=2e-6)


def test_compare_select_and_casts() -> None:
    body = """%zero = arith.constant 0.0 : f32
    %pos = arith.cmpf ogt, %x, %zero : f32
    %int = arith.fptosi %x : f32 to i64
    %u = arith.sitofp %int : i64 to f32
    %r = arith.select %pos, %u, %zero : f32"""
    jit = compile_mlir(elementwise_kernel(body, 64, 1))
    x = np.linspace(-4.5, 4.5, 64, dtype=np.float32)
    out = np.zeros_like(x)
    call_packed(jit, "kernel", x, out)
    np.testing.assert_array_equal(out, np.where(x > 0, np.trunc(x), 0))


INTEGER = {
    "arith.floordivsi": lambda a, b: a // b,
    "arith.ceildivsi": lambda a, b: -(-a // b),
    "arith.remsi": lambda a, b: np.fmod(a, b),
    "arith.divsi": lambda a, b: np.fix(a / b).astype(np.int64),
    "arith.maxsi": np.maximum,
    "arith.shrsi": lambda a, b: a >> b,
}


@pytest.mark.parametrize("op", sorted(INTEGER))
def test_integer_ops_on_i64_buffers(op: str) -> None:
    source = f"""
func.func @kernel(%a: memref<40xi64>, %b: memref<40xi64>, %out: memref<40xi64>)
    attributes {{minimlc.entry}} {{
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 40 : index
  scf.for %i = %c0 to %n step %c1 {{
    %x = memref.load %a[%i] : memref<40xi64>
    %y = memref.load %b[%i] : memref<40xi64>
    %r = {op} %x, %y : i64
    memref.store %r, %out[%i] : memref<40xi64>
  }}
  func.return
}}
"""
    rng = np.random.default_rng(2)
    a = rng.integers(-100, 100, 40, dtype=np.int64)
    b = rng.choice([-7, -3, -1, 1, 2, 5], 40).astype(np.int64)
    if op == "arith.shrsi":
        b = np.abs(b)
    out = np.zeros_like(a)
    call_packed(compile_mlir(source), "kernel", a, b, out)
    np.testing.assert_array_equal(out, INTEGER[op](a, b))


MATMUL = """
func.func @matmul(%a: memref<8x16xf32> {llvm.noalias}, %b: memref<16x12xf32> {llvm.noalias},
                  %c: memref<8x12xf32> {llvm.noalias}) attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %m = arith.constant 8 : index
  %n = arith.constant 12 : index
  %k = arith.constant 16 : index
  %zero = arith.constant 0.0 : f32
  scf.for %i = %c0 to %m step %c1 {
    scf.for %j = %c0 to %n step %c1 {
      %acc = memref.alloca() {alignment = 64 : i64} : memref<f32>
      memref.store %zero, %acc[] : memref<f32>
      scf.for %l = %c0 to %k step %c1 {
        %x = memref.load %a[%i, %l] : memref<8x16xf32>
        %y = memref.load %b[%l, %j] : memref<16x12xf32>
        %p = arith.mulf %x, %y fastmath<contract> : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p fastmath<contract> : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<8x12xf32>
    }
  }
  func.return
}
"""


def test_matmul_with_alloca_accumulator() -> None:
    jit = compile_mlir(MATMUL)
    rng = np.random.default_rng(3)
    a = rng.standard_normal((8, 16), dtype=np.float32)
    b = rng.standard_normal((16, 12), dtype=np.float32)
    c = np.zeros((8, 12), np.float32)
    call_packed(jit, "matmul", a, b, c)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
    matmul = re.search(r"define void @matmul_packed\(.*?^}", jit.optimized_ir(), re.S | re.M)
    assert matmul is not None
    assert "alloca" not in matmul.group(0), "the accumulator should be promoted to a register"


HEAP_TEMP = """
func.func private @twice_plus(%t: f32, %x: f32) -> f32 {
  %two = arith.constant 2.0 : f32
  %d = arith.mulf %t, %two : f32
  %r = arith.addf %d, %x : f32
  func.return %r : f32
}
func.func @kernel(%x: memref<3x100xf32>, %out: memref<3x100xf32>) attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %c3 = arith.constant 3 : index
  %c100 = arith.constant 100 : index
  %tmp = memref.alloc() {alignment = 64 : i64} : memref<3x100xf32>
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c100 step %c1 {
      %v = memref.load %x[%i, %j] : memref<3x100xf32>
      %e = math.exp %v : f32
      memref.store %e, %tmp[%i, %j] : memref<3x100xf32>
    }
  }
  scf.for %i = %c0 to %c3 step %c1 {
    scf.for %j = %c0 to %c100 step %c1 {
      %t = memref.load %tmp[%i, %j] : memref<3x100xf32>
      %v = memref.load %x[%i, %j] : memref<3x100xf32>
      %r = func.call @twice_plus(%t, %v) : (f32, f32) -> f32
      memref.store %r, %out[%i, %j] : memref<3x100xf32>
    }
  }
  memref.dealloc %tmp : memref<3x100xf32>
  func.return
}
"""


def test_heap_temporary_and_private_call() -> None:
    jit = compile_mlir(HEAP_TEMP)
    x = np.random.default_rng(4).uniform(-2, 2, (3, 100)).astype(np.float32)
    out = np.zeros_like(x)
    call_packed(jit, "kernel", x, out)
    np.testing.assert_allclose(out, 2 * np.exp(x) + x, rtol=2e-6, atol=1e-6)
    assert "@twice_plus" not in jit.optimized_ir(), "the internal helper should be inlined away"


def test_packed_entry_passes_buffers_in_parameter_order() -> None:
    source = """
func.func @order(%a: memref<1xf32>, %b: memref<1xf32>, %c: memref<1xf32>)
    attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %x = memref.load %a[%c0] : memref<1xf32>
  %y = memref.load %b[%c0] : memref<1xf32>
  %r = arith.subf %x, %y : f32
  memref.store %r, %c[%c0] : memref<1xf32>
  func.return
}
"""
    a, b, c = (np.array([v], np.float32) for v in (10.0, 3.0, 0.0))
    call_packed(compile_mlir(source), "order", a, b, c)
    assert c[0] == 7.0


def test_packed_entry_reads_each_buffer_where_first_used() -> None:
    """The packed entry is the entry's body reading each buffer from its array just before the first op that takes
    it (no call passing one argument per buffer: with a model's hundreds of weights, that call alone took LLVM's
    instruction selector most of a minute; nor all the loads up front, each pointer then live through the whole
    entry); the unpacked entry stores its arguments into an array and calls it."""
    buffers = ", ".join(f"%b{k}: memref<1xf32>" for k in range(40))
    source = f"""
func.func @many({buffers}, %out: memref<1xf32>) attributes {{minimlc.entry}} {{
  %c0 = arith.constant 0 : index
  %x = memref.load %b39[%c0] : memref<1xf32>
  %y = memref.load %b7[%c0] : memref<1xf32>
  %s = arith.addf %x, %y : f32
  memref.store %s, %out[%c0] : memref<1xf32>
  func.return
}}
"""
    llvm_ir = llvm_ir_of(source)
    packed = re.search(r"^define void @many_packed\(ptr %(\S+)\)\n\{\n(.*?)^}", llvm_ir, re.S | re.M)
    assert packed is not None, llvm_ir
    array, body = packed.groups()
    slots = re.findall(rf"getelementptr inbounds ptr, ptr %{re.escape(array)}, i32 (\d+)", body)
    assert slots == ["39", "7", "40"], body
    assert body.index("i32 7") > body.index("load float"), "b7 is read after b39's element, where first used"
    assert re.search(r"^define void @many\(.*\)$", llvm_ir, re.M), llvm_ir
    jit = JitModule(llvm_ir)
    buffers_in = [np.array([float(k)], np.float32) for k in range(40)]
    out = np.zeros(1, np.float32)
    call_packed(jit, "many", *buffers_in, out)
    assert out[0] == 46.0


SHARED_KERNEL = """
func.func private @scale(%x: memref<64xf32>, %out: memref<64xf32>) {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 64 : index
  %two = arith.constant 2.0 : f32
  scf.for %i = %c0 to %n step %c1 {
    %v = memref.load %x[%i] : memref<64xf32>
    %r = arith.mulf %v, %two : f32
    memref.store %r, %out[%i] : memref<64xf32>
  }
  func.return
}
func.func @twice(%x: memref<64xf32>, %t: memref<64xf32>, %out: memref<64xf32>) attributes {minimlc.entry} {
  func.call @scale(%x, %t) : (memref<64xf32>, memref<64xf32>) -> ()
  func.call @scale(%t, %out) : (memref<64xf32>, memref<64xf32>) -> ()
  func.return
}
"""


@pytest.mark.parametrize("sealed", [False, True])
def test_sealed_entries_keep_one_copy_of_each_function(sealed: bool) -> None:
    """A model's code (`sealed`, `seal_entries`) has its entry only in its packed form (the unpacked wrapper
    dropped), and a kernel the entry calls twice compiled once, not inlined at each call; unsealed, LLVM keeps the
    wrapper and inlines both calls."""
    machine = target_machine()
    optimized = str(optimized_module(llvm_ir_of(SHARED_KERNEL), machine, 3, sealed=sealed))
    defined = re.findall(r"^define .*?@(\w+)\(", optimized, re.M)
    packed = re.search(r"define void @twice_packed\(.*?^}", optimized, re.S | re.M)
    assert packed is not None
    if sealed:
        assert sorted(defined) == ["scale", "twice_packed"], optimized
        assert packed.group(0).count("call") == 2
    else:
        assert sorted(defined) == ["twice", "twice_packed"], optimized
    x = np.arange(64, dtype=np.float32)
    out = np.zeros_like(x)
    code = ObjectModule([machine.emit_object(llvm.parse_assembly(optimized))], target_from_name("host"))
    addresses = (ctypes.c_void_p * 3)(x.ctypes.data, np.zeros_like(x).ctypes.data, out.ctypes.data)
    ctypes.CFUNCTYPE(None, ctypes.c_void_p)(code.function_address("twice_packed"))(addresses)
    np.testing.assert_array_equal(out, 4 * x)


REDUCTION = """
func.func @dot(%a: memref<1024xf32>, %b: memref<1024xf32>, %out: memref<f32>)
    attributes {minimlc.entry} {
  %c0 = arith.constant 0 : index
  %c1 = arith.constant 1 : index
  %n = arith.constant 1024 : index
  %zero = arith.constant 0.0 : f32
  %sum = scf.for %i = %c0 to %n step %c1 iter_args(%acc = %zero) -> (f32) {
    %x = memref.load %a[%i] : memref<1024xf32>
    %y = memref.load %b[%i] : memref<1024xf32>
    %p = arith.mulf %x, %y fastmath<fast> : f32
    %s = arith.addf %acc, %p fastmath<fast> : f32
    scf.yield %s : f32
  }
  memref.store %sum, %out[] : memref<f32>
  func.return
}
"""


def test_fastmath_reduction_vectorizes_with_host_features() -> None:
    jit = compile_mlir(REDUCTION)
    widths = {int(w) for w in re.findall(r"<(\d+) x float>", jit.optimized_ir())}
    assert widths, "expected float vectors"
    assert max(widths) >= 8, f"expected AVX2-wide float vectors, got {widths}"
    assert re.search(r"vfmadd\w*ps\s.*%[yz]mm", jit.asm()), "expected packed FMA on ymm/zmm"
    rng = np.random.default_rng(5)
    a, b = (rng.standard_normal(1024, dtype=np.float32) for _ in "ab")
    out = np.zeros((), np.float32)
    call_packed(jit, "dot", a, b, out)
    np.testing.assert_allclose(out, np.dot(a.astype(np.float64), b), rtol=1e-4)


def test_strict_reduction_stays_in_order() -> None:
    jit = compile_mlir(REDUCTION.replace(" fastmath<fast>", ""))
    assert "<8 x float>" not in jit.optimized_ir(), "a strict float sum must not be reassociated"


def test_function_address_of_missing_symbol_raises() -> None:
    jit = compile_mlir(REDUCTION)
    with pytest.raises(KeyError, match="no_such_function"):
        jit.function_address("no_such_function")


def test_invalid_ir_is_rejected() -> None:
    with pytest.raises(RuntimeError):
        JitModule("define void @f() {\n  ret i32 0\n}\n")


@pytest.mark.slow
def test_llvm_ir_text_does_not_depend_on_the_hash_seed() -> None:
    """Fast-math flags print in one order whatever Python's hash seed (xDSL keeps them in a set)."""
    source = elementwise_kernel("%r = arith.addf %x, %y fastmath<fast> : f32", 16, 2)
    mini_opt = Path(sys.executable).with_name("mini-opt")
    texts = {
        subprocess.run(
            [mini_opt, "-p", "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts", "-t", "llvm"],
            input=source,
            capture_output=True,
            text=True,
            check=True,
            env={**os.environ, "PYTHONHASHSEED": str(seed)},
        ).stdout
        for seed in range(6)
    }
    assert len(texts) == 1, "the LLVM IR text changed with the hash seed"
    (text,) = texts
    assert "fadd afn arcp contract ninf nnan nsz reassoc float" in text, text
