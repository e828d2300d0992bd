"""Core graph ops: weights, constants, GEMM/MatMul, softmax, reshape, transpose.

Shared shape helpers and op base classes (elementwise binary and unary, used by `elementwise` and `activation`)
live here too; see the package docstring for the dialect itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    I64,
    DenseArrayBase,
    Float4E2M1FNType,
    Float8E4M3FNType,
    Float8E4M3FNUZType,
    Float8E5M2FNUZType,
    Float8E5M2Type,
    Float8E8M0FNUType,
    Float32Type,
    FloatAttr,
    IntegerAttr,
    StringAttr,
    TensorType,
    IntegerType,
    Signedness,
    UnitAttr,
    bf16,
    f16,
    f32,
    f64,
    i1,
    i8,
    i16,
    i32,
    i64,
)
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    opt_prop_def,
    prop_def,
    result_def,
    traits_def,
)
from xdsl.traits import Pure
from xdsl.utils.exceptions import VerifyException

__all__ = [
    "BOOL",
    "ELEMENT_TYPES",
    "FLOATS",
    "HALF_FLOATS",
    "STORAGE_ONLY",
    "INDICES",
    "INTEGERS",
    "NUMBERS",
    "UNSIGNED",
    "AnyTensor",
    "BinaryShapeRuleOp",
    "ConstantOp",
    "ElementwiseBinaryOp",
    "ElementwiseUnaryOp",
    "F32Tensor",
    "GemmOp",
    "MatMulOp",
    "ReshapeOp",
    "Shape",
    "SoftmaxOp",
    "TransposeOp",
    "WeightOp",
    "broadcast_shapes",
    "check_elements",
    "check_result_element",
    "check_result_shape",
    "element_type",
    "is_unsigned",
    "matmul_shape",
    "shape_of",
    "tensor_type",
]

Shape = tuple[int, ...]


def shape_of(value: SSAValue | Attribute) -> Shape:
    """The static shape of a tensor value or type."""
    ty = value.type if isinstance(value, SSAValue) else value
    assert isinstance(ty, TensorType), f"expected a tensor, got {ty}"
    return tuple(ty.get_shape())


def tensor_type(shape: Sequence[int], element: Attribute = f32) -> TensorType[Attribute]:
    """`tensor<shape x element>` (f32 unless given)."""
    return TensorType(element, list(shape))


def element_type(value: SSAValue | Attribute) -> Attribute:
    """The element type of a tensor value or type."""
    ty = value.type if isinstance(value, SSAValue) else value
    assert isinstance(ty, TensorType), f"expected a tensor, got {ty}"
    return ty.element_type


BOOL = i1
"""Bool tensors' element type (stored one byte per element, as numpy's bool)."""
UNSIGNED: tuple[Attribute, ...] = tuple(IntegerType(width, Signedness.UNSIGNED) for width in (8, 16, 32, 64))
"""uint8..uint64 tensors: `ui8`..`ui64`. Signed integers are signless (`i8`..`i64`); below te, all are signless and
the ops carry the signedness (see docs/DESIGN.md, "Element types")."""
INTEGERS: tuple[Attribute, ...] = (i8, i16, i32, i64, *UNSIGNED)
INDICES: tuple[Attribute, ...] = (i32, i64)
"""Element types of index tensors (ONNX's `Tind`)."""
FLOATS: tuple[Attribute, ...] = (f32, f64)
"""Floats computed natively, each in its own precision."""
NUMBERS: tuple[Attribute, ...] = (*FLOATS, *INTEGERS)
"""Element types of run-time numbers."""
HALF_FLOATS: tuple[Attribute, ...] = (f16, bf16)
"""Stored 16-bit and computed in f32: only casts, weights and arguments have them (the frontend casts around every
other op)."""
STORAGE_ONLY: tuple[Attribute, ...] = (
    Float8E4M3FNType(),
    Float8E4M3FNUZType(),
    Float8E5M2Type(),
    Float8E5M2FNUZType(),
    Float4E2M1FNType(),
    *(IntegerType(width, signedness) for width in (4, 2) for signedness in (Signedness.SIGNLESS, Signedness.UNSIGNED)),
    Float8E8M0FNUType(),
)
"""float8, float4 and 4- and 2-bit integers (one element per byte, in its low bits): only casts, data movement, weights
and arguments have them."""
ELEMENT_TYPES: tuple[Attribute, ...] = (*NUMBERS, BOOL, *HALF_FLOATS, *STORAGE_ONLY)
"""Every element type a graph tensor may have."""


def is_unsigned(element: Attribute) -> bool:
    """Whether `element` is an unsigned integer type (`ui8`..`ui64`)."""
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def check_elements(op: IRDLOperation, allowed: Sequence[Attribute], *values: SSAValue) -> Attribute:
    """The element type `values` share, which must be one of `allowed`; raises naming the op otherwise."""
    types = [element_type(value) for value in values]
    if any(t != types[0] for t in types):
        raise VerifyException(f"{op.name}: operand element types {', '.join(map(str, types))} differ")
    if types[0] not in allowed:
        raise VerifyException(
            f"{op.name}: element type {types[0]} is not supported (expected one of {', '.join(map(str, allowed))})"
        )
    return types[0]


def check_result_element(op: IRDLOperation, expected: Attribute) -> None:
    actual = element_type(op.results[0])
    if actual != expected:
        raise VerifyException(f"{op.name}: result element type {actual} does not match expected {expected}")


F32Attr = FloatAttr[Float32Type]


def f32_attr(value: float) -> FloatAttr[Float32Type]:
    """`value` as an f32 attribute."""
    return FloatAttr(value, f32)


def is_scalar(value: SSAValue) -> bool:
    """Whether a tensor value holds exactly one element."""
    return math.prod(shape_of(value)) == 1


def broadcast_shapes(*shapes: Shape) -> Shape | None:
    """Numpy (multidirectional) broadcasting of shapes; None when they are incompatible."""
    rank = max((len(s) for s in shapes), default=0)
    result: list[int] = []
    for axis in range(rank):
        dims = {s[axis - rank + len(s)] for s in shapes if axis - rank + len(s) >= 0}
        dims.discard(1)
        if len(dims) > 1:
            return None
        result.append(dims.pop() if dims else 1)
    return tuple(result)


def matmul_shape(lhs: Shape, rhs: Shape) -> Shape | None:
    """Result shape of numpy `matmul` (batch broadcasting, 1-D operands); None when incompatible."""
    if not lhs or not rhs:
        return None
    left = (1, *lhs) if len(lhs) == 1 else lhs
    right = (*rhs, 1) if len(rhs) == 1 else rhs
    if left[-1] != right[-2]:
        return None
    batch = broadcast_shapes(left[:-2], right[:-2])
    if batch is None:
        return None
    shape = (*batch, left[-2], right[-1])
    if len(lhs) == 1:
        shape = shape[:-2] + shape[-1:]
    if len(rhs) == 1:
        shape = shape[:-1]
    return shape


def check_result_shape(op: IRDLOperation, expected: Shape) -> None:
    actual = shape_of(op.results[0])
    if actual != expected:
        raise VerifyException(f"{op.name}: result shape {actual} does not match expected shape {expected}")


F32Tensor = TensorType.constr(f32)
"""A float32 tensor: the operands and results of float computations."""
AnyTensor = base(TensorType)
"""A tensor of any element type (`ELEMENT_TYPES`), for ops that verify their types themselves."""


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A handle to a named constant tensor in the weight store: `graph.weight "fc0.bias" : tensor<128xf32>`."""

    name = "graph.weight"
    weight_name = prop_def(StringAttr)
    result = result_def(AnyTensor)
    assembly_format = "$weight_name attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, weight_name: str, shape: Sequence[int], element: Attribute = f32):
        super().__init__(
            properties={"weight_name": StringAttr(weight_name)}, result_types=[tensor_type(shape, element)]
        )

    def verify_(self) -> None:
        check_elements(self, ELEMENT_TYPES, self.result)


@irdl_op_definition
class ConstantOp(IRDLOperation):
    """A tensor whose every element is `value`, for scalars the compiler introduces (model constants are weights):
    `graph.constant {value = 1.0e-05 : f32} : tensor<4xf32>`."""

    name = "graph.constant"
    value = prop_def(FloatAttr[Float32Type])
    result = result_def(F32Tensor)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, value: float, shape: Sequence[int]):
        super().__init__(properties={"value": FloatAttr(value, f32)}, result_types=[tensor_type(shape)])


class BinaryShapeRuleOp(IRDLOperation):
    """Base of two-operand ops whose result shape is a function of the operand shapes (`SHAPE_RULE`)."""

    lhs = operand_def(F32Tensor)
    rhs = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    traits = traits_def(Pure())
    SHAPE_RULE: ClassVar[Callable[[Shape, Shape], Shape | None]]
    RELATION: ClassVar[str]
    """How compatible operands are called in messages: `broadcast-compatible`, `matmul-compatible`."""

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = type(self).SHAPE_RULE(shape_of(lhs), shape_of(rhs))
        assert shape is not None, f"operands are not {self.RELATION}"
        super().__init__(operands=[lhs, rhs], result_types=[tensor_type(shape)])

    def verify_(self) -> None:
        lhs, rhs = shape_of(self.lhs), shape_of(self.rhs)
        shape = type(self).SHAPE_RULE(lhs, rhs)
        if shape is None:
            raise VerifyException(f"{self.name}: operand shapes {lhs} and {rhs} are not {self.RELATION}")
        check_result_shape(self, shape)


class ElementwiseBinaryOp(BinaryShapeRuleOp):
    """Base of binary ops with numpy broadcasting:
    `graph.add %a, %b : (tensor<2x3xf32>, tensor<3xf32>) -> tensor<2x3xf32>`.

    Both operands have one element type of `ELEMENTS`; the result has it too, or `RESULT` (i1 for comparisons)."""

    lhs = operand_def(AnyTensor)
    rhs = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    SHAPE_RULE: ClassVar[Callable[[Shape, Shape], Shape | None]] = staticmethod(broadcast_shapes)
    RELATION: ClassVar[str] = "broadcast-compatible"
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (f32,)
    RESULT: ClassVar[Attribute | None] = None

    def __init__(self, lhs: SSAValue, rhs: SSAValue):
        shape = broadcast_shapes(shape_of(lhs), shape_of(rhs))
        assert shape is not None, "operands are not broadcast-compatible"
        element = self.RESULT or element_type(lhs)
        IRDLOperation.__init__(self, operands=[lhs, rhs], result_types=[tensor_type(shape, element)])

    def verify_(self) -> None:
        super().verify_()
        element = check_elements(self, self.ELEMENTS, self.lhs, self.rhs)
        check_result_element(self, self.RESULT or element)


class ElementwiseUnaryOp(IRDLOperation):
    """Base of unary ops whose result has the operand's type, one of `ELEMENTS`: `graph.relu %x : tensor<2x3xf32>`."""

    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($result)"
    traits = traits_def(Pure())
    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (f32,)

    def __init__(self, input: SSAValue):
        super().__init__(operands=[input], result_types=[input.type])

    def verify_(self) -> None:
        check_elements(self, self.ELEMENTS, self.input)


@irdl_op_definition
class SoftmaxOp(IRDLOperation):
    """Softmax along one axis (ONNX opset-13 semantics), of f32 or f64:
    `graph.softmax %x {axis = 1 : i64} : tensor<1x10xf32>`."""

    name = "graph.softmax"
    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    axis = prop_def(IntegerAttr[I64])
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, axis: int):
        super().__init__(
            operands=[input], result_types=[input.type], properties={"axis": IntegerAttr(axis, i64)}
        )

    def verify_(self) -> None:
        check_elements(self, FLOATS, self.input)
        rank = len(shape_of(self.input))
        if not 0 <= self.axis.value.data < rank:
            raise VerifyException(f"{self.name}: axis {self.axis.value.data} is out of range for rank {rank}")


@irdl_op_definition
class GemmOp(IRDLOperation):
    """`alpha * op(a) @ op(b) + beta * c` with op = optional transpose and `c` broadcast to the result:
    `graph.gemm %a, %b, %c {trans_b} : (tensor<1x784xf32>, tensor<128x784xf32>, tensor<128xf32>) -> tensor<1x128xf32>`.
    """

    name = "graph.gemm"
    a = operand_def(F32Tensor)
    b = operand_def(F32Tensor)
    c = opt_operand_def(F32Tensor)
    result = result_def(F32Tensor)
    alpha = opt_prop_def(FloatAttr[Float32Type], FloatAttr(1.0, f32))
    beta = opt_prop_def(FloatAttr[Float32Type], FloatAttr(1.0, f32))
    trans_a = opt_prop_def(UnitAttr)
    trans_b = opt_prop_def(UnitAttr)
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)"
    traits = traits_def(Pure())

    def __init__(
        self,
        a: SSAValue,
        b: SSAValue,
        c: SSAValue | None,
        *,
        alpha: float = 1.0,
        beta: float = 1.0,
        trans_a: bool = False,
        trans_b: bool = False,
    ):
        properties: dict[str, Attribute] = {"alpha": FloatAttr(alpha, f32), "beta": FloatAttr(beta, f32)}
        if trans_a:
            properties["trans_a"] = UnitAttr()
        if trans_b:
            properties["trans_b"] = UnitAttr()
        m = shape_of(a)[1 if trans_a else 0]
        n = shape_of(b)[0 if trans_b else 1]
        super().__init__(
            operands=[a, b, [] if c is None else [c]],
            result_types=[tensor_type((m, n))],
            properties=properties,
        )

    def verify_(self) -> None:
        a, b = shape_of(self.a), shape_of(self.b)
        if len(a) != 2 or len(b) != 2:
            raise VerifyException(f"{self.name}: operands must be 2-D, got shapes {a} and {b}")
        m, k = a[::-1] if self.trans_a else a
        kb, n = b[::-1] if self.trans_b else b
        if k != kb:
            raise VerifyException(
                f"{self.name}: inner dimensions differ: op(a) is {(m, k)} and op(b) is {(kb, n)}"
            )
        if self.c is not None:
            c = shape_of(self.c)
            if len(c) > 2 or broadcast_shapes(c, (m, n)) != (m, n):
                raise VerifyException(f"{self.name}: bias shape {c} does not broadcast to the result shape {(m, n)}")
        check_result_shape(self, (m, n))


@irdl_op_definition
class MatMulOp(BinaryShapeRuleOp):
    """Numpy `matmul` (batched, broadcasting): `graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>`."""

    name = "graph.matmul"
    SHAPE_RULE: ClassVar[Callable[[Shape, Shape], Shape | None]] = staticmethod(matmul_shape)
    RELATION: ClassVar[str] = "matmul-compatible"


@irdl_op_definition
class ReshapeOp(IRDLOperation):
    """Same elements in row-major order, new shape (ONNX Reshape and Flatten):
    `graph.reshape %x : tensor<1x1x28x28xf32> -> tensor<1x784xf32>`."""

    name = "graph.reshape"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, shape: Sequence[int]):
        super().__init__(operands=[input], result_types=[tensor_type(shape, element_type(input))])

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        source, target = shape_of(self.input), shape_of(self.result)
        if math.prod(source) != math.prod(target):
            raise VerifyException(
                f"{self.name}: cannot reshape {source} ({math.prod(source)} elements) "
                f"to {target} ({math.prod(target)} elements)"
            )


@irdl_op_definition
class TransposeOp(IRDLOperation):
    """Permute dimensions, result dim i = input dim perm[i]:
    `graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>`."""

    name = "graph.transpose"
    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    perm = prop_def(DenseArrayBase.constr(i64))
    irdl_options = (ParsePropInAttrDict(),)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"
    traits = traits_def(Pure())

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        source = shape_of(input)
        super().__init__(
            operands=[input],
            result_types=[tensor_type([source[p] for p in perm], element_type(input))],
            properties={"perm": DenseArrayBase.from_list(i64, perm)},
        )

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        perm = self.perm.get_values()
        source = shape_of(self.input)
        if sorted(perm) != list(range(len(source))):
            raise VerifyException(f"{self.name}: perm {list(perm)} is not a permutation of 0..{len(source) - 1}")
        check_result_shape(self, tuple(source[p] for p in perm))


OPS = [
    WeightOp,
    ConstantOp,
    SoftmaxOp,
    GemmOp,
    MatMulOp,
    ReshapeOp,
    TransposeOp,
]
