"""A decoder rewritten to project only the last position onto the vocabulary: `last_position_logits`.

Generation reads the logits of the last position only (each step's next id comes from them), yet an exporter's
model projects every position: a prompt of 128 tokens through a 896 x 32,000 head is 7.3 GFLOP, 7% of a 0.5b
model's prefill, for 127 rows nobody reads (transformers' `generate` asks for one row too: `logits_to_keep=1`). Where
the logits are `MatMul(hidden, weight)` (or a `MatMulNBits`) with an initializer as the weight, the rewrite takes
the last position of `hidden` before the product (a Gather at index -1, which run-time sequence lengths import;
a Slice from -1 of a run-time axis does not):

    logits = MatMul(hidden, lm_head)                      ->  hidden.last = Gather(hidden, [-1], axis=1)
        logits [batch, sequence, vocab] (output)              logits = MatMul(hidden.last, lm_head)
                                                                  logits [batch, 1, vocab] (output)

A decode step (one position) computes what it did; a prefill computes one row of the head. Logits made any other
way leave the model as it is (`None`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

PROJECTIONS = ("MatMul", "MatMulNBits")


def last_position_logits(model: onnx.ModelProto, logits: str) -> onnx.ModelProto | None:
    """`model` (not changed) with output `logits` computed for the last position of axis 1 only (the module
    docstring); None where `logits` is not a rank-3 output made by a MatMul (or MatMulNBits) of an initializer."""
    graph = model.graph
    producer = next((node for node in graph.node if logits in node.output), None)
    weights = {tensor.name: tensor for tensor in graph.initializer}
    output = next(info for info in graph.output if info.name == logits)
    if producer is None or producer.op_type not in PROJECTIONS or len(output.type.tensor_type.shape.dim) != 3:
        return None
    weight = weights.get(producer.input[1])
    if weight is None or (producer.op_type == "MatMul" and len(weight.dims) != 2):
        return None
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    graph = rewritten.graph
    hidden = producer.input[0]
    last = f"{hidden}.last"
    graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), f"{last}.index"))
    index = next(i for i, node in enumerate(graph.node) if logits in node.output)
    graph.node[index].input[0] = last
    graph.node.insert(index, helper.make_node("Gather", [hidden, f"{last}.index"], [last], axis=1))
    declared = next(info for info in graph.output if info.name == logits)
    position = declared.type.tensor_type.shape.dim[1]
    position.Clear()
    position.dim_value = 1
    return rewritten
