"""Parallel loops end to end: loop-outline-parallel, the pipeline and the JIT, on 1 and 2 threads, against numpy in
float64 (rtol = atol = 1e-5: float32 rounding, 48 products per matmul element) and bit for bit against the serial
loop."""

from __future__ import annotations

import ctypes
import time
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import IntegerAttr, ModuleOp
from xdsl.parser import Parser

from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes
from minimlc.lowering.abi import POOL_ATTR
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import ThreadPool, register_symbols

PASSES = ["loop-outline-parallel", "loop-to-scf", "convert-scf-to-cf", "convert-to-llvm", "reconcile-unrealized-casts"]

# Captures buffers, an f32 parameter, a constant and an outer serial induction variable; the parallel loop has a
# non-zero lower bound and a step (columns 8..999), and runs in a private function the entry calls.
ELEMENTWISE = """
func.func private @scale_rows(%x: memref<6x1000xf32>, %y: memref<6x1000xf32>, %s: f32) {
  %one = arith.constant 1.0 : f32
  loop.for "r" %r = 0 to 6 step 1 serial {
    %ri = arith.index_cast %r : index to i64
    %rf = arith.sitofp %ri : i64 to f32
    loop.for "c_o" %c_o = 8 to 1000 step 16 KIND {
      loop.for "c_i" %c_i = 0 to 16 step 1 serial {
        %c = arith.addi %c_o, %c_i : index
        %v = memref.load %x[%r, %c] : memref<6x1000xf32>
        %p = arith.mulf %v, %s : f32
        %q = arith.addf %p, %rf : f32
        %t = arith.addf %q, %one : f32
        memref.store %t, %y[%r, %c] : memref<6x1000xf32>
      }
    }
  }
  func.return
}
func.func @kernel(%x: memref<6x1000xf32>, %y: memref<6x1000xf32>) {
  %s = arith.constant 1.5 : f32
  func.call @scale_rows(%x, %y, %s) : (memref<6x1000xf32>, memref<6x1000xf32>, f32) -> ()
  func.return
}
"""

MATMUL = """
func.func @kernel(%a: memref<64x48xf32> {llvm.noalias}, %b: memref<48x40xf32> {llvm.noalias},
                  %c: memref<64x40xf32> {llvm.noalias}) {
  %zero = arith.constant 0.0 : f32
  loop.for "i" %i = 0 to 64 step 1 KIND {
    loop.for "j" %j = 0 to 40 step 1 KIND {
      %acc = loop.alloc "local" : memref<f32>
      memref.store %zero, %acc[] : memref<f32>
      loop.for "k" %k = 0 to 48 step 1 serial {
        %x = memref.load %a[%i, %k] : memref<64x48xf32>
        %w = memref.load %b[%k, %j] : memref<48x40xf32>
        %p = arith.mulf %x, %w : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p : f32
        memref.store %t, %acc[] : memref<f32>
      }
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<64x40xf32>
    }
  }
  func.return
}
"""


def lower(source: str) -> ModuleOp:
    ctx = make_context()
    module = Parser(ctx, source).parse_module()
    run_passes(module, PASSES, ctx)
    module.verify()
    return module


def compile_kernel(source: str, parameters: int) -> tuple[JitModule, Callable[..., None]]:
    """JIT `@kernel` and a ctypes function that calls it with `parameters` pointers (buffers, then the pool)."""
    register_symbols()
    jit = JitModule(translate_to_llvm_ir(lower(source)))
    return jit, ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * parameters)(jit.function_address("kernel"))


def scale_rows(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """ELEMENTWISE in float64: columns 8..999 of row r become 1.5 x + r + 1; the others keep y's zeros."""
    expected = y.astype(np.float64)
    expected[:, 8:] = 1.5 * x[:, 8:].astype(np.float64) + np.arange(6)[:, None] + 1
    return expected


CASES = {
    "elementwise": (
        ELEMENTWISE,
        lambda rng: [rng.standard_normal((6, 1000), dtype=np.float32), np.zeros((6, 1000), np.float32)],
        scale_rows,
    ),
    "matmul": (
        MATMUL,
        lambda rng: [
            rng.standard_normal((64, 48), dtype=np.float32),
            rng.standard_normal((48, 40), dtype=np.float32),
            np.zeros((64, 40), np.float32),
        ],
        lambda a, b, c: a.astype(np.float64) @ b.astype(np.float64),
    ),
}


@pytest.mark.parametrize("case", sorted(CASES))
@pytest.mark.parametrize("num_threads", [1, 2])
def test_parallel_loop_matches_numpy_and_the_serial_loop(case: str, num_threads: int) -> None:
    source, make_buffers, numpy_reference = CASES[case]
    serial_buffers = make_buffers(np.random.default_rng(7))
    parallel_buffers = [buffer.copy() for buffer in serial_buffers]
    expected = numpy_reference(*serial_buffers)
    _serial_jit, serial = compile_kernel(source.replace("KIND", "serial"), len(serial_buffers))
    parallel_jit, parallel = compile_kernel(source.replace("KIND", "parallel"), len(serial_buffers) + 1)
    assert "@minimlc_parallel_for" in parallel_jit.optimized_ir()
    serial(*(buffer.ctypes.data for buffer in serial_buffers))
    deadline = time.monotonic() + 60
    with ThreadPool(num_threads) as pool:
        while True:  # a busy machine may keep a worker out of a run: repeat until every thread took tasks
            parallel(*(buffer.ctypes.data for buffer in parallel_buffers), pool.address)
            np.testing.assert_allclose(parallel_buffers[-1], expected, rtol=1e-5, atol=1e-5)
            np.testing.assert_array_equal(parallel_buffers[-1], serial_buffers[-1])
            if num_threads == 1 or min(pool.task_counts()) > 0 or time.monotonic() > deadline:
                break
        assert num_threads == 1 or min(pool.task_counts()) > 0, pool.task_counts()
    np.testing.assert_allclose(serial_buffers[-1], expected, rtol=1e-5, atol=1e-5)


def test_pool_parameter_is_threaded_from_the_entry_to_the_loop() -> None:
    ctx = make_context()
    module = Parser(ctx, ELEMENTWISE.replace("KIND", "parallel")).parse_module()
    run_passes(module, ["loop-outline-parallel"], ctx)
    functions = {op.sym_name.data: op for op in module.ops if isinstance(op, func.FuncOp)}
    for name in ("kernel", "scale_rows"):
        index = functions[name].attributes[POOL_ATTR]
        assert isinstance(index, IntegerAttr)
        assert index.value.data == len(functions[name].function_type.inputs) - 1
    assert POOL_ATTR not in functions["scale_rows_c_o_body"].attributes


def test_packed_entry_takes_the_pool_in_its_argument_array() -> None:
    source = MATMUL.replace("KIND", "parallel").replace(
        "%c: memref<64x40xf32> {llvm.noalias}) {", "%c: memref<64x40xf32> {llvm.noalias}) attributes {minimlc.entry} {"
    )
    register_symbols()
    jit = JitModule(translate_to_llvm_ir(lower(source)))
    rng = np.random.default_rng(8)
    a, b = rng.standard_normal((64, 48), dtype=np.float32), rng.standard_normal((48, 40), dtype=np.float32)
    c = np.zeros((64, 40), np.float32)
    with ThreadPool(2) as pool:
        args = np.array([a.ctypes.data, b.ctypes.data, c.ctypes.data, pool.address], np.uintp)
        ctypes.CFUNCTYPE(None, ctypes.c_void_p)(jit.function_address("kernel_packed"))(args.ctypes.data)
    np.testing.assert_allclose(c, a @ b, rtol=1e-5, atol=1e-5)
