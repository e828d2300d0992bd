"""Import-time constant folding for `minimlc.frontend.onnx`.

The importer keeps a table of compile-time constants: initializers, Constant outputs, the shapes and sizes of
tensors (every shape is static), and every output of a node whose inputs are all constants. Such a node is
evaluated here, whatever its op type and element types, with onnx's reference evaluator, and never reaches a
converter: an op type without a converter is therefore supported wherever its inputs are constants. This turns
Shape -> Gather -> Unsqueeze -> Concat -> Reshape chains into one static reshape, and ConstantOfShape "weights"
into weight-store arrays.

`is_constant_output` is the same rule without evaluating anything, so that the unsupported-op check can run over
the whole graph before any node is converted.
"""

from __future__ import annotations

import warnings
from collections.abc import Callable, Mapping, Sequence

import numpy as np
import onnx
from onnx.reference import ReferenceEvaluator

from minimlc.frontend.onnx_ops import NodeError
from minimlc.frontend.onnx_sequence import CONVERTERS as SEQUENCE_CONVERTERS

DEFAULT_DOMAINS = ("", "ai.onnx")

SHAPE_OPS = frozenset({"Shape", "Size"})
"""Ops whose outputs are constants for any input, since every tensor's shape is static."""

_NONDETERMINISTIC = frozenset(
    {
        "Bernoulli",
        "Multinomial",
        "RandomNormal",
        "RandomNormalLike",
        "RandomUniform",
        "RandomUniformLike",
    }
)


def is_foldable(node: onnx.NodeProto, is_constant: Callable[[str], bool]) -> bool:
    """Whether `node` is evaluated at import time: a deterministic default-domain node, without subgraphs or
    sequence and optional results (`onnx_sequence` keeps those), whose (present) inputs are all constants."""
    if node.domain not in DEFAULT_DOMAINS or node.op_type in _NONDETERMINISTIC or node.op_type in SEQUENCE_CONVERTERS:
        return False
    if any(
        a.type in (onnx.AttributeProto.GRAPH, onnx.AttributeProto.GRAPHS) for a in node.attribute
    ):
        return False
    return all(is_constant(name) for name in node.input if name)


def is_constant_output(node: onnx.NodeProto, is_constant: Callable[[str], bool]) -> bool:
    """Whether the outputs of `node` are compile-time constants."""
    shape_op = node.domain in DEFAULT_DOMAINS and node.op_type in SHAPE_OPS
    return shape_op or is_foldable(node, is_constant)


def _one_node_graph(node: onnx.NodeProto) -> onnx.GraphProto:
    """`node` alone in a graph: the evaluator honours the model's opsets for a graph, not for a bare node."""
    inputs = [
        onnx.helper.make_empty_tensor_value_info(name) for name in dict.fromkeys(node.input) if name
    ]
    outputs = [onnx.helper.make_empty_tensor_value_info(name) for name in node.output if name]
    return onnx.helper.make_graph([node], "fold", inputs, outputs)


def fold(
    node: onnx.NodeProto, inputs: Sequence[np.ndarray | None], opsets: Mapping[str, int]
) -> list[np.ndarray]:
    """Evaluate `node` on constant `inputs` (None for an omitted optional input); one array per output."""
    feeds = {name: array for name, array in zip(node.input, inputs) if name and array is not None}
    try:
        # Folding computes what the model asks for, infinities and NaNs included: no warnings about them.
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            outputs = ReferenceEvaluator(_one_node_graph(node), opsets=dict(opsets)).run(
                None, feeds
            )
    except Exception as error:  # the reference evaluator raises anything from any op implementation
        raise NodeError(
            f"cannot evaluate the node at import time: {type(error).__name__}: {error}"
        ) from error
    return [np.asarray(output) for output in outputs]
