"""This machine's one-core fp32 peak (a JIT-compiled loop of independent vector FMAs), its bfloat16 dot product's
(the same loop of `vdpbf16ps` / `bfdot`) and its memory bandwidth (a JIT-compiled vector sum streaming a buffer larger
than the caches).

    fma_peak_gflops()        # e.g. 116.2 on a Zen 4 core (AVX-512, 16 lanes), 39.8 on a Zen 2 one (AVX2, 8 lanes)
    dot_bf16_peak_gflops()   # e.g. 234 on a Zen 4 core: 4 FLOPs a lane (two products and their sums) at the FMA's rate
    memory_bandwidth_gbs(2)  # GB/s that 2 threads read, each summing its slice of 256 MiB of float32

The loop is LLVM IR built here and compiled by minimlc's JIT (host CPU, O3): one `llvm.fma.v<lanes>f32` per
accumulator per iteration, with as many independent accumulators as half the vector registers, so the FMA units'
latency is hidden and nothing but their throughput bounds the loop. It times the calling thread's CPU time (not wall
time) and keeps the best of several repeats: a peak is what the core can do, and on a machine other processes load,
wall time would count the slices they take. The profiler's "% peak" column and headroom line and the tuner's task
priorities divide by it (`minimlc run --profile`, `minimlc tune`); `bench/machine_peak.py` prints it beside numpy's
sgemm. The bandwidth is the roof's slope in `minimlc run --profile --plot` and the decode bound of
`bench/bench_generate.py`: Python threads call the sum on their slices at once (ctypes releases the GIL), the wall
time of the slowest bounds the read.
"""

from __future__ import annotations

import ctypes
import threading
import time
from collections.abc import Callable

import numpy as np

from minimlc.lowering.target import target_from_name
from minimlc.runtime.jit import JitModule

FMA_FUNCTION = "fma_peak"
STREAM_FUNCTION = "stream_sum"
STREAM_ACCUMULATORS = 4
"""Independent vector sums in the streaming loop: enough that the adds' latency never bounds it."""


def fma_loop_ir(lanes: int, accumulators: int) -> str:
    """`void fma_peak(ptr state, i64 iterations)`: acc_k = fma(acc_k, m, c), `iterations` >= 1 times.

    `state` holds vectors m, c, then the accumulators' initial values; the final accumulators are stored back, so
    the loop cannot be folded away.
    """
    vector = f"<{lanes} x float>"
    return _accumulating_loop_ir(lanes, accumulators, vector, f"@llvm.fma.v{lanes}f32")


def dot_bf16_loop_ir(lanes: int, accumulators: int, intrinsic: str) -> str:
    """`void fma_peak(ptr state, i64 iterations)` as `fma_loop_ir`'s, each step the bfloat16 pair dot product
    `intrinsic` (`dot_bf16.bf16_intrinsic`) of `lanes` float32 lanes: acc_k = acc_k + m.c over each lane's pair."""
    return _accumulating_loop_ir(lanes, accumulators, f"<{2 * lanes} x bfloat>", f"@{intrinsic}")


def _accumulating_loop_ir(lanes: int, accumulators: int, operand: str, step: str) -> str:
    """The loop of `fma_loop_ir`: `acc_k = step(acc_k, m, c)` with m and c of type `operand`."""
    vector = f"<{lanes} x float>"

    def load(index: int, name: str, kind: str = vector) -> list[str]:
        return [
            f"  %{name}.ptr = getelementptr {vector}, ptr %state, i64 {index}",
            f"  %{name} = load {kind}, ptr %{name}.ptr, align 4",
        ]

    entry = load(0, "m", operand) + load(1, "c", operand)
    phis, body, stores = [], [], []
    for k in range(accumulators):
        entry += load(2 + k, f"init{k}")
        phis.append(f"  %acc{k} = phi {vector} [ %init{k}, %entry ], [ %next{k}, %loop ]")
        body.append(f"  %next{k} = call {vector} {step}({vector} %acc{k}, {operand} %m, {operand} %c)")
        stores.append(f"  store {vector} %next{k}, ptr %init{k}.ptr, align 4")
    return "\n".join(
        [
            f"declare {vector} {step}({vector}, {operand}, {operand})",
            "",
            f"define void @{FMA_FUNCTION}(ptr %state, i64 %iterations) {{",
            "entry:",
            *entry,
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]",
            *phis,
            *body,
            "  %i.next = add i64 %i, 1",
            "  %done = icmp uge i64 %i.next, %iterations",
            "  br i1 %done, label %exit, label %loop",
            "exit:",
            *stores,
            "  ret void",
            "}",
        ]
    )


def best_cpu_seconds(call: Callable[[], object], repeats: int) -> float:
    """The least CPU time (of this thread) any of `repeats` calls of `call()` took."""
    best = float("inf")
    for _ in range(repeats):
        start = time.thread_time()
        call()
        best = min(best, time.thread_time() - start)
    return best


def fma_peak_gflops(seconds_per_repeat: float = 0.05, repeats: int = 7) -> float:
    """One core's fp32 GFLOP/s in the FMA loop (2 FLOPs per lane per FMA), best of `repeats` of about
    `seconds_per_repeat` each."""
    info = target_from_name("host")
    lanes, accumulators = info.vector_lanes, info.vector_registers // 2
    state = np.empty((2 + accumulators, lanes), dtype=np.float32)
    state[0], state[1], state[2:] = 0.999, 0.001, 1.0  # converges to 1.0: no overflow, no denormals
    return _loop_gflops(fma_loop_ir(lanes, accumulators), state, 2 * lanes * accumulators, seconds_per_repeat, repeats)


def dot_bf16_peak_gflops(seconds_per_repeat: float = 0.05, repeats: int = 7) -> float:
    """One core's GFLOP/s in the loop of its bfloat16 pair dot product (4 FLOPs per lane per instruction: two
    products and their sums, as a GEMM's 2*M*N*K counts them), best of `repeats` of about `seconds_per_repeat` each;
    ValueError on a host without one."""
    from minimlc.lowering.llvm.dot_bf16 import bf16_intrinsic

    info = target_from_name("host")
    if not info.dot_bf16_bits:
        raise ValueError(f"this CPU ({info.cpu}) has no bfloat16 dot product")
    lanes, accumulators = info.dot_bf16_bits // 32, info.vector_registers // 2
    state = np.zeros((2 + accumulators, lanes), dtype=np.float32)  # m.c = 0: the sums stay 0, no overflow
    ir = dot_bf16_loop_ir(lanes, accumulators, bf16_intrinsic(info, lanes))
    return _loop_gflops(ir, state, 4 * lanes * accumulators, seconds_per_repeat, repeats)


def host_dot_bf16_peak_gflops() -> float | None:
    """`dot_bf16_peak_gflops()`, or None on a host without a bfloat16 dot product (bfloat16 products then count at
    the FMA peak: a Ray cluster's workers may have one the host lacks; their room is underestimated, never
    overestimated)."""
    return dot_bf16_peak_gflops() if target_from_name("host").dot_bf16_bits else None


def seconds_at_peaks(flops: int, bf16_flops: int, peak_gflops: float, bf16_peak_gflops: float | None = None) -> float:
    """Seconds `flops` take at the peaks: the `bf16_flops` of them that bfloat16 dot products do at
    `bf16_peak_gflops` (the FMA's where None), the rest at `peak_gflops`."""
    bf16 = bf16_peak_gflops or peak_gflops
    return (flops - bf16_flops) / (peak_gflops * 1e9) + bf16_flops / (bf16 * 1e9)


def _loop_gflops(
    ir: str, state: np.ndarray, flops_per_iteration: int, seconds_per_repeat: float, repeats: int
) -> float:
    """GFLOP/s of the loop `ir` (`fma_peak(state, iterations)`), timed as `fma_peak_gflops` says."""
    jit = JitModule(ir)
    run = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64)(jit.function_address(FMA_FUNCTION))
    address = state.ctypes.data
    iterations = 1000
    while (elapsed := best_cpu_seconds(lambda: run(address, iterations), 1)) < seconds_per_repeat / 4:
        iterations *= 4
    iterations = max(1, int(iterations * seconds_per_repeat / elapsed))
    seconds = best_cpu_seconds(lambda: run(address, iterations), repeats)
    return flops_per_iteration * iterations / seconds / 1e9


def stream_sum_ir(lanes: int) -> str:
    """`void stream_sum(ptr data, i64 groups, ptr out)`: the float32 sum of `groups` >= 1 groups of
    `STREAM_ACCUMULATORS` vectors of `lanes` at `data`, into one vector at `out` (lane-wise)."""
    vector = f"<{lanes} x float>"
    phis, body = [], []
    for k in range(STREAM_ACCUMULATORS):
        phis.append(f"  %acc{k} = phi {vector} [ zeroinitializer, %entry ], [ %next{k}, %loop ]")
        body += [
            f"  %at{k} = add i64 %first, {k}",
            f"  %ptr{k} = getelementptr {vector}, ptr %data, i64 %at{k}",
            f"  %v{k} = load {vector}, ptr %ptr{k}, align 4",
            f"  %next{k} = fadd {vector} %acc{k}, %v{k}",
        ]
    sums = [f"  %sum1 = fadd {vector} %next0, %next1"]
    sums += [f"  %sum{k} = fadd {vector} %sum{k - 1}, %next{k}" for k in range(2, STREAM_ACCUMULATORS)]
    return "\n".join(
        [
            f"define void @{STREAM_FUNCTION}(ptr %data, i64 %groups, ptr %out) {{",
            "entry:",
            "  br label %loop",
            "loop:",
            "  %i = phi i64 [ 0, %entry ], [ %i.next, %loop ]",
            *phis,
            f"  %first = mul i64 %i, {STREAM_ACCUMULATORS}",
            *body,
            "  %i.next = add i64 %i, 1",
            "  %done = icmp uge i64 %i.next, %groups",
            "  br i1 %done, label %exit, label %loop",
            "exit:",
            *sums,
            f"  store {vector} %sum{STREAM_ACCUMULATORS - 1}, ptr %out, align 4",
            "  ret void",
            "}",
        ]
    )


def memory_bandwidth_gbs(threads: int = 1, mebibytes: int = 256, repeats: int = 5) -> float:
    """GB/s that `threads` threads read at once, each summing its slice of `mebibytes` MiB of float32 (the best of
    `repeats` timed reads after one warm-up); ValueError if a sum misses an element."""
    lanes = target_from_name("host").vector_lanes
    jit = JitModule(stream_sum_ir(lanes))
    function = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_int64, ctypes.c_void_p)
    run = function(jit.function_address(STREAM_FUNCTION))
    group = lanes * STREAM_ACCUMULATORS
    per_thread = max(1, (mebibytes << 20) // (4 * group * threads))
    data = np.ones((threads, per_thread * group), np.float32)
    sums = np.zeros((threads, lanes), np.float32)

    def read_once() -> float:
        start = threading.Barrier(threads + 1)

        def read(index: int) -> None:
            start.wait()
            run(data[index].ctypes.data, per_thread, sums[index].ctypes.data)

        workers = [threading.Thread(target=read, args=(index,)) for index in range(threads)]
        for worker in workers:
            worker.start()
        start.wait()
        began = time.perf_counter()
        for worker in workers:
            worker.join()
        return time.perf_counter() - began

    read_once()
    if not np.allclose(sums.sum(axis=1, dtype=np.float64), data.shape[1], rtol=1e-6):
        raise ValueError(f"the streaming sum read {sums.sum()} of {data.size} elements")
    seconds = min(read_once() for _ in range(repeats))
    return data.nbytes / seconds / 1e9
