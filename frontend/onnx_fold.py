"""Import-time constant folding for `minimlc.frontend.onnx`, by minimlc's own exact evaluators.

The importer keeps a table of compile-time constants: initializers, Constant outputs, the shapes and sizes of tensors
(every shape is static), and the outputs of the nodes folded here. A default-domain node whose inputs are all
constants folds when its op type has an evaluator (`EVALUATORS`): the ops that compute shapes, indices and weight
layouts, written with numpy where numpy gives exactly what minimlc's compiled op gives (`onnx_fold_ops`: moving,
reshaping, indexing and generating data, of any element type; `onnx_fold_math`: casts, integer and float32/float64
arithmetic, comparisons, logic, integer reductions). This turns Shape -> Gather -> Unsqueeze -> Concat -> Reshape
chains into one static reshape, and ConstantOfShape "weights" into weight-store arrays.

Any other node on constants (MatMul, Exp, Softmax, a float ReduceSum, ...), and a node an evaluator declines
(`NotFoldable`: an element type or a mode it does not compute exactly), is compiled like any node: its constant inputs
become weights: only minimlc computes what a model computes. An op type with neither a converter nor an evaluator is
therefore unsupported even on constant inputs, on purpose (GlobalLpPool, MaxRoiPool, ...); Range, ConstantOfShape
and the window functions, which have no converter, are supported where their inputs are constants.

`is_constant_output` is the same rule without evaluating anything, so that the unsupported-op check can run over the
whole graph before any node is converted.

    a, b = ConstantValue("a", np.array(-7)), ConstantValue("b", np.array(2))
    fold(helper.make_node("Div", ["a", "b"], ["q"]), [a, b], opset=13)  # [array(-3)]: truncated toward zero
"""

from __future__ import annotations

import inspect
from collections.abc import Callable, Sequence

import numpy as np
import onnx
from onnx import helper

from minimlc.frontend import onnx_fold_math, onnx_fold_ops
from minimlc.frontend.onnx_fold_ops import Folding, NotFoldable
from minimlc.frontend.onnx_ops import ConstantValue

__all__ = ["DEFAULT_DOMAINS", "EVALUATORS", "NotFoldable", "fold", "is_constant_output", "is_foldable"]

DEFAULT_DOMAINS = ("", "ai.onnx")

ALWAYS_CONSTANT = frozenset({"Constant", "Shape", "Size"})
"""Ops whose outputs are constants for any input, since every tensor's shape is static."""

EVALUATORS: dict[str, Callable[..., np.ndarray | tuple[np.ndarray, ...]]] = {
    **onnx_fold_ops.EVALUATORS,
    **onnx_fold_math.EVALUATORS,
}
"""ONNX op type (default domain) -> its import-time evaluator."""


def is_foldable(node: onnx.NodeProto, is_constant: Callable[[str], bool]) -> bool:
    """Whether `node` is evaluated at import time: a default-domain node of an op type with an evaluator whose
    (present) inputs are all constants."""
    in_fold_set = node.domain in DEFAULT_DOMAINS and node.op_type in EVALUATORS
    return in_fold_set and all(is_constant(name) for name in node.input if name)


def is_constant_output(node: onnx.NodeProto, is_constant: Callable[[str], bool]) -> bool:
    """Whether the outputs of `node` are compile-time constants."""
    always = node.domain in DEFAULT_DOMAINS and node.op_type in ALWAYS_CONSTANT
    return always or is_foldable(node, is_constant)


_SIGNATURES: dict[int, tuple[Callable[..., object], inspect.Signature]] = {}


def signature_of(function: Callable[..., object]) -> inspect.Signature:
    """`inspect.signature(function)`, read once per function (it costs more than many a fold or conversion); kept by
    identity, as a converter may be an unhashable dataclass instance."""
    cached = _SIGNATURES.get(id(function))
    if cached is None or cached[0] is not function:
        cached = _SIGNATURES[id(function)] = (function, inspect.signature(function))
    return cached[1]


def fold(node: onnx.NodeProto, inputs: Sequence[ConstantValue | None], opset: int) -> list[np.ndarray]:
    """Evaluate the foldable `node` on its constant `inputs` (None for an omitted optional input) at the default
    domain's `opset`; one array per output. Raises `NotFoldable` for a node to compile instead (an input or attribute
    the evaluator does not take: the converter names it), `NodeError` for an invalid node."""
    evaluator = EVALUATORS[node.op_type]
    attributes = {attribute.name: helper.get_attribute_value(attribute) for attribute in node.attribute}
    try:
        call = signature_of(evaluator).bind(Folding(node, opset), *inputs, **attributes)
    except TypeError as error:
        raise NotFoldable(f"its inputs or attributes: {error}") from error
    with np.errstate(all="ignore"):  # integers wrap, floats overflow to infinities: what the model asks for
        results = evaluator(*call.args, **call.kwargs)
    arrays = results if isinstance(results, tuple) else (results,)
    return [np.asarray(array, order="C") for array in arrays]  # a broadcast or transposed view: an array of its own
