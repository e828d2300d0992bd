"""Many cores: every kernel light ResNet-50 runs (O3, after kernel fusion) has, in each loop nest worth a dispatch,
a parallel band of at least 2 x 16 tasks, and 16 simulated threads share each kernel evenly (the busiest thread's
critical path at most 1.25 x the mean); kernels too small for a dispatch stay serial. The models are built for an
AVX-512 and an AVX2 CPU of typical cache sizes (a 16-core machine's kinds), not the host: the GEMM schedule's depth
blocking follows the L2 size, and a depth-blocked GEMM dispatches once per block. Also: the `tasks` knob at 1 places
one loop, as placement did before bands, a coarse `grain` splits a loop instead of taking it whole, and a loop of one
iteration does not end a band."""

from __future__ import annotations

import pytest
from schedule_cases import AVX512
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from minimlc.dialects import loop
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_passes, run_pipeline
from minimlc.lowering.schedule.kernel_analysis import kernels_of
from minimlc.lowering.schedule.parallel import (
    BALANCE_THREADS,
    MAX_IMBALANCE,
    PARALLEL_MIN_WORK,
    NestBalance,
    nest_balance,
    parallel_steps,
)
from minimlc.lowering.strategy.tuning_db import kernel_structure
from minimlc.tools.conformance import light_model_paths

MIN_TASKS = 2 * BALANCE_THREADS
AVX2 = "x86-64-v3"
"""An AVX2 CPU: 16 vector registers, so 6-row GEMM tiles, which leave a tail of rows beside Winograd's 49 tiles."""


def _scheduled(name: str, target: str) -> ModuleOp:
    """The light model `name` at O3 after default-schedule and kernel fusion, built for `target`."""
    path = next(p for p in light_model_paths() if p.stem == f"light_{name}")
    module = import_model(path).module
    run_pipeline(module, 3, stop_after="schedule", target=target)
    run_passes(module, ["default-schedule", "loop-fuse-kernels"])
    return module


def _entry_kernels(module: ModuleOp) -> dict[str, func.FuncOp]:
    """The distinct kernels (by structure) the entry calls."""
    entry = next(op for op in module.ops if isinstance(op, func.FuncOp) and op.sym_name.data == "main")
    called = {op.callee.string_value() for op in entry.walk() if isinstance(op, func.CallOp)}
    kernels: dict[str, func.FuncOp] = {}
    for kernel in kernels_of(module):
        if kernel.sym_name.data in called:
            kernels.setdefault(kernel_structure(kernel), kernel)
    return kernels


def _balances(kernel: func.FuncOp) -> list[NestBalance]:
    return [nest_balance(op) for op in kernel.body.block.ops if isinstance(op, loop.ForOp)]


@pytest.fixture(scope="module", params=[AVX512, AVX2])
def resnet50(request: pytest.FixtureRequest) -> ModuleOp:
    return _scheduled("resnet50", request.param)


@pytest.mark.slow
def test_every_resnet50_kernel_has_enough_balanced_tasks_for_16_threads(resnet50: ModuleOp) -> None:
    kernels = _entry_kernels(resnet50)
    assert len(kernels) >= 30
    problems = []
    for kernel in kernels.values():
        nests = _balances(kernel)
        total = sum(nest.work for nest in nests)
        if total < PARALLEL_MIN_WORK:
            continue  # softmax over 1000 classes: less work than one dispatch costs
        for nest in nests:
            if nest.work >= PARALLEL_MIN_WORK and (nest.tasks < MIN_TASKS or nest.dispatches != 1):
                problems.append(f"{kernel.sym_name.data}: nest {nest.loop}: {nest.tasks} tasks x {nest.dispatches}")
        ratio = sum(nest.span for nest in nests) / (total / BALANCE_THREADS)
        if ratio > MAX_IMBALANCE:
            problems.append(f"{kernel.sym_name.data}: busiest of {BALANCE_THREADS} threads at {ratio:.2f} x the mean")
    assert not problems, "\n".join(problems)


ROWS = """
func.func private @scale(%x: memref<2x64x512xf32>, %y: memref<2x64x512xf32>) {
  loop.for "i" %i = 0 to 2 step 1 serial {
    loop.for "j" %j = 0 to 64 step 1 serial {
      loop.for "k" %k = 0 to 512 step 1 serial {
        %v = memref.load %x[%i, %j, %k] : memref<2x64x512xf32>
        memref.store %v, %y[%i, %j, %k] : memref<2x64x512xf32>
      }
    }
  }
  func.return
}
"""


@pytest.mark.parametrize(
    ("tasks", "grain", "expected"),
    [
        (32, 512, ["loop-parallel{kernel=scale loop=i}", "loop-parallel{kernel=scale loop=j}"]),
        # A grain above a row's work splits the rows: 2 x 16 tasks of 4 rows each.
        (
            32,
            2048,
            [
                "loop-parallel{kernel=scale loop=i}",
                "loop-split{kernel=scale loop=j factor=4}",
                "loop-parallel{kernel=scale loop=j_o}",
            ],
        ),
        (1, 512, ["loop-parallel{kernel=scale loop=j}"]),  # one loop of at least 4 iterations, as before bands
    ],
)
def test_tasks_and_grain_knobs_shape_the_band(tasks: int, grain: int, expected: list[str]) -> None:
    kernel = Parser(make_context(), ROWS).parse_module().ops.first
    assert isinstance(kernel, func.FuncOp)
    assert parallel_steps(kernel, tasks, grain) == expected


def test_loops_writing_one_index_together_never_share_a_band() -> None:
    """`y[i + j]`: i and j each move the index, but (0, 1) and (1, 0) write the same element."""
    source = ROWS.replace("memref<2x64x512xf32>) {", "memref<66x512xf32>) {", 1).replace(
        "memref.store %v, %y[%i, %j, %k] : memref<2x64x512xf32>",
        "%d = arith.addi %i, %j : index\n        memref.store %v, %y[%d, %k] : memref<66x512xf32>",
    )
    kernel = Parser(make_context(), source).parse_module().ops.first
    assert isinstance(kernel, func.FuncOp)
    assert parallel_steps(kernel) == ["loop-parallel{kernel=scale loop=j}"]


def test_a_loop_of_one_iteration_joins_the_band_with_the_loop_inside_it() -> None:
    """A GEMM's depth loop of one block between its batch loop and its panels: 2 x 1 x 64 tasks, not 2."""
    source = ROWS.replace(
        'loop.for "j" %j = 0 to 64 step 1 serial {',
        'loop.for "one" %o = 0 to 1 step 1 serial {\n    loop.for "j" %j = 0 to 64 step 1 serial {',
    ).replace("    }\n  }\n  func.return", "    }\n  }\n  }\n  func.return")
    kernel = Parser(make_context(), source).parse_module().ops.first
    assert isinstance(kernel, func.FuncOp)
    assert parallel_steps(kernel) == [
        "loop-parallel{kernel=scale loop=i}",
        "loop-parallel{kernel=scale loop=one}",
        "loop-parallel{kernel=scale loop=j}",
    ]
