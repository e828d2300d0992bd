"""Benchmark the native thread pool: dispatch latency, and the speed-up of parallel loops on 2 threads vs 1.

    python bench/bench_threadpool.py              # every table
    python bench/bench_threadpool.py --quick      # fewer repetitions

1. Dispatch latency: an empty `minimlc_parallel_for` (2 tasks) timed inside native code with `clock_gettime`
   around each call, median of 10k calls, for each pool variant (spin before sleeping); then the default pool on a
   job of 4096 empty tasks, the cost of claiming many tiny tasks (a GEMM's zeroing rows, a 784-row panel loop).
2. Kernels written as loop IR with a `parallel` outer loop, compiled through `loop-outline-parallel` and the rest of
   the pipeline once, then run on a 1-thread and a 2-thread pool (the pool is a run-time argument): a 20M-element
   `y = 2x + 1` (outer loop of 80 chunks) and a naive 512^3 matmul (parallel over rows). The same kernels with the
   loop marked `serial` give the cost of outlining itself. `cpu/wall` (process CPU seconds per wall second during
   the 2-thread runs) shows how much of two cores the run actually got: on a busy machine expect no speed-up.
"""

from __future__ import annotations

import argparse
import ctypes
import os
import statistics
import time
from collections.abc import Callable

import numpy as np

from minimlc.lowering.llvm.translate import translate_to_llvm_ir
from minimlc.lowering.pipeline import make_context, run_passes
from minimlc.runtime.jit import JitModule
from minimlc.runtime.threadpool import ThreadPool, native_pool, register_symbols
from minimlc.runtime.threadpool_ir import PoolOptions

DRIVER = """
%timespec = type { i64, i64 }
declare i32 @clock_gettime(i32, ptr)

define void @empty(ptr %ctx, i64 %task) {
  ret void
}

define internal i64 @now() {
  %ts = alloca %timespec
  %ignored = call i32 @clock_gettime(i32 1, ptr %ts)
  %seconds = load i64, ptr %ts
  %nanos_slot = getelementptr %timespec, ptr %ts, i32 0, i32 1
  %nanos = load i64, ptr %nanos_slot
  %scaled = mul i64 %seconds, 1000000000
  %total = add i64 %scaled, %nanos
  ret i64 %total
}

; times[i] = nanoseconds taken by parallel_for(pool, @empty, null, n_tasks), for i in [0, calls)
define void @drive(ptr %parallel_for, ptr %pool, i64 %n_tasks, i64 %calls, ptr %times) {
entry:
  br label %loop
loop:
  %i = phi i64 [ 0, %entry ], [ %next, %loop ]
  %start = call i64 @now()
  call void %parallel_for(ptr %pool, ptr @empty, ptr null, i64 %n_tasks)
  %end = call i64 @now()
  %elapsed = sub i64 %end, %start
  %slot = getelementptr i64, ptr %times, i64 %i
  store i64 %elapsed, ptr %slot
  %next = add i64 %i, 1
  %more = icmp slt i64 %next, %calls
  br i1 %more, label %loop, label %done
done:
  ret void
}
"""

MANY_TASKS = 4096
N = 20_000_000
CHUNKS = 80
ELEMENTWISE = f"""
func.func @kernel(%x: memref<{N}xf32> {{llvm.noalias}}, %y: memref<{N}xf32> {{llvm.noalias}}) {{
  %two = arith.constant 2.0 : f32
  %one = arith.constant 1.0 : f32
  loop.for "i_o" %i_o = 0 to {N} step {N // CHUNKS} KIND {{
    loop.for "i_i" %i_i = 0 to {N // CHUNKS} step 1 serial {{
      %i = arith.addi %i_o, %i_i : index
      %v = memref.load %x[%i] : memref<{N}xf32>
      %d = arith.mulf %v, %two : f32
      %r = arith.addf %d, %one : f32
      memref.store %r, %y[%i] : memref<{N}xf32>
    }}
  }}
  func.return
}}
"""

M = 512
MATMUL = f"""
func.func @kernel(%a: memref<{M}x{M}xf32> {{llvm.noalias}}, %b: memref<{M}x{M}xf32> {{llvm.noalias}},
                  %c: memref<{M}x{M}xf32> {{llvm.noalias}}) {{
  %zero = arith.constant 0.0 : f32
  loop.for "i" %i = 0 to {M} step 1 KIND {{
    loop.for "j" %j = 0 to {M} step 1 serial {{
      %acc = loop.alloc "local" : memref<f32>
      memref.store %zero, %acc[] : memref<f32>
      loop.for "k" %k = 0 to {M} step 1 serial {{
        %x = memref.load %a[%i, %k] : memref<{M}x{M}xf32>
        %w = memref.load %b[%k, %j] : memref<{M}x{M}xf32>
        %p = arith.mulf %x, %w fastmath<contract> : f32
        %s = memref.load %acc[] : memref<f32>
        %t = arith.addf %s, %p fastmath<contract> : f32
        memref.store %t, %acc[] : memref<f32>
      }}
      %r = memref.load %acc[] : memref<f32>
      memref.store %r, %c[%i, %j] : memref<{M}x{M}xf32>
    }}
  }}
  func.return
}}
"""

PASSES = ["loop-outline-parallel", "loop-to-scf", "convert-scf-to-cf", "convert-to-llvm", "reconcile-unrealized-casts"]


def compile_kernel(source: str) -> JitModule:
    """Parse loop IR and compile it through `loop-outline-parallel` and the rest of the pipeline."""
    from xdsl.parser import Parser

    ctx = make_context()
    module = Parser(ctx, source).parse_module()
    run_passes(module, PASSES, ctx)
    register_symbols()
    return JitModule(translate_to_llvm_ir(module))


def timed(call: Callable[[], object], runs: int) -> tuple[float, float]:
    """Median wall seconds of `runs` calls (after a warm-up), and the process's CPU seconds per wall second."""
    call()
    samples = []
    cpu_start, wall_start = time.process_time(), time.perf_counter()
    for _ in range(runs):
        start = time.perf_counter()
        call()
        samples.append(time.perf_counter() - start)
    return statistics.median(samples), (time.process_time() - cpu_start) / (time.perf_counter() - wall_start)


def dispatch_latency(calls: int) -> None:
    """Print the median and 90th percentile of an empty parallel_for per pool variant."""
    driver = JitModule(DRIVER)
    drive = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * 2, ctypes.c_int64, ctypes.c_int64, ctypes.c_void_p)(
        driver.function_address("drive")
    )
    print(f"empty parallel_for, 2 tasks, {calls} calls (ns)      median      p90")
    for spin in (0, 256, 2048, 16384, 1 << 15):
        options = PoolOptions(spin)
        parallel_for = native_pool(options).jit.function_address("minimlc_parallel_for")
        for threads in (1, 2):
            if threads == 1 and spin != 0:
                continue
            times = np.zeros(calls, np.int64)
            with ThreadPool(threads, options) as pool:
                drive(parallel_for, pool.address, 2, calls, times.ctypes.data)
            label = f"{threads} thread(s), spin {spin:5}"
            print(f"  {label:44} {np.median(times):8.0f} {np.percentile(times, 90):8.0f}")
    parallel_for = native_pool().jit.function_address("minimlc_parallel_for")
    for threads in (1, 2):
        times = np.zeros(calls, np.int64)
        with ThreadPool(threads) as pool:
            drive(parallel_for, pool.address, MANY_TASKS, calls, times.ctypes.data)
        label = f"{threads} thread(s), {MANY_TASKS} tasks, default spin"
        print(f"  {label:44} {np.median(times):8.0f} {np.percentile(times, 90):8.0f}")


def speedups(runs: int) -> None:
    """Print kernel times: serial loop, parallel loop on 1 thread, on 2 threads."""
    rng = np.random.default_rng(0)
    x = rng.standard_normal(N, dtype=np.float32)
    y = np.empty_like(x)
    a, b = (rng.standard_normal((M, M), dtype=np.float32) for _ in "ab")
    c = np.empty((M, M), np.float32)
    cases = {"elementwise 20M": (ELEMENTWISE, [x, y]), "matmul 512^3": (MATMUL, [a, b, c])}
    print(f"kernel (median of {runs}, ms)     serial loop   1 thread   2 threads   speed-up 2 vs 1   cpu/wall at 2")
    for name, (source, buffers) in cases.items():
        addresses = [buffer.ctypes.data for buffer in buffers]
        serial_jit = compile_kernel(source.replace("KIND", "serial"))
        serial = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * len(buffers))(serial_jit.function_address("kernel"))
        parallel_jit = compile_kernel(source.replace("KIND", "parallel"))
        parallel = ctypes.CFUNCTYPE(None, *[ctypes.c_void_p] * (len(buffers) + 1))(
            parallel_jit.function_address("kernel")
        )
        serial_time, _ = timed(lambda: serial(*addresses), runs)
        times, cpu_per_wall = {}, 0.0
        for threads in (1, 2):
            with ThreadPool(threads) as pool:
                times[threads], cpu_per_wall = timed(lambda pool=pool: parallel(*addresses, pool.address), runs)
        print(
            f"  {name:28} {serial_time * 1e3:10.2f} {times[1] * 1e3:10.2f} {times[2] * 1e3:11.2f}"
            f" {times[1] / times[2]:12.2f}x {cpu_per_wall:14.2f}"
        )


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--quick", action="store_true", help="fewer repetitions")
    args = parser.parse_args()
    print("load average before the run: {:.2f} {:.2f} {:.2f} (on {} cores)".format(*os.getloadavg(), os.cpu_count()))
    dispatch_latency(2_000 if args.quick else 10_000)
    speedups(3 if args.quick else 15)


if __name__ == "__main__":
    main()
