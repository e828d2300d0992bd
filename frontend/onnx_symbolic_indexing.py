"""The symbolic importer's (`onnx_symbolic_rewrites.SymbolicImport`) rewrites of products and gathers whose static
forms do not take symbolic dimensions:

- Gemm or MatMul of a flattened value (GPT-2's Conv1D: view(-1, k), addmm, view(x.shape[:-1] + (n,))): run on the
  value it flattens, so that the view back to [batch, sequence, n] needs no split of batch*sequence;
- Gather along an axis of symbolic extent (rotary tables cut at the sequence length, then gathered at the position
  ids): graph.take, its indices checked against the run-time extent;
- GatherND of data with symbolic dimensions (CLIP's pooled output): a graph.take at each index tuple's position
  in the data flattened over the axes it indexes, computed with run-time strides.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any

import numpy as np
import onnx
from onnx import helper
from xdsl.dialects.builtin import i64
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.onnx_ops import ConstantValue, NodeContext
from minimlc.frontend.onnx_symbolic import Dims, Size, refuse
from minimlc.frontend.onnx_symbolic_dims import is_symbolic


def product(values: Sequence[Size]) -> Size:
    total: Size = 1
    for value in values:
        total = total * value
    return total


class SymbolicIndexing:
    """Mixed into `SymbolicImport`, whose `dims`, `flattened`, `of`, `broadcast_to` and `reshape_to` it uses."""

    dims: dict[SSAValue, Dims]
    flattened: dict[SSAValue, SSAValue]

    def takes_indexing(self, node: onnx.NodeProto, inputs: Sequence[Any]) -> bool:
        """Whether `node` is a product of a flattened value or a gather along a symbolic axis (handled here)."""
        data = inputs[0] if inputs else None
        if not isinstance(data, SSAValue):
            return False
        attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
        if node.op_type in ("Gemm", "MatMul") and data in self.flattened:
            return self._takes_flattened_product(attributes, inputs)
        dims = self.of(data)  # type: ignore[attr-defined]
        if node.op_type == "Gather":
            return is_symbolic(dims[attributes.get("axis", 0) % len(dims)])
        if node.op_type == "GatherND" and isinstance(inputs[1], SSAValue):
            tuple_size = shape_of(inputs[1])[-1]
            symbolic = any(is_symbolic(d) for d in dims)
            return symbolic and not attributes.get("batch_dims", 0) and 0 < tuple_size <= len(dims)
        return False

    # -- products of flattened values -------------------------------------------------------------------------

    @staticmethod
    def _takes_flattened_product(attributes: dict[str, Any], inputs: Sequence[Any]) -> bool:
        """B a 2-D constant or tensor, no transposed A, a bias of one row at most."""
        weight, bias = inputs[1], inputs[2] if len(inputs) > 2 else None
        rank = len(weight.array.shape) if isinstance(weight, ConstantValue) else len(shape_of(weight))
        bias_shape = () if bias is None else bias.array.shape if isinstance(bias, ConstantValue) else shape_of(bias)
        one_row = len(bias_shape) < 2 or (len(bias_shape) == 2 and bias_shape[0] == 1)
        return rank == 2 and not attributes.get("transA", 0) and one_row

    def _product_of_flattened(self, ctx, label, attributes, a, weight, bias=None):
        """Gemm(reshape(x, [-1, k]), B, C) as matmul(x, B) + C, then reshaped to 2-D and remembered as the
        flattening of the N-D result, which a reshape back to x's leading dimensions returns:

            graph.matmul %x, %w : (tensor<?x?x32xf32>, tensor<32x96xf32>) -> tensor<?x?x96xf32>
            graph.add ... ; graph.reshape ... {shape = array<i64: -1, 96>} -> tensor<?x96xf32>
        """
        origin = self.flattened[a]
        matrix = ctx.data(weight)
        if attributes.get("transB", 0):
            matrix = ctx.emit(graph.TransposeOp(matrix, [1, 0]))
        lead, width = self.of(origin)[:-1], shape_of(matrix)[1]  # type: ignore[attr-defined]
        value = ctx.emit(graph.MatMulOp(origin, matrix))
        if attributes.get("alpha", 1.0) != 1.0:
            value = ctx.emit(graph.MulOp(value, self._scalar(ctx, "alpha", attributes["alpha"])))
        if bias is not None:
            addend = ctx.data(bias)
            if attributes.get("beta", 1.0) != 1.0:
                addend = ctx.emit(graph.MulOp(addend, self._scalar(ctx, "beta", attributes["beta"])))
            if len(shape_of(addend)) == 2:
                addend = ctx.emit(graph.ReshapeOp(addend, shape_of(addend)[1:]))
            value = ctx.emit(graph.AddOp(value, addend))
        self.dims[value] = (*lead, width)
        return self.reshape_to(ctx, label, value, [product(lead), width])  # type: ignore[attr-defined]

    @staticmethod
    def _scalar(ctx: NodeContext, name: str, factor: float) -> SSAValue:
        return ctx.data(ConstantValue(f"{ctx.node.output[0]}.{name}", np.array(factor, np.float32)))

    _gemm = _product_of_flattened
    _matmul = _product_of_flattened

    # -- gathers along symbolic axes ----------------------------------------------------------------------------

    def _gather(self, ctx, label, attributes, data, indices):
        """graph.take of `data` along a symbolic axis; every index checked against the run-time extent."""
        x = ctx.data(data)
        dims = self.of(x)  # type: ignore[attr-defined]
        axis = attributes.get("axis", 0) % len(dims)
        index = ctx.data(indices)
        if graph.element_type(index) not in graph.INDICES:
            raise refuse(label, f"indices must be int32 or int64, got {graph.element_type(index)}")
        self.check_run_time_range(ctx, label, index, dims[axis], f"axis {axis} of extent {dims[axis]}")
        result = ctx.emit(graph.TakeOp(x, index, axis))
        index_dims = self.of(index)  # type: ignore[attr-defined]
        self.dims[result] = (*dims[:axis], *index_dims, *dims[axis + 1 :])
        return result

    def _gathernd(self, ctx, label, attributes, data, indices):
        """GatherND (batch_dims 0) of data with symbolic dimensions: each index tuple (i0, ..., ik-1) made one
        position of the first k axes flattened, sum(i_j * stride_j) with the strides at run time, and a graph.take
        of the flattened data there. CLIP's pooling, hidden[arange(batch), ids.argmax(-1)], is exported so."""
        x = ctx.data(data)
        dims, index_dims = self.of(x), self.of(indices)  # type: ignore[attr-defined]
        count, lead = shape_of(indices)[-1], index_dims[:-1]
        dtype = np.dtype(np.int32) if graph.element_type(indices) == graph.INDICES[0] else np.dtype(np.int64)
        rank = len(index_dims)
        position = None
        for j in range(count):
            part = ctx.emit(graph.SliceOp(indices, [0] * (rank - 1) + [j], [1] * rank,
                                          [*shape_of(indices)[:-1], 1]))
            self.dims[part] = (*lead, 1)
            part = self.reshape_to(ctx, label, part, lead)  # type: ignore[attr-defined]
            self.check_run_time_range(ctx, label, part, dims[j], f"axis {j} of data {list(map(str, dims))}")
            wrapped = ctx.emit(graph.AddOp(part, ctx.emit(graph.MulOp(
                ctx.emit(graph.CastOp(ctx.emit(graph.LessOp(part, self._index_constant(ctx, f"zero{j}", 0, dtype))),
                                      graph.element_type(indices))),
                self.extent_tensor(ctx, label, dims[j], 1, dtype)))))
            stride = product(dims[j + 1 : count])
            if stride != 1:
                scale = (self.extent_tensor(ctx, label, stride, 1, dtype) if is_symbolic(stride)
                         else self._index_constant(ctx, f"stride{j}", int(stride), dtype))
                wrapped = ctx.emit(graph.MulOp(wrapped, scale))
            position = wrapped if position is None else ctx.emit(graph.AddOp(position, wrapped))
            self.dims[position] = tuple(lead)
        flat = self.reshape_to(ctx, label, x, [product(dims[:count]), *dims[count:]])  # type: ignore[attr-defined]
        result = ctx.emit(graph.TakeOp(flat, position, 0))
        self.dims[result] = (*lead, *dims[count:])
        return result

    @staticmethod
    def _index_constant(ctx: NodeContext, name: str, value: int, dtype: np.dtype) -> SSAValue:
        return ctx.data(ConstantValue(f"{ctx.node.output[0]}.{name}", np.array([value], dtype)))

    def extent_tensor(self, ctx: NodeContext, label: str, size: Size, value: int, dtype: np.dtype) -> SSAValue:
        """A [1] tensor of `dtype` holding `value * size` at run time: a sum of `value`s broadcast to [size]."""
        unit = ConstantValue(f"{ctx.node.output[0]}.unit{value}", np.array([value], dtype))
        spread = self.broadcast_to(ctx, label, ctx.data(unit), [size])  # type: ignore[attr-defined]
        return ctx.emit(graph.ReduceSumOp(spread, [0], keepdims=True))

    def check_run_time_range(self, ctx: NodeContext, label: str, indices: SSAValue, size: Size, what: str) -> None:
        """The run-time check of `onnx_index_checks` with a symbolic bound: every index in [-size, size)."""
        dtype = np.dtype(np.int32) if graph.element_type(indices) == graph.INDICES[0] else np.dtype(np.int64)
        below = ctx.emit(graph.LessOp(indices, self.extent_tensor(ctx, label, size, -1, dtype)))
        above = ctx.emit(graph.GreaterOrEqualOp(indices, self.extent_tensor(ctx, label, size, 1, dtype)))
        bad = ctx.emit(graph.CastOp(ctx.emit(graph.OrOp(below, above)), i64))
        total = ctx.emit(graph.ReduceSumOp(bad, range(len(shape_of(indices))), keepdims=False))
        ctx.index_checks.append((ctx.emit(graph.ReshapeOp(total, (1,))), f"indices must lie in [-{size}, {size}) "
                                 f"({what})"))
