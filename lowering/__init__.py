"""minimlc's pass registry: pass name -> lazy loader of its class.

Every lowering and optimisation is a `ModulePass` registered here by name, so `mini-opt -p NAME` and the
in-process compiler run exactly the same code. The named pipelines and the pass runner are in `pipeline.py`.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from importlib import import_module
from typing import TYPE_CHECKING

if TYPE_CHECKING:  # xDSL loads only with the passes, so that loading a saved model stays light
    from xdsl.passes import ModulePass

_OURS = {
    "cse": ("generic.cse", "CsePass"),
    "graph-simplify": ("graph.graph_simplify", "GraphSimplifyPass"),
    "graph-fold-batch-norm": ("graph.graph_fold_batch_norm", "GraphFoldBatchNormPass"),
    "graph-fuse-attention": ("graph.graph_fuse_attention", "GraphFuseAttentionPass"),
    "graph-pad-attention-keys": ("graph.graph_pad_attention_keys", "GraphPadAttentionKeysPass"),
    "graph-split-grouped-conv": ("graph.graph_split_grouped_conv", "GraphSplitGroupedConvPass"),
    "graph-pad-conv": ("graph.graph_pad_conv", "GraphPadConvPass"),
    "graph-pad-max-pool": ("graph.graph_pad_max_pool", "GraphPadMaxPoolPass"),
    "graph-pad-conv-channels": ("graph.graph_pad_conv_channels", "GraphPadConvChannelsPass"),
    "graph-pad-gemm-columns": ("graph.graph_pad_gemm_columns", "GraphPadGemmColumnsPass"),
    "graph-partition": ("graph.graph_partition", "GraphPartitionPass"),
    "graph-bf16-products": ("graph.graph_bf16_products", "GraphBF16ProductsPass"),
    "graph-to-te": ("graph_to_te.graph_to_te", "GraphToTePass"),
    "te-conv-im2col": ("te.te_conv_im2col", "TeConvIm2colPass"),
    "te-conv-winograd": ("te.te_conv_winograd", "TeConvWinogradPass"),
    "te-conv-layout": ("te.te_conv_layout", "TeConvLayoutPass"),
    "te-channels-last": ("te.te_channels_last", "TeChannelsLastPass"),
    "te-inline": ("te.te_inline", "TeInlinePass"),
    "te-expand-math": ("te.te_expand_math", "TeExpandMathPass"),
    "te-clamped-casts": ("te.te_clamped_casts", "TeClampedCastsPass"),
    "te-bf16-activations": ("te.te_bf16_activations", "TeBF16ActivationsPass"),
    "te-bf16-word-views": ("te.te_bf16_word_views", "TeBF16WordViewsPass"),
    "te-to-loop": ("te_to_loop.te_to_loop", "TeToLoopPass"),
    "loop-split": ("loop.loop_split", "LoopSplitPass"),
    "loop-rfactor": ("loop.loop_rfactor", "LoopRfactorPass"),
    "loop-reorder": ("loop.loop_reorder", "LoopReorderPass"),
    "loop-tile": ("loop.loop_tile", "LoopTilePass"),
    "loop-fuse": ("loop.loop_fuse", "LoopFusePass"),
    "loop-distribute": ("loop.loop_distribute", "LoopDistributePass"),
    "loop-compute-at": ("loop.loop_compute_at", "LoopComputeAtPass"),
    "loop-decompose-reduction": ("loop.loop_decompose_reduction", "LoopDecomposeReductionPass"),
    "loop-unroll": ("loop.loop_unroll", "LoopUnrollPass"),
    "loop-vectorize": ("loop.loop_vectorize", "LoopVectorizePass"),
    "loop-parallel": ("loop.loop_parallel", "LoopParallelPass"),
    "loop-pack": ("loop.loop_pack", "LoopPackPass"),
    "loop-cache-write": ("loop.loop_cache_write", "LoopCacheWritePass"),
    "loop-cache-read": ("loop.loop_cache_read", "LoopCacheReadPass"),
    "loop-partition": ("loop.loop_partition", "LoopPartitionPass"),
    "loop-prefetch": ("loop.loop_prefetch", "LoopPrefetchPass"),
    "default-schedule": ("schedule.default_schedule", "DefaultSchedulePass"),
    "loop-hoist-constants": ("program.loop_hoist_constants", "LoopHoistConstantsPass"),
    "loop-fuse-kernels": ("program.loop_fuse_kernels", "LoopFuseKernelsPass"),
    "loop-plan-memory": ("program.loop_plan_memory", "LoopPlanMemoryPass"),
    "loop-generalize-kernels": ("program.loop_generalize_kernels", "LoopGeneralizeKernelsPass"),
    "loop-outline-parallel": ("program.loop_outline_parallel", "LoopOutlineParallelPass"),
    "loop-merge-functions": ("program.loop_merge_functions", "LoopMergeFunctionsPass"),
    "loop-mark-load-time": ("program.loop_mark_load_time", "LoopMarkLoadTimePass"),
    "loop-profile-calls": ("program.loop_profile_calls", "LoopProfileCallsPass"),
    "loop-to-scf": ("loop_to_scf.loop_to_scf", "LoopToScfPass"),
    "convert-to-llvm": ("llvm.convert_to_llvm", "ConvertToLlvmPass"),
}

UPSTREAM_PASSES = {
    "convert-scf-to-cf": "Lower scf.for and scf.if to unstructured control flow (xDSL).",
    "reconcile-unrealized-casts": "Fold away pairs of unrealized conversion casts (xDSL).",
    "canonicalize": "Apply every op's canonicalization patterns (xDSL).",
    "dce": "Remove operations whose results are unused and that have no side effects (xDSL).",
    "licm": "Hoist side-effect-free operations that do not depend on the loop out of loops (xDSL).",
}
"""xDSL passes our pipelines use, with a one-line description each (some have no docstring upstream)."""


def get_all_passes() -> dict[str, Callable[[], type[ModulePass]]]:
    """Pass name -> lazy loader of the pass class, for minimlc's passes and the xDSL ones we use."""

    def loader(module: str, cls: str) -> Callable[[], type[ModulePass]]:
        return lambda: getattr(import_module(f"minimlc.lowering.{module}"), cls)

    from xdsl.transforms import get_all_passes as xdsl_passes

    upstream = xdsl_passes()
    ours = {name: loader(module, cls) for name, (module, cls) in _OURS.items()}
    return {**{name: upstream[name] for name in UPSTREAM_PASSES}, **ours}


@functools.cache
def import_pass_modules() -> None:
    """Import the module of every minimlc pass (once per process; about 60 ms). A compile in a forked child
    (`compile_model`'s `isolated`) then finds them imported, as a compile here would after the first: without it each
    child imported them anew, and BERT's lowering took 0.25 s instead of 0.18."""
    for module, _ in _OURS.values():
        import_module(f"minimlc.lowering.{module}")
