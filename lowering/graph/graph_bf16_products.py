"""`graph-bf16-products`: run the inner products of float32 MatMul, Gemm and Conv (group 1) in bfloat16.

Marks each such op with the unit attribute `BF16_PRODUCTS_ATTR` (a Gemm only where its B is computed from weights
alone: `takes_bf16_products`); graph-to-te then gives it the bfloat16 form (`graph_to_te/bfloat16.py`:
operands rounded to bfloat16 in pairs, `llvmx.dot_bf16` summing into float32) where it has one for the op's shapes,
and the float32 form elsewhere. Everything else stays float32. The mark is part of the op's signature, so that
graph-to-te's clones of a repeated op (`graph_to_te/repeated.py`) take the same form.

    %y = graph.matmul %x, %w : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>
    // becomes
    %y = graph.matmul %x, %w {minimlc.bf16_products} : (tensor<4x64xf32>, tensor<64x32xf32>) -> tensor<4x32xf32>

A target without a bfloat16 dot product (`Target.dot_bf16_bits` 0) fails the pass in one line naming the target.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp, UnitAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import graph
from minimlc.lowering.graph.graph_fold_batch_norm import is_weight_derived
from minimlc.lowering.target import BF16_FEATURES, target_of

BF16_PRODUCTS_ATTR = "minimlc.bf16_products"
"""Unit attribute on a float32 graph.matmul / graph.gemm / graph.conv whose inner products run in bfloat16."""


def takes_bf16_products(op: Operation) -> bool:
    """Whether `op`'s products may run in bfloat16: a group-1 Conv, a MatMul (B's bfloat16 words are computed once, at
    load time, where B is computed from weights alone, else per run: attention's MatMuls of two activations), or a
    Gemm whose B is computed from weights alone (the three ops are float32 only)."""
    if isinstance(op, graph.ConvOp):
        return op.group.value.data == 1
    if isinstance(op, graph.MatMulOp):
        return True
    return isinstance(op, graph.GemmOp) and is_weight_derived(op.b)


@dataclass(frozen=True)
class GraphBF16ProductsPass(ModulePass):
    """Mark the MatMul / Gemm (B from weights) / Conv (group 1) ops whose inner products run in bfloat16."""

    name = "graph-bf16-products"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        target = target_of(op)
        if not target.dot_bf16_bits:
            raise PassFailedException(
                f"graph-bf16-products: target '{target.name}' has no bfloat16 dot product ({BF16_FEATURES})"
            )
        for inner in op.walk():
            if takes_bf16_products(inner):
                inner.attributes[BF16_PRODUCTS_ATTR] = UnitAttr()
