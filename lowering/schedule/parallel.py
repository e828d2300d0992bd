"""Parallel placement: which loop of a scheduled kernel runs its iterations on the thread pool.

In every top-level loop nest with at least `PARALLEL_MIN_WORK` innermost iterations, the outermost loop with at
least `PARALLEL_MIN_TASKS` iterations becomes `parallel` (`loop-parallel`), if every store under it to a buffer the
kernel does not own indexes with its induction variable (distinct iterations write distinct elements; local scratch
buffers become private to each task in `loop-outline-parallel`). The search descends through a nest only while each
loop holds one loop, so one nest makes one dispatch per iteration of the loops around the chosen one: for GEMM the
row blocks inside the KC loop, for a convolution the output-channel panels (or, with fewer than `PARALLEL_MIN_TASKS`
of them, the output rows), for elementwise kernels the outermost sizeable dimension:

    loop.for "k2_o" ... serial { loop.for "i0_o" %i0_o = 0 to 64 step 8 serial { ... } }
    // gets
    loop-parallel{kernel=matmul_0 loop=i0_o}

Knob: `parallel` (place it, or keep the kernel serial), which every kernel's space ends with.
"""

from __future__ import annotations

from xdsl.dialects import func, memref

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form
from minimlc.lowering.schedule.space import Knob

PARALLEL_MIN_TASKS = 4
"""Fewest iterations a loop needs to be made parallel: enough to balance two threads under a dynamic schedule."""
PARALLEL_MIN_WORK = 1 << 15
"""Fewest innermost iterations a loop nest needs to be run in parallel (a dispatch costs about 0.5 us)."""
PARALLEL_KNOB = Knob("parallel", (True, False), True)


def parallel_steps(kernel: func.FuncOp) -> list[str]:
    """The `loop-parallel` items for `kernel` as scheduled so far (see the module docstring)."""
    steps = []
    name = kernel.sym_name.data
    for nest in [op for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]:
        if _work(nest) < PARALLEL_MIN_WORK:
            continue
        current: loop.ForOp | None = nest
        while current is not None and current.kind.data == "serial":
            if current.trip_count >= PARALLEL_MIN_TASKS and _iterations_independent(kernel, current):
                steps.append(f"loop-parallel{{kernel={name} loop={current.loop_name.data}}}")
                break
            inner = [op for op in current.body.block.ops if isinstance(op, loop.ForOp)]
            current = inner[0] if len(inner) == 1 else None
    return steps


def _work(nest: loop.ForOp) -> int:
    """Innermost iterations of a loop nest."""
    inner = [op for op in nest.body.block.ops if isinstance(op, loop.ForOp)]
    return nest.trip_count * max(1, sum(_work(child) for child in inner))


def _iterations_independent(kernel: func.FuncOp, target: loop.ForOp) -> bool:
    """True if every store under `target` to a kernel parameter has an index that moves with `target`."""
    params = set(kernel.body.block.args)
    iv = target.induction_var
    for store in target.walk():
        if isinstance(store, memref.StoreOp) and store.memref in params:
            forms = [affine_form(index) for index in store.indices]
            if not any(form is not None and form.get(iv, 0) != 0 for form in forms):
                return False
    return True
