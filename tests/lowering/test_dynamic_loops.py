"""Loop-level kernels over buffers with run-time extents, lowered to LLVM, JIT-compiled and run at several sizes
against numpy: extents and trip counts are run-time `index` parameters of one compiled function."""

from __future__ import annotations

import ctypes
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.parser import Parser

from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import ThreadPool, register_symbols

TO_LLVM = "loop-to-scf,cse,convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"
SIZES = (1, 7, 64)

ADD = """
func.func @kernel(%a: memref<?x?xf32>, %b: memref<?x?xf32>, %c: memref<?x?xf32>, %n: index, %m: index) {
  %x = loop.extents %a[%n, %m] : memref<?x?xf32>
  %y = loop.extents %b[%n, %m] : memref<?x?xf32>
  %z = loop.extents %c[%n, %m] : memref<?x?xf32>
  %t = loop.alloc "global" [%n, %m] : memref<?x?xf32>
  loop.for "i" %i = 0 to %n step 1 serial {
    loop.for "j" %j = 0 to %m step 1 serial {
      %u = memref.load %x[%i, %j] : memref<?x?xf32>
      %v = memref.load %y[%i, %j] : memref<?x?xf32>
      %w = arith.addf %u, %v : f32
      memref.store %w, %t[%i, %j] : memref<?x?xf32>
    }
  }
  loop.for "i2" %i2 = 0 to %n step 1 serial {
    loop.for "j2" %j2 = 0 to %m step 1 serial {
      %r = memref.load %t[%i2, %j2] : memref<?x?xf32>
      memref.store %r, %z[%i2, %j2] : memref<?x?xf32>
    }
  }
  func.return
}
"""

ROW_SUM = """
func.func @kernel(%a: memref<4x?xf32>, %out: memref<4xf32>, %s: index) {
  %x = loop.extents %a[%s] : memref<4x?xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i" %i = 0 to 4 step 1 serial {
    %zero = arith.constant 0.000000e+00 : f32
    memref.store %zero, %acc[] : memref<f32>
    loop.for "k" %k = 0 to %s step 1 serial {
      %v = memref.load %x[%i, %k] : memref<4x?xf32>
      %p = memref.load %acc[] : memref<f32>
      %q = arith.addf %p, %v : f32
      memref.store %q, %acc[] : memref<f32>
    }
    %r = memref.load %acc[] : memref<f32>
    memref.store %r, %out[%i] : memref<4xf32>
  }
  func.return
}
"""

SCALE_ROWS = """
func.func @kernel(%a: memref<?x8xf32>, %b: memref<?x8xf32>, %n: index) {
  %x = loop.extents %a[%n] : memref<?x8xf32>
  %y = loop.extents %b[%n] : memref<?x8xf32>
  loop.for "i" %i = 0 to %n step 1 serial {
    loop.for "j" %j = 0 to 8 step 1 serial {
      %v = memref.load %x[%i, %j] : memref<?x8xf32>
      %two = arith.constant 2.000000e+00 : f32
      %w = arith.mulf %v, %two : f32
      %c = arith.index_cast %i : index to i64
      %f = arith.sitofp %c : i64 to f32
      %r = arith.addf %w, %f : f32
      memref.store %r, %y[%i, %j] : memref<?x8xf32>
    }
  }
  func.return
}
"""


def scale_rows(a: np.ndarray) -> np.ndarray:
    return 2 * a + np.arange(a.shape[0], dtype=np.float32)[:, None]


def parse(source: str):
    return Parser(make_context(), source).parse_module()


def compile_kernel(module, *argtypes) -> tuple[JitModule, Callable[..., None]]:
    """`@kernel` of `module` (loop level) lowered, JIT-compiled and wrapped in a ctypes function."""
    register_symbols()
    run_pipeline(module, TO_LLVM)
    module.verify()
    jit = JitModule(translate_to_llvm_ir(module))
    return jit, ctypes.CFUNCTYPE(None, *argtypes)(jit.function_address("kernel"))


def pointer(array: np.ndarray) -> ctypes.c_void_p:
    return ctypes.c_void_p(array.ctypes.data)


PTR, INDEX = ctypes.c_void_p, ctypes.c_int64


def _check_add(kernel, seed: int) -> None:
    """`kernel(a, b, c, n, m)` writes a + b into c at every pair of SIZES."""
    rng = np.random.default_rng(seed)
    for n in SIZES:
        for m in SIZES:
            a, b = rng.standard_normal((2, n, m), dtype=np.float32)
            c = np.zeros((n, m), np.float32)
            kernel(pointer(a), pointer(b), pointer(c), n, m)
            np.testing.assert_array_equal(c, a + b)


def test_elementwise_add_over_two_run_time_extents() -> None:
    _jit, kernel = compile_kernel(parse(ADD), PTR, PTR, PTR, INDEX, INDEX)
    _check_add(kernel, seed=0)


def test_row_sum_over_a_run_time_inner_extent() -> None:
    _jit, kernel = compile_kernel(parse(ROW_SUM), PTR, PTR, INDEX)
    rng = np.random.default_rng(1)
    for s in SIZES:
        a = rng.standard_normal((4, s), dtype=np.float32)
        out = np.zeros(4, np.float32)
        kernel(pointer(a), pointer(out), s)
        np.testing.assert_allclose(out, a.sum(axis=1, dtype=np.float64), rtol=1e-5, atol=1e-5)


@pytest.mark.parametrize("factor", [1, 4, 5])
def test_split_dynamic_loop_with_remainder_and_vectorized_inner_loop(factor: int) -> None:
    module = parse(ADD)
    run_pipeline(
        module,
        [
            f"loop-split{{kernel=kernel loop=i factor={factor}}}",
            "loop-split{kernel=kernel loop=j2 factor=4}",
            "loop-vectorize{kernel=kernel loop=j2_i}",
        ],
    )
    _jit, kernel = compile_kernel(module, PTR, PTR, PTR, INDEX, INDEX)
    _check_add(kernel, seed=2)


def test_split_of_a_split_dynamic_loop_with_lower_bound_and_step() -> None:
    source = SCALE_ROWS.replace('loop.for "i" %i = 0 to %n step 1', 'loop.for "i" %i = 1 to %n step 3')
    module = parse(source)
    run_pipeline(module, ["loop-split{kernel=kernel loop=i factor=2}", "loop-split{kernel=kernel loop=i_o factor=3}"])
    _jit, kernel = compile_kernel(module, PTR, PTR, INDEX)
    rng = np.random.default_rng(3)
    for n in (0, *SIZES):
        a = rng.standard_normal((max(n, 1), 8), dtype=np.float32)
        b = np.full((max(n, 1), 8), -7.0, np.float32)
        kernel(pointer(a), pointer(b), n)
        expected = np.full_like(b, -7.0)
        rows = np.arange(1, n, 3)
        expected[rows] = scale_rows(a)[rows]
        np.testing.assert_array_equal(b, expected)


@pytest.mark.parametrize("num_threads", [1, 3])
def test_parallel_dynamic_loop_split_into_chunks(num_threads: int) -> None:
    module = parse(SCALE_ROWS)
    run_pipeline(
        module,
        [
            "loop-split{kernel=kernel loop=i factor=3}",
            "loop-parallel{kernel=kernel loop=i_o}",
            "loop-parallel{kernel=kernel loop=i_i}",
            "loop-outline-parallel",
        ],
    )
    _jit, kernel = compile_kernel(module, PTR, PTR, INDEX, PTR)
    rng = np.random.default_rng(4)
    with ThreadPool(num_threads) as pool:
        for n in SIZES:
            a = rng.standard_normal((n, 8), dtype=np.float32)
            b = np.zeros((n, 8), np.float32)
            kernel(pointer(a), pointer(b), n, ctypes.c_void_p(pool.address))
            np.testing.assert_array_equal(b, scale_rows(a))


def test_parallel_loop_over_a_buffer_with_an_inner_run_time_extent() -> None:
    """The outlined body gets its own `loop.extents` (the buffer and extents travel in the context)."""
    module = parse(ADD)
    run_pipeline(module, ["loop-parallel{kernel=kernel loop=i}", "loop-parallel{kernel=kernel loop=i2}"])
    run_pipeline(module, "loop-outline-parallel")
    _jit, kernel = compile_kernel(module, PTR, PTR, PTR, INDEX, INDEX, PTR)
    rng = np.random.default_rng(5)
    with ThreadPool(2) as pool:
        for n in SIZES:
            for m in SIZES:
                a, b = rng.standard_normal((2, n, m), dtype=np.float32)
                c = np.zeros((n, m), np.float32)
                kernel(pointer(a), pointer(b), pointer(c), n, m, ctypes.c_void_p(pool.address))
                np.testing.assert_array_equal(c, a + b)
