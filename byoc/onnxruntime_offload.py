"""The ONNX Runtime target of BYOC: each region `graph-partition{target=onnxruntime}` outlined becomes an ONNX model
(one node per graph op), run by an `onnxruntime.InferenceSession` from a Python external function registered as
`onnxruntime.<hash>`. It shows that a target is only a support predicate and a code generator: this one generates
no code at all.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
from onnx import TensorProto, helper
from xdsl.dialects import func
from xdsl.ir import Operation

from minimlc.dialects import graph

_ELEMENTWISE = {
    graph.AddOp: "Add",
    graph.SubOp: "Sub",
    graph.MulOp: "Mul",
    graph.ReluOp: "Relu",
    graph.SigmoidOp: "Sigmoid",
    graph.TanhOp: "Tanh",
    graph.MatMulOp: "MatMul",
}


def region_sessions(regions: Sequence[tuple[str, func.FuncOp]]) -> dict[str, Callable[..., None]]:
    """Per region (name, outlined function): a destination-passing function running it in ONNX Runtime."""
    import onnxruntime

    functions: dict[str, Callable[..., None]] = {}
    for name, function in regions:
        model = region_model(name, function)
        options = onnxruntime.SessionOptions()
        options.intra_op_num_threads = 1  # the model's own thread pool is not this one
        session = onnxruntime.InferenceSession(model.SerializeToString(), options, providers=["CPUExecutionProvider"])
        functions[name] = _destination_passing(session, len(function.body.block.args))
    return functions


def region_model(name: str, function: func.FuncOp) -> Any:
    """The outlined region as an ONNX model: inputs `in<k>`, outputs `out<k>`, one node per op."""
    block = function.body.block
    returned = block.last_op
    assert isinstance(returned, func.ReturnOp)
    names = {arg: f"in{index}" for index, arg in enumerate(block.args)}
    for index, value in enumerate(returned.arguments):
        names[value] = f"out{index}"
    nodes = []
    for op in block.ops:
        if op is returned:
            continue
        for result in op.results:
            names.setdefault(result, f"t{len(names)}")
        nodes.append(_node(op, [names[v] for v in op.operands], [names[r] for r in op.results]))

    def info(value: Any) -> Any:
        return helper.make_tensor_value_info(names[value], TensorProto.FLOAT, list(graph.shape_of(value)))

    onnx_graph = helper.make_graph(
        nodes, name, [info(a) for a in block.args], [info(v) for v in returned.arguments]
    )
    return helper.make_model(onnx_graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def _node(op: Operation, inputs: list[str], outputs: list[str]) -> Any:
    if type(op) in _ELEMENTWISE:
        return helper.make_node(_ELEMENTWISE[type(op)], inputs, outputs)
    if isinstance(op, graph.ConvOp):
        return helper.make_node(
            "Conv",
            inputs,
            outputs,
            strides=list(op.strides.get_values()),
            pads=list(op.pads.get_values()),
            dilations=list(op.dilations.get_values()),
            group=op.group.value.data,
        )
    if isinstance(op, graph.GemmOp):
        return helper.make_node(
            "Gemm",
            inputs,
            outputs,
            alpha=op.alpha.value.data,
            beta=op.beta.value.data,
            transA=int(op.trans_a is not None),
            transB=int(op.trans_b is not None),
        )
    raise NotImplementedError(f"BYOC target 'onnxruntime' has no ONNX node for '{op.name}'")


def _destination_passing(session: Any, count: int) -> Callable[..., None]:
    names = [f"in{index}" for index in range(count)]

    def run(*buffers: np.ndarray) -> None:
        results = session.run(None, dict(zip(names, buffers[:count])))
        for out, result in zip(buffers[count:], results):
            out[...] = result

    return run
