"""The `dynamic` schedule rule on kernels with loops of a run-time trip count: which kernels get which schedule, the
numbers of the scheduled code (lowered to LLVM, JIT-compiled, run at sizes 1, 7, 64 and 130, none a multiple of every
vector width, against numpy in float64; rtol = atol = 1e-5: float32 rounding of at most 300 products), and the
primitives that refuse a dynamic loop with a message naming the kernel and the loop."""

from __future__ import annotations

import ctypes
import random
from collections.abc import Callable

import numpy as np
import pytest
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser
from xdsl.utils.exceptions import DiagnosticException

from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.loop.analysis import find_kernel, loops_of
from minimlc.lowering.pipeline import make_context, run_passes
from minimlc.lowering.schedule.default_schedule import (
    apply_default_schedules,
    describe_spaces,
    kernel_space,
    schedule_kernel,
)
from minimlc.lowering.target import set_target, target_from_name
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import ThreadPool, register_symbols

SIZES = (1, 7, 64, 130)
LOWER = ["loop-outline-parallel", "loop-to-scf", "convert-scf-to-cf", "convert-to-llvm", "reconcile-unrealized-casts"]

# out[i, j] = x[i, j] + b[j] over n rows of 64 (inner loop static, a multiple of the vector width).
ROWS = """
func.func private @add_0(%in0: memref<?x64xf32> {llvm.noalias}, %in1: memref<64xf32> {llvm.noalias},
                         %out: memref<?x64xf32> {llvm.noalias}, %n: index) {
  %x = loop.extents %in0[%n] : memref<?x64xf32>
  %y = loop.extents %out[%n] : memref<?x64xf32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    loop.for "i1" %i1 = 0 to 64 step 1 serial {
      %0 = memref.load %x[%i0, %i1] : memref<?x64xf32>
      %1 = memref.load %in1[%i1] : memref<64xf32>
      %2 = arith.addf %0, %1 : f32
      memref.store %2, %y[%i0, %i1] : memref<?x64xf32>
    }
  }
  func.return
}
func.func @kernel(%a: memref<?x64xf32>, %b: memref<64xf32>, %c: memref<?x64xf32>, %n: index) {
  func.call @add_0(%a, %b, %c, %n) : (memref<?x64xf32>, memref<64xf32>, memref<?x64xf32>, index) -> ()
  func.return
}
"""

# out[i] = max(x[i], 0) * 2 over a run-time n: the innermost loop is dynamic.
VECTOR = """
func.func private @relu_0(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index) {
  %x = loop.extents %in0[%n] : memref<?xf32>
  %y = loop.extents %out[%n] : memref<?xf32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    %0 = memref.load %x[%i0] : memref<?xf32>
    %1 = arith.constant 0.000000e+00 : f32
    %2 = arith.maximumf %0, %1 : f32
    %3 = arith.addf %2, %2 : f32
    memref.store %3, %y[%i0] : memref<?xf32>
  }
  func.return
}
func.func @kernel(%a: memref<?xf32>, %c: memref<?xf32>, %n: index) {
  func.call @relu_0(%a, %c, %n) : (memref<?xf32>, memref<?xf32>, index) -> ()
  func.return
}
"""

# out[i, j] = sum_k a[i, k] * b[k, j]: n rows (M), 48 columns, depth 40.
GEMM = """
func.func private @matmul_0(%in0: memref<?x40xf32> {llvm.noalias}, %in1: memref<40x48xf32> {llvm.noalias},
                            %out: memref<?x48xf32> {llvm.noalias}, %n: index) {
  %a = loop.extents %in0[%n] : memref<?x40xf32>
  %c = loop.extents %out[%n] : memref<?x48xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    loop.for "i1" %i1 = 0 to 48 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k2" %k2 = 0 to 40 step 1 serial {
        %1 = memref.load %a[%i0, %k2] : memref<?x40xf32>
        %2 = memref.load %in1[%k2, %i1] : memref<40x48xf32>
        %3 = arith.mulf %1, %2 fastmath<contract> : f32
        %4 = memref.load %acc[] : memref<f32>
        %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
        memref.store %5, %acc[] : memref<f32>
      }
      %6 = memref.load %acc[] : memref<f32>
      memref.store %6, %c[%i0, %i1] : memref<?x48xf32>
    }
  }
  func.return
}
func.func @kernel(%a: memref<?x40xf32>, %b: memref<40x48xf32>, %c: memref<?x48xf32>, %n: index) {
  func.call @matmul_0(%a, %b, %c, %n) : (memref<?x40xf32>, memref<40x48xf32>, memref<?x48xf32>, index) -> ()
  func.return
}
"""

# Attention's two GEMMs over a run-time sequence length n: `Q @ K^T` (n x n columns) and `P @ V` (depth n).
GEMM_COLUMNS = """
func.func private @matmul_0(%in0: memref<?x40xf32> {llvm.noalias}, %in1: memref<40x?xf32> {llvm.noalias},
                            %out: memref<?x?xf32> {llvm.noalias}, %n: index) {
  %a = loop.extents %in0[%n] : memref<?x40xf32>
  %b = loop.extents %in1[%n] : memref<40x?xf32>
  %c = loop.extents %out[%n, %n] : memref<?x?xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    loop.for "i1" %i1 = 0 to %n step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k2" %k2 = 0 to 40 step 1 serial {
        %1 = memref.load %a[%i0, %k2] : memref<?x40xf32>
        %2 = memref.load %b[%k2, %i1] : memref<40x?xf32>
        %3 = arith.mulf %1, %2 fastmath<contract> : f32
        %4 = memref.load %acc[] : memref<f32>
        %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
        memref.store %5, %acc[] : memref<f32>
      }
      %6 = memref.load %acc[] : memref<f32>
      memref.store %6, %c[%i0, %i1] : memref<?x?xf32>
    }
  }
  func.return
}
func.func @kernel(%a: memref<?x40xf32>, %b: memref<40x?xf32>, %c: memref<?x?xf32>, %n: index) {
  func.call @matmul_0(%a, %b, %c, %n) : (memref<?x40xf32>, memref<40x?xf32>, memref<?x?xf32>, index) -> ()
  func.return
}
"""

GEMM_DEPTH = """
func.func private @matmul_0(%in0: memref<?x?xf32> {llvm.noalias}, %in1: memref<?x48xf32> {llvm.noalias},
                            %out: memref<?x48xf32> {llvm.noalias}, %n: index) {
  %a = loop.extents %in0[%n, %n] : memref<?x?xf32>
  %b = loop.extents %in1[%n] : memref<?x48xf32>
  %c = loop.extents %out[%n] : memref<?x48xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    loop.for "i1" %i1 = 0 to 48 step 1 serial {
      %0 = arith.constant 0.000000e+00 : f32
      memref.store %0, %acc[] : memref<f32>
      loop.for "k2" %k2 = 0 to %n step 1 serial {
        %1 = memref.load %a[%i0, %k2] : memref<?x?xf32>
        %2 = memref.load %b[%k2, %i1] : memref<?x48xf32>
        %3 = arith.mulf %1, %2 fastmath<contract> : f32
        %4 = memref.load %acc[] : memref<f32>
        %5 = arith.addf %4, %3 fastmath<reassoc,contract> : f32
        memref.store %5, %acc[] : memref<f32>
      }
      %6 = memref.load %acc[] : memref<f32>
      memref.store %6, %c[%i0, %i1] : memref<?x48xf32>
    }
  }
  func.return
}
func.func @kernel(%a: memref<?x?xf32>, %b: memref<?x48xf32>, %c: memref<?x48xf32>, %n: index) {
  func.call @matmul_0(%a, %b, %c, %n) : (memref<?x?xf32>, memref<?x48xf32>, memref<?x48xf32>, index) -> ()
  func.return
}
"""

# out[j] = sum_i x[i, j] over n rows of 20 columns (a static output loop that is no multiple of 8).
COLUMN_SUM = """
func.func private @sum_0(%in0: memref<?x20xf32> {llvm.noalias}, %out: memref<20xf32> {llvm.noalias}, %n: index) {
  %x = loop.extents %in0[%n] : memref<?x20xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i0" %i0 = 0 to 20 step 1 serial {
    %0 = arith.constant 0.000000e+00 : f32
    memref.store %0, %acc[] : memref<f32>
    loop.for "k1" %k1 = 0 to %n step 1 serial {
      %1 = memref.load %x[%k1, %i0] : memref<?x20xf32>
      %2 = memref.load %acc[] : memref<f32>
      %3 = arith.addf %2, %1 fastmath<reassoc,contract> : f32
      memref.store %3, %acc[] : memref<f32>
    }
    %4 = memref.load %acc[] : memref<f32>
    memref.store %4, %out[%i0] : memref<20xf32>
  }
  func.return
}
func.func @kernel(%a: memref<?x20xf32>, %c: memref<20xf32>, %n: index) {
  func.call @sum_0(%a, %c, %n) : (memref<?x20xf32>, memref<20xf32>, index) -> ()
  func.return
}
"""

# out[i] = sum_k x[i, k] over n rows of n columns: the reduction is the innermost loop, nothing to vectorize.
ROW_SUM = """
func.func private @rowsum_0(%in0: memref<?x?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index) {
  %x = loop.extents %in0[%n, %n] : memref<?x?xf32>
  %y = loop.extents %out[%n] : memref<?xf32>
  %acc = loop.alloc "local" : memref<f32>
  loop.for "i0" %i0 = 0 to %n step 1 serial {
    %0 = arith.constant 0.000000e+00 : f32
    memref.store %0, %acc[] : memref<f32>
    loop.for "k1" %k1 = 0 to %n step 1 serial {
      %1 = memref.load %x[%i0, %k1] : memref<?x?xf32>
      %2 = memref.load %acc[] : memref<f32>
      %3 = arith.addf %2, %1 fastmath<reassoc,contract> : f32
      memref.store %3, %acc[] : memref<f32>
    }
    %4 = memref.load %acc[] : memref<f32>
    memref.store %4, %y[%i0] : memref<?xf32>
  }
  func.return
}
func.func @kernel(%a: memref<?x?xf32>, %c: memref<?xf32>, %n: index) {
  func.call @rowsum_0(%a, %c, %n) : (memref<?x?xf32>, memref<?xf32>, index) -> ()
  func.return
}
"""

# out[j] += x[k, j] over n x n: the outermost loop accumulates into the output (written through loop.extents), so
# its iterations are not independent: no parallel loop.
ACCUMULATE = """
func.func private @acc_0(%in0: memref<?x?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n: index) {
  %x = loop.extents %in0[%n, %n] : memref<?x?xf32>
  %y = loop.extents %out[%n] : memref<?xf32>
  loop.for "k0" %k0 = 0 to %n step 1 serial {
    loop.for "i1" %i1 = 0 to %n step 1 serial {
      %0 = memref.load %x[%k0, %i1] : memref<?x?xf32>
      %1 = memref.load %y[%i1] : memref<?xf32>
      %2 = arith.addf %1, %0 : f32
      memref.store %2, %y[%i1] : memref<?xf32>
    }
  }
  func.return
}
func.func @kernel(%a: memref<?x?xf32>, %c: memref<?xf32>, %n: index) {
  func.call @acc_0(%a, %c, %n) : (memref<?x?xf32>, memref<?xf32>, index) -> ()
  func.return
}
"""


def _rows(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x, b = rng.standard_normal((n, 64), dtype=np.float32), rng.standard_normal(64, dtype=np.float32)
    return [x, b, np.zeros((n, 64), np.float32)], x.astype(np.float64) + b


def _rows_tail(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x, b = rng.standard_normal((n, 20), dtype=np.float32), rng.standard_normal(20, dtype=np.float32)
    return [x, b, np.zeros((n, 20), np.float32)], x.astype(np.float64) + b


def _vector(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x = rng.standard_normal(n, dtype=np.float32)
    return [x, np.zeros(n, np.float32)], 2 * np.maximum(x.astype(np.float64), 0)


def _gemm(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    a, b = rng.standard_normal((n, 40), dtype=np.float32), rng.standard_normal((40, 48), dtype=np.float32)
    return [a, b, np.full((n, 48), np.nan, np.float32)], a.astype(np.float64) @ b.astype(np.float64)


def _gemm_of(depth: int, columns: int) -> Callable[[np.random.Generator, int], tuple[list[np.ndarray], np.ndarray]]:
    def make(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
        a = rng.standard_normal((n, depth), dtype=np.float32)
        b = rng.standard_normal((depth, columns), dtype=np.float32)
        return [a, b, np.full((n, columns), np.nan, np.float32)], a.astype(np.float64) @ b.astype(np.float64)

    return make


def _gemm_columns(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    a, b = rng.standard_normal((n, 40), dtype=np.float32), rng.standard_normal((40, n), dtype=np.float32)
    return [a, b, np.full((n, n), np.nan, np.float32)], a.astype(np.float64) @ b.astype(np.float64)


def _gemm_depth(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    a, b = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal((n, 48), dtype=np.float32)
    return [a, b, np.full((n, 48), np.nan, np.float32)], a.astype(np.float64) @ b.astype(np.float64)


def _column_sum(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x = rng.standard_normal((n, 20), dtype=np.float32)
    return [x, np.full(20, np.nan, np.float32)], x.astype(np.float64).sum(axis=0)


def _row_sum(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x = rng.standard_normal((n, n), dtype=np.float32)
    return [x, np.full(n, np.nan, np.float32)], x.astype(np.float64).sum(axis=1)


def _accumulate(rng: np.random.Generator, n: int) -> tuple[list[np.ndarray], np.ndarray]:
    x, y = rng.standard_normal((n, n), dtype=np.float32), rng.standard_normal(n, dtype=np.float32)
    return [x, y.copy()], y.astype(np.float64) + x.astype(np.float64).sum(axis=0)


Case = tuple[str, str, Callable[[np.random.Generator, int], tuple[list[np.ndarray], np.ndarray]]]
CASES: dict[str, Case] = {
    "elementwise-rows": (ROWS, "add_0", _rows),
    "elementwise-rows-static-tail": (ROWS.replace("64", "20"), "add_0", _rows_tail),
    "elementwise-dynamic-innermost": (VECTOR, "relu_0", _vector),
    "gemm-dynamic-rows": (GEMM, "matmul_0", _gemm),
    # 6,560 columns: one row is GEMM_PANELS_MIN_WORK multiply-adds or more, so the column panels are the tasks.
    "gemm-dynamic-rows-panels": (GEMM.replace("48", "6560"), "matmul_0", _gemm_of(40, 6560)),
    "gemm-dynamic-rows-depth-blocks": (GEMM.replace("40", "300"), "matmul_0", _gemm_of(300, 48)),
    "gemm-dynamic-columns": (GEMM_COLUMNS, "matmul_0", _gemm_columns),
    "gemm-dynamic-depth": (GEMM_DEPTH, "matmul_0", _gemm_depth),
    "reduction-dynamic-extent": (COLUMN_SUM, "sum_0", _column_sum),
    "reduction-innermost": (ROW_SUM, "rowsum_0", _row_sum),
    "accumulate-outermost": (ACCUMULATE, "acc_0", _accumulate),
}

TRACES = {
    "elementwise-rows": [
        "loop-split{kernel=add_0 loop=i1 factor=8}",
        "loop-vectorize{kernel=add_0 loop=i1_i}",
        "loop-split{kernel=add_0 loop=i0 factor=8}",
        "loop-parallel{kernel=add_0 loop=i0_o}",
    ],
    "elementwise-rows-static-tail": [
        "loop-split{kernel=add_0 loop=i1 factor=8}",
        "loop-vectorize{kernel=add_0 loop=i1_i}",
        "loop-split{kernel=add_0 loop=i0 factor=26}",
        "loop-parallel{kernel=add_0 loop=i0_o}",
    ],
    "elementwise-dynamic-innermost": [
        "loop-split{kernel=relu_0 loop=i0 factor=8}",
        "loop-vectorize{kernel=relu_0 loop=i0_i}",
        "loop-split{kernel=relu_0 loop=i0_o factor=64}",
        "loop-parallel{kernel=relu_0 loop=i0_o_o}",
    ],
    "gemm-dynamic-rows": [
        "loop-decompose-reduction{kernel=matmul_0}",
        "loop-split{kernel=matmul_0 loop=i1_init factor=16}",
        "loop-vectorize{kernel=matmul_0 loop=i1_init_i}",
        "loop-split{kernel=matmul_0 loop=i1 factor=16}",
        "loop-split{kernel=matmul_0 loop=k2 factor=40}",
        "loop-split{kernel=matmul_0 loop=i0 factor=6}",
        "loop-reorder{kernel=matmul_0 order=i0_o,k2_o,i1_o,k2_i,i0_i,i1_i}",
        "loop-unroll{kernel=matmul_0 loop=i0_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o fill=true}",
        "loop-reorder{kernel=matmul_0 order=i0_t,i1_o_in_i0_t,k2_o_in_i0_t,k2_i_in_i0_t,i1_i_in_i0_t}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t fill=true}",
        "loop-parallel{kernel=matmul_0 loop=i0_o}",
    ],
    "gemm-dynamic-rows-panels": [
        "loop-decompose-reduction{kernel=matmul_0}",
        "loop-split{kernel=matmul_0 loop=i1_init factor=16}",
        "loop-vectorize{kernel=matmul_0 loop=i1_init_i}",
        "loop-split{kernel=matmul_0 loop=i1 factor=16}",
        "loop-split{kernel=matmul_0 loop=k2 factor=40}",
        "loop-reorder{kernel=matmul_0 order=k2_o,i1_o,i0,k2_i,i1_i}",
        "loop-split{kernel=matmul_0 loop=i0 factor=6}",
        "loop-reorder{kernel=matmul_0 order=i0_o,k2_i,i0_i,i1_i}",
        "loop-unroll{kernel=matmul_0 loop=i0_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i}",
        "loop-cache-write{kernel=matmul_0 loop=i0_o fill=true}",
        "loop-split{kernel=matmul_0 loop=i0_t factor=2}",
        "loop-reorder{kernel=matmul_0 order=i0_t_o,k2_i_in_i0_t,i0_t_i,i1_i_in_i0_t}",
        "loop-unroll{kernel=matmul_0 loop=i0_t_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t}",
        "loop-cache-write{kernel=matmul_0 loop=i0_t_o accumulate=true}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t_in_i0_t_t}",
        "loop-cache-write{kernel=matmul_0 loop=i0_t_t accumulate=true}",
        "loop-split{kernel=matmul_0 loop=i1_o factor=10}",
        "loop-parallel{kernel=matmul_0 loop=i1_o_o}",
        "loop-parallel{kernel=matmul_0 loop=i0_init}",
    ],
    "gemm-dynamic-rows-depth-blocks": [
        "loop-decompose-reduction{kernel=matmul_0}",
        "loop-split{kernel=matmul_0 loop=i1_init factor=16}",
        "loop-vectorize{kernel=matmul_0 loop=i1_init_i}",
        "loop-split{kernel=matmul_0 loop=i1 factor=16}",
        "loop-split{kernel=matmul_0 loop=k2 factor=150}",
        "loop-split{kernel=matmul_0 loop=i0 factor=6}",
        "loop-reorder{kernel=matmul_0 order=i0_o,k2_o,i1_o,k2_i,i0_i,i1_i}",
        "loop-unroll{kernel=matmul_0 loop=i0_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o accumulate=true}",
        "loop-reorder{kernel=matmul_0 order=i0_t,k2_o_in_i0_t,i1_o_in_i0_t,k2_i_in_i0_t,i1_i_in_i0_t}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t accumulate=true}",
        "loop-parallel{kernel=matmul_0 loop=i0_o}",
        "loop-split{kernel=matmul_0 loop=i0_init factor=11}",
        "loop-parallel{kernel=matmul_0 loop=i0_init_o}",
    ],
    "gemm-dynamic-columns": [
        "loop-decompose-reduction{kernel=matmul_0}",
        "loop-split{kernel=matmul_0 loop=i1_init factor=16}",
        "loop-vectorize{kernel=matmul_0 loop=i1_init_i}",
        "loop-split{kernel=matmul_0 loop=i1 factor=16}",
        "loop-split{kernel=matmul_0 loop=i0 factor=6}",
        "loop-distribute{kernel=matmul_0 loop=i0_i}",
        "loop-reorder{kernel=matmul_0 order=i1_o,k2,i0_i,i1_i}",
        "loop-unroll{kernel=matmul_0 loop=i0_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o fill=true}",
        "loop-reorder{kernel=matmul_0 order=i1_t,k2_in_i1_t,i0_i_d1}",
        "loop-unroll{kernel=matmul_0 loop=i0_i_d1}",
        "loop-cache-write{kernel=matmul_0 loop=i1_t fill=true}",
        "loop-reorder{kernel=matmul_0 order=i1_o_in_i0_t,k2_in_i0_t,i1_i_in_i0_t}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t fill=true}",
        "loop-cache-write{kernel=matmul_0 loop=i1_t_in_i0_t fill=true}",
        "loop-parallel{kernel=matmul_0 loop=i0_o}",
    ],
    "gemm-dynamic-depth": [
        "loop-decompose-reduction{kernel=matmul_0}",
        "loop-split{kernel=matmul_0 loop=i1_init factor=16}",
        "loop-vectorize{kernel=matmul_0 loop=i1_init_i}",
        "loop-split{kernel=matmul_0 loop=i1 factor=16}",
        "loop-split{kernel=matmul_0 loop=i0 factor=6}",
        "loop-reorder{kernel=matmul_0 order=i0_o,i1_o,k2,i0_i,i1_i}",
        "loop-unroll{kernel=matmul_0 loop=i0_i}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o fill=true}",
        "loop-reorder{kernel=matmul_0 order=i0_t,i1_o_in_i0_t,k2_in_i0_t,i1_i_in_i0_t}",
        "loop-vectorize{kernel=matmul_0 loop=i1_i_in_i0_t}",
        "loop-cache-write{kernel=matmul_0 loop=i1_o_in_i0_t fill=true}",
        "loop-parallel{kernel=matmul_0 loop=i0_o}",
    ],
    "reduction-dynamic-extent": [
        "loop-decompose-reduction{kernel=sum_0}",
        "loop-split{kernel=sum_0 loop=i0_init factor=8}",
        "loop-vectorize{kernel=sum_0 loop=i0_init_i}",
        "loop-split{kernel=sum_0 loop=i0 factor=8}",
        "loop-reorder{kernel=sum_0 order=i0_o,k1,i0_i}",
        "loop-vectorize{kernel=sum_0 loop=i0_i}",
        "loop-cache-write{kernel=sum_0 loop=i0_o accumulate=true}",
        "loop-parallel{kernel=sum_0 loop=i0_t}",
    ],
    "reduction-innermost": ["loop-parallel{kernel=rowsum_0 loop=i0}"],
    "accumulate-outermost": ["loop-split{kernel=acc_0 loop=i1 factor=8}", "loop-vectorize{kernel=acc_0 loop=i1_i}"],
}


def parse(source: str) -> ModuleOp:
    module = Parser(make_context(), source).parse_module()
    set_target(module, "x86-64-v3")
    return module


def schedule(source: str) -> tuple[ModuleOp, list[str]]:
    """The module of `source` after default-schedule, and the passes applied to its one kernel."""
    module = parse(source)
    trace = apply_default_schedules(make_context(), module)
    module.verify()
    return module, [step for _, steps in trace for step in steps]


def run(module: ModuleOp, buffers: list[np.ndarray], n: int) -> None:
    """Lower `module` to LLVM, JIT it and call `@kernel` with the buffers, `n` and a two-thread pool."""
    run_passes(module, LOWER[:1], make_context())
    entry = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "kernel")
    pooled = len(entry.function_type.inputs) > len(buffers) + 1  # loop-outline-parallel added the pool
    run_passes(module, LOWER[1:], make_context())
    register_symbols()
    jit = JitModule(translate_to_llvm_ir(module))
    arguments = [ctypes.c_void_p] * len(buffers) + [ctypes.c_int64] + [ctypes.c_void_p] * pooled
    kernel = ctypes.CFUNCTYPE(None, *arguments)(jit.function_address("kernel"))
    with ThreadPool(2) as pool:
        kernel(*(buffer.ctypes.data for buffer in buffers), n, *([pool.address] if pooled else []))


@pytest.mark.parametrize("case", sorted(CASES))
def test_default_schedule_of_each_kernel_kind(case: str) -> None:
    source, _, _ = CASES[case]
    _, trace = schedule(source)
    assert trace == TRACES[case]


@pytest.mark.parametrize("n", SIZES)
@pytest.mark.parametrize("case", sorted(CASES))
def test_scheduled_kernel_matches_numpy(case: str, n: int) -> None:
    source, _, make = CASES[case]
    buffers, expected = make(np.random.default_rng(n), n)
    module, _ = schedule(source)
    run(module, buffers, n)
    np.testing.assert_allclose(buffers[-1], expected, rtol=1e-5, atol=1e-5)


def test_gemm_tiles_that_hold_the_whole_depth_drop_the_zeroing_nest() -> None:
    """Tiles that start at zero and are stored (`fill=true`) cover the output once (main tiles and remainders), so
    the init nest goes; with the depth in blocks the tiles add to the zeroed output."""
    zeroed = {
        "gemm-dynamic-rows": False,
        "gemm-dynamic-rows-panels": True,  # the remainder's tiles of 2 rows and 1 add to the zeroed output
        "gemm-dynamic-depth": False,
        "gemm-dynamic-columns": False,
        "gemm-dynamic-rows-depth-blocks": True,
    }
    for case, expected in zeroed.items():
        module, _ = schedule(CASES[case][0])
        names = [lp.loop_name.data for lp in loops_of(module)]
        assert any(name.startswith("i0_init") for name in names) == expected, case


def test_knobs_that_depend_on_a_run_time_extent_say_so() -> None:
    spaces = {space["kernel"]: space for source, *_ in CASES.values() for space in describe_spaces(parse(source))}
    assert {space["kernel"]: space["rule"] for space in spaces.values()} == {
        "add_0": "dynamic",
        "relu_0": "dynamic",
        "matmul_0": "dynamic",
        "sum_0": "dynamic",
        "rowsum_0": "dynamic",
        "acc_0": "dynamic",
    }
    knobs = {name: {knob["name"]: knob for knob in space["knobs"]} for name, space in spaces.items()}
    assert knobs["relu_0"]["width"]["depends_on"] == "the run-time trip count of loop 'i0'"
    assert "depends_on" not in knobs["add_0"]["width"]  # its innermost loop is static
    assert knobs["matmul_0"]["mr"]["depends_on"].startswith("the run-time trip count of loop 'i0': a remainder")
    assert "depends_on" not in knobs["matmul_0"]["nr"]
    assert [knob["name"] for knob in spaces["rowsum_0"]["knobs"]] == ["parallel", "tasks", "grain"]


REFUSALS = {
    "loop-vectorize{kernel=relu_0 loop=i0}": (
        "loop-vectorize: loop 'i0' of kernel 'relu_0' runs a run-time number of iterations; split it by the vector "
        "width first"
    ),
    "loop-unroll{kernel=relu_0 loop=i0}": "loop-unroll: loop 'i0' of kernel 'relu_0' runs a run-time number",
    "loop-partition{kernel=relu_0 loop=i0 points=4}": (
        "loop-partition: loop 'i0' of kernel 'relu_0' runs a run-time number of iterations"
    ),
}


@pytest.mark.parametrize("step", sorted(REFUSALS))
def test_primitives_refuse_a_dynamic_loop(step: str) -> None:
    module = parse(VECTOR)
    with pytest.raises(DiagnosticException, match=REFUSALS[step]):
        run_passes(module, [step], make_context())


def test_cache_and_prefetch_refuse_a_run_time_extent() -> None:
    module = parse(COLUMN_SUM)
    steps = ["loop-decompose-reduction{kernel=sum_0}", "loop-reorder{kernel=sum_0 order=k1,i0}"]
    run_passes(module, steps, make_context())
    with pytest.raises(DiagnosticException, match=r"loop 'k1' of kernel 'sum_0'.*fill=true needs the whole reduction"):
        run_passes(module.clone(), ["loop-cache-write{kernel=sum_0 loop=k1 fill=true}"], make_context())
    module = parse(ROW_SUM)
    steps = ["loop-decompose-reduction{kernel=rowsum_0}", "loop-reorder{kernel=rowsum_0 order=k1,i0}"]
    run_passes(module, steps, make_context())
    with pytest.raises(DiagnosticException, match="the tile is indexed by loop 'i0', which runs a run-time number"):
        run_passes(module, ["loop-cache-write{kernel=rowsum_0 loop=k1 accumulate=true}"], make_context())
    module = parse(LAST_OF_PREFIX)
    with pytest.raises(DiagnosticException, match="loop 'j' inside it runs a run-time number of iterations"):
        run_passes(module, ["loop-cache-read{kernel=last_0 loop=i operand=0}"], make_context())
    with pytest.raises(DiagnosticException, match="moves with loop 'j' inside loop 'i', which runs a run-time number"):
        run_passes(module, ["loop-prefetch{kernel=last_0 loop=i operand=0}"], make_context())


# out[i] = x[n - 1] for 8 rows: a static buffer read at a loop of a run-time trip count (for the refusals only).
LAST_OF_PREFIX = """
func.func private @last_0(%in0: memref<64xf32>, %out: memref<8xf32>, %n: index) {
  loop.for "i" %i = 0 to 8 step 1 serial {
    loop.for "j" %j = 0 to %n step 1 serial {
      %0 = memref.load %in0[%j] : memref<64xf32>
      memref.store %0, %out[%i] : memref<8xf32>
    }
  }
  func.return
}
"""


def test_fuse_needs_the_same_run_time_bound() -> None:
    source = VECTOR.replace(
        "  func.return\n}\nfunc.func @kernel",
        '  loop.for "j0" %j0 = 0 to %m step 1 serial {\n'
        "    %5 = memref.load %y[%j0] : memref<?xf32>\n"
        "    memref.store %5, %y[%j0] : memref<?xf32>\n"
        "  }\n  func.return\n}\nfunc.func @kernel",
        1,
    )
    same = parse(source.replace("%m", "%n"))
    run_passes(same, ["loop-fuse{kernel=relu_0 first=i0 second=j0}"], make_context())
    other = parse(source.replace("%y = loop.extents", "%m = arith.addi %n, %n : index\n  %y = loop.extents"))
    with pytest.raises(DiagnosticException, match=r"their bounds differ \(\(0, %n, 1\) and \(0, %m, 1\)\)"):
        run_passes(other, ["loop-fuse{kernel=relu_0 first=i0 second=j0}"], make_context())


@pytest.mark.parametrize(
    "case",
    [
        "elementwise-dynamic-innermost",
        "gemm-dynamic-rows",
        "gemm-dynamic-columns",
        "gemm-dynamic-depth",
        "reduction-dynamic-extent",
    ],
)
def test_every_sampled_config_keeps_the_numbers(case: str) -> None:
    """Configs drawn from the space (what the tuner tries) apply strictly (none is dropped) and compute the same."""
    source, name, make = CASES[case]
    space = kernel_space(parse(source), find_kernel(parse(source), "test", name), target_from_name("x86-64-v3"))
    assert space is not None
    rng = random.Random(0)
    for config in [space.space.sample(rng) for _ in range(6)]:
        for n in (7, 130):
            module = parse(source)
            assert schedule_kernel(make_context(), module, space, config, strict=True) is not None, config
            buffers, expected = make(np.random.default_rng(n), n)
            run(module, buffers, n)
            np.testing.assert_allclose(buffers[-1], expected, rtol=1e-5, atol=1e-5, err_msg=str(config))
