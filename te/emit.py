"""`te.create_function`: Python tensor expressions -> a `func.func` of `te.compute`s (the `te` dialect).

    A = te.placeholder((4, 8), name="A")
    B = te.compute((4, 8), lambda i, j: te.max(A[i, j], 0.0), name="relu")
    print(te.create_function([A, B], name="relu"))
    // func.func @relu(%A: tensor<4x8xf32>) -> tensor<4x8xf32> {
    //   %relu = te.compute "relu" (%i, %j) -> tensor<4x8xf32> { ... te.yield %1 : f32 }
    //   func.return %relu : tensor<4x8xf32>
    // }

The arguments list the placeholders (the function's inputs, in order) and then the computed tensors it returns
(its results, in order); every other compute they depend on becomes an intermediate `te.compute`. Each compute's tag
and result are named after it, its index arguments after the lambda's parameters and the reduction axes (so the
loops `te-to-loop` makes carry those names). A read whose index is not provably inside the tensor is clamped into
it (as graph-to-te's padded windows are), so a `te.if_then_else` guarding it never reads out of bounds.
"""

from __future__ import annotations

from collections.abc import Sequence

from xdsl.builder import ImplicitBuilder
from xdsl.dialects import arith, func, math
from xdsl.dialects.builtin import (
    FloatAttr,
    IndexType,
    IntegerAttr,
    IntegerType,
    TensorType,
    f32,
    i1,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue

from minimlc.dialects import te
from minimlc.te.expr import (
    Binary,
    Call,
    Cast,
    Compare,
    Const,
    Expr,
    IterVar,
    Read,
    Reduce,
    Select,
    TEError,
    index_range,
    nodes,
)
from minimlc.te.tensor import Tensor

ELEMENT_TYPES: dict[str, Attribute] = {"float32": f32, "int32": i32, "int64": i64, "bool": i1, "index": IndexType()}
_FLOAT_OPS = {"add": arith.AddfOp, "sub": arith.SubfOp, "mul": arith.MulfOp, "div": arith.DivfOp}
_FLOAT_OPS |= {"max": arith.MaximumfOp, "min": arith.MinimumfOp}
_INT_OPS = {"add": arith.AddiOp, "sub": arith.SubiOp, "mul": arith.MuliOp, "floordiv": arith.FloorDivSIOp}
_INT_OPS |= {"max": arith.MaxSIOp, "min": arith.MinSIOp, "and": arith.AndIOp, "or": arith.OrIOp}
_FLOAT_PREDICATES = {"lt": "olt", "le": "ole", "gt": "ogt", "ge": "oge", "eq": "oeq", "ne": "une"}
_INT_PREDICATES = {"lt": "slt", "le": "sle", "gt": "sgt", "ge": "sge", "eq": "eq", "ne": "ne"}
_MATH = {"exp": math.ExpOp, "log": math.LogOp, "sqrt": math.SqrtOp, "tanh": math.TanhOp, "abs": math.AbsFOp}


def tensor_type(tensor: Tensor) -> TensorType[Attribute]:
    return TensorType(ELEMENT_TYPES[tensor.dtype], tensor.shape)


def create_function(args: Sequence[Tensor], name: str = "main") -> func.FuncOp:
    """A `func.FuncOp` named `name` whose body is `te.compute`s: placeholders in `args` are its parameters, the
    computes in `args` its results (TVM's `te.create_prim_func`, returning tensors instead of writing buffers).

    The result is the te-dialect function op itself (`xdsl.dialects.func.FuncOp`, not inside a module): print it,
    parse it back with `mini-opt`, lower it with `minimlc.build` or schedule it with `minimlc.schedule.Schedule`.
    Raises TEError for a placeholder listed after a compute, a compute reading a placeholder not in `args`, or two
    tensors of one name."""
    inputs = [tensor for tensor in args if tensor.is_placeholder]
    outputs = [tensor for tensor in args if not tensor.is_placeholder]
    if not outputs:
        raise TEError(f"create_function '{name}': no computed tensor among the arguments (nothing to return)")
    first_output = next(position for position, tensor in enumerate(args) if not tensor.is_placeholder)
    if any(tensor.is_placeholder for tensor in args[first_output:]):
        raise TEError(f"create_function '{name}': list the placeholders (inputs) first, then the outputs")
    if len(set(map(id, args))) != len(args):
        raise TEError(f"create_function '{name}': a tensor is listed twice")
    computes = _computes_in_order(outputs)
    _check_names(name, inputs, computes)
    function = func.FuncOp(name, ([tensor_type(t) for t in inputs], [tensor_type(t) for t in outputs]))
    values: dict[Tensor, SSAValue] = dict(zip(inputs, function.body.block.args))
    for tensor, argument in values.items():
        argument.name_hint = tensor.name
    with ImplicitBuilder(function.body.block):
        for compute in computes:
            values[compute] = _emit_compute(compute, values, name)
        func.ReturnOp(*(values[tensor] for tensor in outputs))
    return function


def create_prim_func(args: Sequence[Tensor], name: str = "main") -> func.FuncOp:
    """TVM's name for `create_function`, so that seed code ports by changing the import."""
    return create_function(args, name)


def _computes_in_order(outputs: Sequence[Tensor]) -> list[Tensor]:
    """Every compute the outputs depend on, producers before consumers (post-order)."""
    ordered: dict[Tensor, None] = {}

    def visit(tensor: Tensor, path: tuple[str, ...]) -> None:
        if tensor.is_placeholder or tensor in ordered:
            return
        assert tensor.body is not None
        for read in _reads(tensor.body):
            visit(read.tensor, (*path, tensor.name))
        ordered[tensor] = None

    for output in outputs:
        visit(output, ())
    return list(ordered)


def _reads(body: Expr) -> list[Read]:
    return [expr for expr in nodes(body) if isinstance(expr, Read)]


def _check_names(name: str, inputs: Sequence[Tensor], computes: Sequence[Tensor]) -> None:
    bodies = [compute.body for compute in computes if compute.body is not None]
    read = {r.tensor for body in bodies for r in _reads(body) if r.tensor.is_placeholder}
    missing = sorted(t.name for t in read if t not in set(inputs))
    if missing:
        listed = ", ".join(missing)
        raise TEError(f"create_function '{name}': placeholder(s) {listed} are read but not in the arguments")
    names = [t.name for t in (*inputs, *computes)]
    duplicated = sorted({n for n in names if names.count(n) > 1})
    if duplicated:
        raise TEError(f"create_function '{name}': several tensors are named {', '.join(duplicated)}; name them apart")


def _emit_compute(compute: Tensor, values: dict[Tensor, SSAValue], function: str) -> SSAValue:
    body = compute.body
    assert body is not None
    reduction = body if isinstance(body, Reduce) else None
    reduce_axes = reduction.axes if reduction is not None else ()
    block = te.ComputeOp.block_for(compute.shape, [axis.extent for axis in reduce_axes])
    emitter = _BodyEmitter(values)
    for axis, argument in zip((*compute.axes, *reduce_axes), block.args):
        argument.name_hint = axis.name
        emitter.indices[id(axis)] = argument
    with ImplicitBuilder(block):
        for axis in reduce_axes:
            if axis.start != 0:
                emitter.indices[id(axis)] = arith.AddiOp(emitter.indices[id(axis)], _index(axis.start)).result
        te.YieldOp(emitter.emit(reduction.source if reduction is not None else body))
    extents = [axis.extent for axis in reduce_axes]
    combiner = reduction.combiner if reduction is not None else None
    op = te.ComputeOp(compute.name, tensor_type(compute), block, extents, combiner)
    op.result.name_hint = compute.name
    return op.result


def _index(value: int) -> SSAValue:
    return arith.ConstantOp(IntegerAttr(value, IndexType())).result


class _BodyEmitter:
    """Emits expression trees as arith/math/te.read ops at the current implicit builder, each node once."""

    def __init__(self, tensors: dict[Tensor, SSAValue]):
        self.tensors = tensors
        self.indices: dict[int, SSAValue] = {}
        self.done: dict[int, SSAValue] = {}

    def emit(self, expr: Expr) -> SSAValue:
        if isinstance(expr, IterVar):
            return self.indices[id(expr)]
        if id(expr) not in self.done:
            self.done[id(expr)] = self._emit(expr)
        return self.done[id(expr)]

    def _emit(self, expr: Expr) -> SSAValue:
        if isinstance(expr, Const):
            return _constant(expr)
        if isinstance(expr, Read):
            indices = [self._in_bounds(index, extent) for index, extent in zip(expr.indices, expr.tensor.shape)]
            return te.ReadOp(self.tensors[expr.tensor], indices).result
        if isinstance(expr, Binary):
            return self._binary(expr)
        if isinstance(expr, Compare):
            lhs, rhs = self.emit(expr.lhs), self.emit(expr.rhs)
            if expr.lhs.dtype == "float32":
                return arith.CmpfOp(lhs, rhs, _FLOAT_PREDICATES[expr.op]).result
            return arith.CmpiOp(lhs, rhs, _INT_PREDICATES[expr.op]).result
        if isinstance(expr, Select):
            return arith.SelectOp(self.emit(expr.condition), self.emit(expr.then), self.emit(expr.otherwise)).result
        if isinstance(expr, Call):
            return self._call(expr)
        if isinstance(expr, Cast):
            return _cast(self.emit(expr.operand), expr.operand.dtype, expr.dtype)
        assert isinstance(expr, Reduce)  # _check_body admits a reduction only as the whole body
        raise TEError(f"te.{expr.combiner} must be the whole body of a compute")

    def _binary(self, expr: Binary) -> SSAValue:
        lhs, rhs = self.emit(expr.lhs), self.emit(expr.rhs)
        if expr.dtype == "float32":
            return _FLOAT_OPS[expr.op](lhs, rhs).result
        if expr.op == "floormod":
            quotient = arith.FloorDivSIOp(lhs, rhs).result
            return arith.SubiOp(lhs, arith.MuliOp(quotient, rhs).result).result
        return _INT_OPS[expr.op](lhs, rhs).result

    def _call(self, expr: Call) -> SSAValue:
        operand = self.emit(expr.operand)
        if expr.function != "sigmoid":
            return _MATH[expr.function](operand).result
        one = arith.ConstantOp(FloatAttr(1.0, f32)).result
        exp = math.ExpOp(arith.NegfOp(operand).result).result
        return arith.DivfOp(one, arith.AddfOp(one, exp).result).result

    def _in_bounds(self, index: Expr, extent: int) -> SSAValue:
        """`index`, clamped into [0, extent) unless its range is known to lie there."""
        value = self.emit(index)
        known = index_range(index)
        if known is None or known[0] < 0:
            value = arith.MaxSIOp(value, _index(0)).result
        if known is None or known[1] >= extent:
            value = arith.MinSIOp(value, _index(extent - 1)).result
        return value


def _constant(expr: Const) -> SSAValue:
    element = ELEMENT_TYPES[expr.dtype]
    if expr.dtype == "float32":
        return arith.ConstantOp(FloatAttr(float(expr.value), f32)).result
    return arith.ConstantOp(IntegerAttr(int(expr.value), element)).result


def _cast(value: SSAValue, source: str, target: str) -> SSAValue:
    """`value` of dtype `source` converted to `target` (integers are signed; bool converts as 0 or 1)."""
    if source == "bool":
        value = arith.ExtUIOp(value, i64).result
        source = "int64"
    if target == "bool":
        zero = _constant(Const(0.0 if source == "float32" else 0, source))
        return (arith.CmpfOp(value, zero, "une") if source == "float32" else arith.CmpiOp(value, zero, "ne")).result
    if source == "index":
        value, source = arith.IndexCastOp(value, i64).result, "int64"
    if target == "index":
        return arith.IndexCastOp(_cast(value, source, "int64"), IndexType()).result
    source_type, target_type = ELEMENT_TYPES[source], ELEMENT_TYPES[target]
    if source == target:
        return value
    if source == "float32":
        return arith.FPToSIOp(value, target_type).result
    if target == "float32":
        return arith.SIToFPOp(value, f32).result
    assert isinstance(source_type, IntegerType) and isinstance(target_type, IntegerType)
    if source_type.width.data < target_type.width.data:
        return arith.ExtSIOp(value, target_type).result
    return arith.TruncIOp(value, target_type).result
