"""minimlc's passes and named pipelines.

Every lowering and optimisation is a `ModulePass` registered here by name, so `mini-opt -p NAME` and the
in-process compiler run exactly the same code. Named pipelines are lists of those names, expanded before the pass
list is parsed so that `--time-passes` and `--print-between-passes` still see every inner pass.
"""

from collections.abc import Callable
from importlib import import_module

from xdsl.passes import ModulePass

_OURS = {
    "graph-simplify": ("graph.graph_simplify", "GraphSimplifyPass"),
    "graph-fold-batch-norm": ("graph.graph_fold_batch_norm", "GraphFoldBatchNormPass"),
    "graph-split-grouped-conv": ("graph.graph_split_grouped_conv", "GraphSplitGroupedConvPass"),
    "graph-pad-conv": ("graph.graph_pad_conv", "GraphPadConvPass"),
    "graph-pad-max-pool": ("graph.graph_pad_max_pool", "GraphPadMaxPoolPass"),
    "graph-pad-conv-channels": ("graph.graph_pad_conv_channels", "GraphPadConvChannelsPass"),
    "graph-to-te": ("graph_to_te.graph_to_te", "GraphToTePass"),
    "te-conv-im2col": ("te.te_conv_im2col", "TeConvIm2colPass"),
    "te-conv-layout": ("te.te_conv_layout", "TeConvLayoutPass"),
    "te-channels-last": ("te.te_channels_last", "TeChannelsLastPass"),
    "te-inline": ("te.te_inline", "TeInlinePass"),
    "te-to-loop": ("te_to_loop.te_to_loop", "TeToLoopPass"),
    "loop-split": ("loop.loop_split", "LoopSplitPass"),
    "loop-reorder": ("loop.loop_reorder", "LoopReorderPass"),
    "loop-tile": ("loop.loop_tile", "LoopTilePass"),
    "loop-fuse": ("loop.loop_fuse", "LoopFusePass"),
    "loop-compute-at": ("loop.loop_compute_at", "LoopComputeAtPass"),
    "loop-decompose-reduction": ("loop.loop_decompose_reduction", "LoopDecomposeReductionPass"),
    "loop-unroll": ("loop.loop_unroll", "LoopUnrollPass"),
    "loop-vectorize": ("loop.loop_vectorize", "LoopVectorizePass"),
    "loop-parallel": ("loop.loop_parallel", "LoopParallelPass"),
    "loop-pack": ("loop.loop_pack", "LoopPackPass"),
    "loop-cache-write": ("loop.loop_cache_write", "LoopCacheWritePass"),
    "default-schedule": ("schedule.default_schedule", "DefaultSchedulePass"),
    "loop-hoist-constants": ("program.loop_hoist_constants", "LoopHoistConstantsPass"),
    "loop-fuse-kernels": ("program.loop_fuse_kernels", "LoopFuseKernelsPass"),
    "loop-plan-memory": ("program.loop_plan_memory", "LoopPlanMemoryPass"),
    "loop-outline-parallel": ("program.loop_outline_parallel", "LoopOutlineParallelPass"),
    "loop-to-scf": ("loop_to_scf.loop_to_scf", "LoopToScfPass"),
    "convert-to-llvm": ("llvm.convert_to_llvm", "ConvertToLlvmPass"),
}

UPSTREAM_PASSES = {
    "convert-scf-to-cf": "Lower scf.for and scf.if to unstructured control flow (xDSL).",
    "reconcile-unrealized-casts": "Fold away pairs of unrealized conversion casts (xDSL).",
    "canonicalize": "Apply every op's canonicalization patterns (xDSL).",
    "cse": "Common subexpression elimination (xDSL).",
    "dce": "Remove operations whose results are unused and that have no side effects (xDSL).",
    "licm": "Hoist side-effect-free operations that do not depend on the loop out of loops (xDSL).",
}
"""xDSL passes our pipelines use, with a one-line description each (some have no docstring upstream)."""

_TO_LLVM = "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"
_GRAPH_CLEANUPS = "graph-simplify,cse,dce"
_SCHEDULED = (
    "graph-split-grouped-conv,graph-pad-conv,graph-pad-max-pool,graph-to-te,te-conv-im2col,te-conv-layout,te-channels-last,"
    "te-inline,"
    "te-to-loop,{hoist}default-schedule,loop-fuse-kernels,loop-plan-memory,loop-outline-parallel,loop-to-scf,cse,"
    + _TO_LLVM
)
OPT_LEVELS: dict[int, str] = {
    0: f"graph-to-te,te-to-loop,loop-outline-parallel,loop-to-scf,{_TO_LLVM}",
    1: f"{_GRAPH_CLEANUPS},graph-to-te,te-to-loop,loop-plan-memory,loop-outline-parallel,loop-to-scf,{_TO_LLVM}",
    2: f"{_GRAPH_CLEANUPS}," + _SCHEDULED.format(hoist=""),
    3: "graph-simplify,graph-fold-batch-norm,cse,dce,graph-pad-conv-channels,"
    + _SCHEDULED.format(hoist="loop-hoist-constants,"),
}
"""Optimisation level -> the pass list that compiles a graph-level module to the llvm dialect at that level.

O0 lowers op by op: one kernel per graph op, loops as te-to-loop builds them, one allocation per intermediate. O1
adds the graph cleanups (no-op reshapes and transposes, common subexpressions, dead ops and unused weights) and
memory planning (intermediates share one arena by liveness; it runs after any schedule and before outlining). O2 adds
fusion (te-inline; loop-fuse-kernels after the schedules) and the default schedules, with convolutions padded and made
channels-last for them. O3 adds the whole-model constant work: batch norms folded into the preceding conv/gemm/matmul,
and every computation on weights alone hoisted to load time (the two go together: without hoisting, folded weights
would be recomputed on every call), and convolutions' output channels padded to a multiple of the vector width (zero
weight rows, also hoisted).
"""

PIPELINES: dict[str, tuple[str, str]] = {
    "lower-to-te": ("graph dialect -> te compute definitions", "graph-to-te"),
    "lower-to-loop": ("graph or te -> loop nests over buffers", "graph-to-te,te-inline,te-to-loop"),
    "lower-to-schedule": (
        "graph -> the loop nests default-schedule schedules (as in lower-to-llvm, before default-schedule)",
        OPT_LEVELS[3].split(",default-schedule,")[0],
    ),
    "lower-to-scf": (
        "graph, te or loop -> scf/memref/arith/math/func, as lower-to-llvm",
        OPT_LEVELS[3].split(",loop-to-scf,")[0] + ",loop-to-scf",
    ),
    "lower-to-llvm": (
        "any minimlc level -> llvm dialect, fully optimised (= lower-to-llvm-O3; print LLVM IR with -t llvm)",
        OPT_LEVELS[3],
    ),
    "lower-to-llvm-O0": ("-> llvm dialect, no optimisation: one kernel per graph op, unscheduled", OPT_LEVELS[0]),
    "lower-to-llvm-O1": (
        "-> llvm dialect, O0 + graph cleanups (simplify, cse, dce) and memory planning",
        OPT_LEVELS[1],
    ),
    "lower-to-llvm-O2": (
        "-> llvm dialect, O1 + fusion (te-inline, loop-fuse-kernels) and default schedules",
        OPT_LEVELS[2],
    ),
    "lower-to-llvm-O3": (
        "-> llvm dialect, O2 + batch-norm folding and load-time evaluation of weight-only computations",
        OPT_LEVELS[3],
    ),
    "lower-to-llvm-conv-direct": (
        "as lower-to-llvm, every convolution with the direct schedule",
        OPT_LEVELS[3].replace("te-conv-im2col", "te-conv-im2col{algorithm=direct}"),
    ),
    "lower-to-llvm-conv-im2col": (
        "as lower-to-llvm, every convolution as im2col + GEMM",
        OPT_LEVELS[3].replace("te-conv-im2col", "te-conv-im2col{algorithm=im2col}"),
    ),
    "lower-to-llvm-unscheduled": (
        "as lower-to-llvm, but kernels keep the loops te-to-loop (or the user's schedule passes) gave them",
        "graph-to-te,te-inline,te-to-loop,loop-plan-memory,loop-outline-parallel,loop-to-scf,convert-scf-to-cf,"
        "convert-to-llvm,reconcile-unrealized-casts",
    ),
}
"""Pipeline name -> (one-line description, comma-separated pass list)."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> lazy loader of the pass class, for minimlc's passes and the xDSL ones we use."""

    def loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        return lambda: getattr(import_module(f"minimlc.lowering.{module}"), cls)

    from xdsl.transforms import get_all_passes as xdsl_passes

    upstream = xdsl_passes()
    ours = {name: loader(module, cls) for name, (module, cls) in _OURS.items()}
    return {**{name: upstream[name] for name in UPSTREAM_PASSES}, **ours}


def split_pass_list(spec: str) -> list[str]:
    """Split `a,b{x=1,2},c` at the commas that are not inside braces."""
    items: list[str] = []
    depth = 0
    start = 0
    for pos, char in enumerate(spec):
        if char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(spec[start:pos])
            start = pos + 1
    items.append(spec[start:])
    return [item.strip() for item in items if item.strip()]


def expand_pipelines(spec: str) -> str:
    """Replace every named pipeline in a pass list by its passes: `lower-to-te,cse` -> `graph-to-te,cse`."""
    return ",".join(PIPELINES[item][1] if item in PIPELINES else item for item in split_pass_list(spec))


def opt_level_pipeline(opt_level: int) -> str:
    """The named pipeline of an optimisation level (0-3): `3` -> `lower-to-llvm-O3`."""
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or opt_level not in OPT_LEVELS:
        allowed = ", ".join(str(level) for level in OPT_LEVELS)
        raise ValueError(f"opt_level must be one of {allowed}, got {opt_level!r}")
    return f"lower-to-llvm-O{opt_level}"
