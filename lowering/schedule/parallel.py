"""Parallel placement: which loops of a scheduled kernel run their iterations on the thread pool, as how many tasks.

In every top-level loop nest with at least `PARALLEL_MIN_WORK` innermost iterations, parallel placement descends
the nest through loops that are each the only loop of their parent (a perfect chain) to the outermost one with at
least two iterations whose iterations are independent (every store under it to a buffer the kernel does not own
indexes with its induction variable; local scratch buffers become private to each task in `loop-outline-parallel`).
From there it collects a *band* of perfectly nested independent loops, outermost first, until the band has at least
`tasks` iterations (the knob) that `BALANCE_THREADS` threads share evenly (the busiest thread runs at most
`MAX_IMBALANCE` times the mean), each task keeping at least `grain` innermost iterations. Where the next loop would
make the tasks smaller than that, it is split (`loop-split`) so that only as many of its iterations as needed join
the band. A loop of one iteration (a GEMM's depth loop where one block holds the whole reduction) does not end the
band: it joins it together with the next loop that does. Every loop of the band becomes `parallel`, and
`loop-outline-parallel` runs the band as one task range (TVM's `fuse` then `parallel`): for a convolution the
output-channel panels times the output rows, for GEMM the row blocks inside the KC loop, for an elementwise kernel its
rows (times columns where the rows are few):

    loop.for "i0" 0 to 1 { loop.for "i3_o" 0 to 64 step 32 { loop.for "i1" 0 to 56 { ... } } }   // 2 panels
    // gets
    loop-parallel{kernel=conv_0 loop=i3_o},loop-parallel{kernel=conv_0 loop=i1}                   // 112 tasks

Knobs: `parallel` (place the band, or keep the kernel serial), `tasks` (the fewest tasks a band aims for: 1 places
one loop of at least `PARALLEL_MIN_TASKS` iterations, as placement did before bands) and `grain`; every kernel's space
ends with them. The check a test makes on whole models (`band_report`) reads the same bands back.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass

from xdsl.dialects import arith, func, memref
from xdsl.ir import Operation, SSAValue

from minimlc.dialects import loop
from minimlc.lowering.loop.analysis import affine_form, band_tasks, loops_of, nested_ops, parallel_band, walk_ops
from minimlc.lowering.schedule.space import Knob

PARALLEL_MIN_TASKS = 4
"""Fewest tasks a parallel loop needs: enough to balance two threads under a dynamic schedule."""
PARALLEL_MIN_WORK = 1 << 15
"""Fewest innermost iterations a loop nest needs to be run in parallel (a dispatch costs about 0.5 us)."""
BALANCE_THREADS = 16
"""The thread count a band's tasks are balanced for: a 16-core machine (fewer threads balance at least as well once
there are `tasks` of them)."""
MAX_IMBALANCE = 1.25
"""Largest ratio of the busiest thread's tasks to the mean a band accepts while it can still grow."""
PARALLEL_KNOB = Knob("parallel", (True, False), True)
TASKS_KNOB = Knob("tasks", (1, 32, 64, 256), 32)
GRAIN_KNOB = Knob("grain", (256, 512, 2048), 512)
PARALLEL_KNOBS = (PARALLEL_KNOB, TASKS_KNOB, GRAIN_KNOB)


def imbalance(tasks: int, threads: int = BALANCE_THREADS) -> float:
    """The busiest thread's share of `tasks` equal tasks over the mean share, with `threads` threads."""
    return math.ceil(tasks / threads) / (tasks / threads)


def parallel_steps(kernel: func.FuncOp, tasks: int = TASKS_KNOB.default, grain: int = GRAIN_KNOB.default) -> list[str]:
    """The `loop-split` and `loop-parallel` items for `kernel` as scheduled so far (see the module docstring)."""
    steps: list[str] = []
    for nest in _nests(kernel, kernel.body.block.ops):
        if any(lp.is_dynamic for lp in loops_of(nest)):
            steps += _dynamic_band(kernel, nest, tasks, grain)
        elif work(nest) >= PARALLEL_MIN_WORK:
            steps += _static_band(kernel, nest, tasks, grain)[1]
    return steps


def _static_band(kernel: func.FuncOp, nest: loop.ForOp, tasks: int, grain: int) -> tuple[loop.ForOp | None, list[str]]:
    """The outermost loop of the band placed in `nest`, a nest of static loops, and the items that place it (None
    and none where no band reaches `PARALLEL_MIN_TASKS` tasks)."""
    for start in _chain(nest):
        if start.kind.data == "parallel":  # placed by the rule (a split-K GEMV's depth ranges): the nest's band
            return None, []
        if start.kind.data != "serial" or not _iterations_independent(kernel, start):
            continue
        if tasks == 1:
            if start.trip_count >= PARALLEL_MIN_TASKS:
                return start, [_parallel(kernel.sym_name.data, start.loop_name.data)]
            continue
        if start.trip_count < 2:
            continue
        band = _band(kernel, start, tasks, grain)
        if band is not None:
            return start, band
    return None, []


def _band(kernel: func.FuncOp, start: loop.ForOp, tasks: int, grain: int) -> list[str] | None:
    """The items that make the band from `start` parallel (None: it cannot reach `PARALLEL_MIN_TASKS` tasks)."""
    kernel_name = kernel.sym_name.data
    band = [start]
    count = start.trip_count
    chain = _chain(start)[1:]
    single: list[loop.ForOp] = []  # one-iteration loops (a GEMM's depth loop of one block): they join what follows
    for member in chain:
        if count >= tasks and imbalance(count) <= MAX_IMBALANCE:
            break
        if member.kind.data != "serial" or not _band_independent(kernel, [*band, *single, member]):
            break
        if member.trip_count == 1:
            single.append(member)
            continue
        per_task = work(member) // member.trip_count
        if per_task >= grain:
            band += [*single, member]
            single = []
            count *= member.trip_count
            continue
        parts = next(
            (
                d
                for d in range(2, member.trip_count)
                if member.trip_count % d == 0
                and work(member) // d >= grain
                and count * d >= min(tasks, PARALLEL_MIN_TASKS * 8)
                and imbalance(count * d) <= MAX_IMBALANCE
            ),
            None,
        )
        if parts is not None:
            name = member.loop_name.data
            factor = member.trip_count // parts
            return [
                *(_parallel(kernel_name, lp.loop_name.data) for lp in [*band, *single]),
                f"loop-split{{kernel={kernel_name} loop={name} factor={factor}}}",
                _parallel(kernel_name, f"{name}_o"),
            ]
        break
    if count < PARALLEL_MIN_TASKS:
        return None
    return [_parallel(kernel_name, lp.loop_name.data) for lp in band]


def _dynamic_band(kernel: func.FuncOp, nest: loop.ForOp, tasks: int, grain: int) -> list[str]:
    """The items that make a nest with a loop of a run-time trip count parallel: its outermost loop (past static loops
    of one iteration) where its iterations are independent and it is not the remainder of a split; a static one
    with at least `PARALLEL_MIN_TASKS` iterations; a dynamic one whose iterations each run fewer than `grain`
    innermost iterations (all loops inside static) split into chunks of that many first, the chunks parallel (the pool
    balances the run-time count of tasks by stealing), the split's remainder serial after them:

        loop.for "i0" %i0 = 0 to %n step 1 serial { loop.for "i1" %i1 = 0 to 64 step 1 serial { ... } }
        // gets
        loop-split{kernel=k loop=i0 factor=8},loop-parallel{kernel=k loop=i0_o}

    A nest in which the rule has placed a parallel loop (the dynamic GEMM's column panels or row tiles inside its
    batch loop) keeps it. A dynamic loop around one nest of static loops with at least `PARALLEL_MIN_WORK` innermost
    iterations (a batch loop around an image's kernel, `conv_batch.py`) gets that nest's static band too, as batch 1
    would: the batch loop joins it where the band starts right inside it (tasks = images x the band's), else it stays
    serial around it, each image parallel inside.
    """
    name = kernel.sym_name.data
    if any(lp.kind.data == "parallel" for lp in loops_of(nest)):
        return []  # placed by the rule (the dynamic GEMM's panels or row tiles, inside a batch loop): the nest's band
    start = next((lp for lp in _chain(nest) if lp.is_dynamic or lp.trip_count != 1), nest)
    if start.kind.data != "serial" or is_remainder(start) or not _iterations_independent(kernel, start):
        return []
    if not start.is_dynamic:
        return [_parallel(name, start.loop_name.data)] if start.trip_count >= PARALLEL_MIN_TASKS else []
    inner = [op for op in start.body.block.ops if isinstance(op, loop.ForOp)]
    if any(lp.is_dynamic for child in inner for lp in loops_of(child)):
        return [_parallel(name, start.loop_name.data)]
    if len(inner) == 1 and work(inner[0]) >= PARALLEL_MIN_WORK:
        first, band = _static_band(kernel, inner[0], tasks, grain)
        if band:
            return [_parallel(name, start.loop_name.data), *band] if first is inner[0] else band
    per_iteration = max(1, sum(work(child) for child in inner))
    if per_iteration >= grain:
        return [_parallel(name, start.loop_name.data)]
    chunk = -(-grain // per_iteration)
    return [
        f"loop-split{{kernel={name} loop={start.loop_name.data} factor={chunk}}}",
        _parallel(name, f"{start.loop_name.data}_o"),
    ]


def is_remainder(target: loop.ForOp) -> bool:
    """Whether `target` is the remainder of a split of a loop of a run-time trip count: its upper bound is `n % f`,
    fewer iterations than a dispatch pays for."""
    upper = target.dynamic_upper
    return upper is not None and isinstance(upper.owner, arith.RemUIOp | arith.RemSIOp)


def _parallel(kernel: str, name: str) -> str:
    return f"loop-parallel{{kernel={kernel} loop={name}}}"


def _nests(kernel: func.FuncOp, ops: Iterable[Operation]) -> list[loop.ForOp]:
    """The loop nests among `ops`, looking through a chain of one-iteration loops whose innermost body holds only
    loop nests that share no buffer but the kernel's parameters (a GEMM's peeled tail of rows beside its full tiles
    under a batch loop of one iteration): each of those is a nest of its own. Nests that pass data through a scratch
    buffer (a softmax row's maximum, then its exponentials) are stages of one computation: they stay one nest."""
    nests: list[loop.ForOp] = []
    for op in ops:
        if isinstance(op, loop.ForOp):
            chain = _chain(op)
            body = list(chain[-1].body.block.ops)
            single = all(not lp.is_dynamic and lp.trip_count == 1 for lp in chain)
            if len(body) > 1 and single and _separate(kernel, body):
                nests += _nests(kernel, body)
            else:
                nests.append(op)
    return nests


def _separate(kernel: func.FuncOp, body: list[Operation]) -> bool:
    """Whether `body` is only loop nests, none of which touches a non-parameter buffer another one touches."""
    if not all(isinstance(op, loop.ForOp) for op in body):
        return False
    params = parameter_buffers(kernel)
    seen: set[SSAValue] = set()
    for nest in body:
        used = {
            op.memref
            for op in walk_ops(nest)
            if isinstance(op, memref.LoadOp | memref.StoreOp) and op.memref not in params
        }
        if used & seen:
            return False
        seen |= used
    return True


def parameter_buffers(kernel: func.FuncOp) -> set[SSAValue]:
    """The kernel's parameters, and the buffers `loop.extents` makes of them (every access to a parameter with `?`
    dimensions goes through one)."""
    params = set(kernel.body.block.args)
    return params | {op.result for op in nested_ops(kernel, loop.ExtentsOp) if op.source in params}


def _chain(nest: loop.ForOp) -> list[loop.ForOp]:
    """`nest` and the loops below it, each the only loop of its parent's body."""
    chain = [nest]
    while len(inner := [op for op in chain[-1].body.block.ops if isinstance(op, loop.ForOp)]) == 1:
        chain.append(inner[0])
    return chain


def work(nest: loop.ForOp) -> int:
    """Innermost iterations of a loop nest."""
    inner = [op for op in nest.body.block.ops if isinstance(op, loop.ForOp)]
    return nest.trip_count * max(1, sum(work(child) for child in inner))


def _iterations_independent(kernel: func.FuncOp, target: loop.ForOp) -> bool:
    """True if every store under `target` to a kernel parameter has an index that moves with `target`."""
    params = parameter_buffers(kernel)
    iv = target.induction_var
    for store in nested_ops(target, memref.StoreOp):
        if store.memref in params:
            forms = [affine_form(index) for index in store.indices]
            if not any(form is not None and form.get(iv, 0) != 0 for form in forms):
                return False
    return True


def _band_independent(kernel: func.FuncOp, band: list[loop.ForOp]) -> bool:
    """True if distinct iterations of the band write distinct elements: every store under it to a kernel parameter
    has, for each band loop of several iterations, an index that moves with that loop and with no other loop of the
    band (so that `out[i + j]` never joins `i` and `j` in one band)."""
    params = parameter_buffers(kernel)
    ivs = [member.induction_var for member in band if member.trip_count > 1]
    for store in nested_ops(band[0], memref.StoreOp):
        if store.memref in params:
            forms = [affine_form(index) or {} for index in store.indices]
            for iv in ivs:
                if not any(form.get(iv, 0) and not any(form.get(o, 0) for o in ivs if o is not iv) for form in forms):
                    return False
    return True


@dataclass(frozen=True)
class NestBalance:
    """One top-level loop nest of a scheduled kernel as `BALANCE_THREADS` threads would run it."""

    loop: str
    work: int
    """Innermost iterations."""
    tasks: int
    """Tasks per dispatch of its parallel band (1: serial)."""
    dispatches: int
    span: int
    """Innermost iterations on the critical path: per dispatch, the busiest thread's tasks."""


def nest_balance(nest: loop.ForOp, threads: int = BALANCE_THREADS) -> NestBalance:
    """How `threads` threads would share `nest` (equal tasks, each thread taking `ceil(tasks / threads)`)."""
    found: list[tuple[int, int, int]] = []  # (tasks, dispatches, span)

    def visit(target: loop.ForOp, repeats: int) -> int:
        if target.kind.data == "parallel":
            band = parallel_band(target)
            count = band_tasks(band)
            found.append((count, repeats, 0))
            return math.ceil(count / threads) * (work(target) // count)
        inner = [op for op in target.body.block.ops if isinstance(op, loop.ForOp)]
        if not inner:
            return target.trip_count
        return target.trip_count * sum(visit(child, repeats * target.trip_count) for child in inner)

    span = visit(nest, 1)
    tasks = min((count for count, _, _ in found), default=1)
    return NestBalance(nest.loop_name.data, work(nest), tasks, sum(d for _, d, _ in found), span)
