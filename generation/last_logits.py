"""A decoder rewritten to compute its last position only where nothing else reads the others: `last_position_logits`.

Generation reads the logits of the last position only (each step's next id comes from them), yet an exporter's
model projects every position: a prompt of 128 tokens through a 896 x 32,000 head is 7.3 GFLOP, 7% of a 0.5b
model's prefill, for 127 rows nobody reads (transformers' `generate` asks for one row too: `logits_to_keep=1`). The
same holds for the whole tail of the last layer after its attention (output projection, residuals, norm, MLP: 4%).

The rewrite finds that tail: walking back from the logits output, a node joins it when it works position by position
along axis 1 (`row_wise`: elementwise ops, reductions over the last axis, a MatMul or MatMulNBits of an initializer)
and everything that reads its outputs is in the tail. Its inputs from outside the tail (rank 3: `[batch, sequence,
hidden]`) are taken at the last position by `Gather(x, [-1], axis=1)` (which imports with a run-time sequence; a
Slice from -1 of a run-time axis does not), so every node of the tail computes one position:

    h = Add(x, attended); n = RMSNorm(h); y = h + MLP(n); logits = MatMul(RMSNorm(y), lm_head)
    ->  x.last = Gather(x, [-1], axis=1); attended.last = Gather(attended, [-1], axis=1)
        h = Add(x.last, attended.last); ... logits = MatMul(RMSNorm(y), lm_head)       logits [batch, 1, vocab]

A decode step (one position) computes what it did. Ranks come from ONNX shape inference; a value of unknown rank
ends the tail. Logits not made by a MatMul of an initializer leave the model as it is (`None`).
"""

from __future__ import annotations

import numpy as np
import onnx
from onnx import helper, numpy_helper

PROJECTIONS = ("MatMul", "MatMulNBits")
ELEMENTWISE = frozenset(
    ("Add", "Sub", "Mul", "Div", "Pow", "Sqrt", "Reciprocal", "Neg", "Sigmoid", "Tanh", "Erf", "Relu", "Cast")
)
REDUCTIONS = frozenset(("ReduceMean", "ReduceSum", "ReduceMax", "ReduceMin"))


def last_position_logits(model: onnx.ModelProto, logits: str) -> onnx.ModelProto | None:
    """`model` (not changed) with output `logits` and the tail of nodes only it reads computed for the last position
    of axis 1 (the module docstring); None where `logits` is not a rank-3 output made by a MatMul (or MatMulNBits)
    of an initializer."""
    graph = model.graph
    producer = next((node for node in graph.node if logits in node.output), None)
    weights = {tensor.name: tensor for tensor in graph.initializer}
    output = next(info for info in graph.output if info.name == logits)
    if producer is None or producer.op_type not in PROJECTIONS or len(output.type.tensor_type.shape.dim) != 3:
        return None
    weight = weights.get(producer.input[1])
    if weight is None or (producer.op_type == "MatMul" and len(weight.dims) != 2):
        return None
    ranks = _ranks(model)
    ranks[producer.input[0]] = 3  # a rank-3 output of a MatMul by a 2-D weight
    tail = _tail(graph, producer, weights, ranks)
    rewritten = onnx.ModelProto()
    rewritten.CopyFrom(model)
    graph = rewritten.graph
    produced = {name for node in graph.node if id_of(node) in tail for name in node.output}
    gathered: dict[str, str] = {}
    nodes: list[onnx.NodeProto] = []
    index = f"{logits}.last_position"
    for node in graph.node:
        if id_of(node) in tail:
            for position, name in enumerate(node.input):
                if name in produced or name in weights or ranks.get(name) != 3:
                    continue
                if name not in gathered:
                    gathered[name] = f"{name}.last"
                    nodes.append(helper.make_node("Gather", [name, index], [gathered[name]], axis=1))
                node.input[position] = gathered[name]
        nodes.append(node)
    graph.initializer.append(numpy_helper.from_array(np.array([-1], np.int64), index))
    del graph.node[:]
    graph.node.extend(nodes)
    kept = [info for info in graph.value_info if info.name not in produced]
    del graph.value_info[:]
    graph.value_info.extend(kept)
    position = next(info for info in graph.output if info.name == logits).type.tensor_type.shape.dim[1]
    position.Clear()
    position.dim_value = 1
    return rewritten


def id_of(node: onnx.NodeProto) -> tuple[str, ...]:
    """A node's identity across copies of its model: its outputs."""
    return tuple(node.output)


def _ranks(model: onnx.ModelProto) -> dict[str, int]:
    """The rank of every value ONNX shape inference gives one (inputs, outputs and intermediates; none after an op
    it has no schema for, such as com.microsoft's MatMulNBits, whose model's tail is then its head alone)."""
    inferred = onnx.shape_inference.infer_shapes(model, strict_mode=False)
    infos = [*inferred.graph.input, *inferred.graph.output, *inferred.graph.value_info]
    return {
        info.name: len(info.type.tensor_type.shape.dim) for info in infos if info.type.tensor_type.HasField("shape")
    }


def _tail(graph: onnx.GraphProto, head: onnx.NodeProto, weights, ranks: dict[str, int]) -> set[tuple[str, ...]]:
    """The nodes, from `head` back, that work position by position and whose outputs only nodes of the tail read."""
    readers: dict[str, list[onnx.NodeProto]] = {}
    for node in graph.node:
        for name in node.input:
            readers.setdefault(name, []).append(node)
    outputs = {info.name for info in graph.output}
    tail = {id_of(head)}
    for node in reversed(graph.node):
        if node is head or not node.output or any(name in outputs for name in node.output):
            continue
        read_only_by_tail = all(
            name in readers and all(id_of(reader) in tail for reader in readers[name]) for name in node.output
        )
        if read_only_by_tail and _row_wise(node, weights, ranks):
            tail.add(id_of(node))
    return tail


def _row_wise(node: onnx.NodeProto, weights, ranks: dict[str, int]) -> bool:
    """Whether `node`'s rank-3 output at a position of axis 1 depends on that position of its inputs only."""
    if len(node.output) != 1 or ranks.get(node.output[0]) != 3 or node.domain not in ("", "com.microsoft"):
        return False
    if node.op_type in PROJECTIONS:
        return (
            ranks.get(node.input[0]) == 3
            and node.input[1] in weights
            and all(name in weights for name in node.input[1:] if name)
        )
    if node.op_type in REDUCTIONS:
        axes = [attribute.ints for attribute in node.attribute if attribute.name == "axes"]
        if len(node.input) > 1 and node.input[1] in weights:
            axes.append(numpy_helper.to_array(weights[node.input[1]]).ravel().tolist())
        keepdims = next((attribute.i for attribute in node.attribute if attribute.name == "keepdims"), 1)
        return ranks.get(node.input[0]) == 3 and keepdims == 1 and len(axes) == 1 and set(axes[0]) <= {-1, 2}
    if node.op_type in ELEMENTWISE:
        return all(_broadcasts(name, weights, ranks) for name in node.input if name)
    return False


def _broadcasts(name: str, weights, ranks: dict[str, int]) -> bool:
    """Whether an operand of an elementwise op with a rank-3 result is per position (rank 3: taken at the last one)
    or the same at every position (rank 0 or 1; a weight with a unit extent where it meets axis 1)."""
    if name in weights:
        dims = list(weights[name].dims)
        return len(dims) <= 1 or (len(dims) in (2, 3) and dims[-2] == 1)
    return ranks.get(name) in (0, 1, 3)
