"""Core graph ops: weights, constants, GEMM/MatMul, softmax, reshape, transpose.

The op base classes of the other modules live here too: `GraphOp` (every op), `UnaryOp` and `SameTypeUnaryOp` (one
input), `AxisOp`, `BinaryShapeRuleOp`, `ElementwiseBinaryOp` and `ElementwiseUnaryOp`; the element types and shape
helpers they use live in `common` and are importable from here too. See the package docstring for the dialect itself.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

from xdsl.dialects.builtin import I64, Float32Type, FloatAttr, IntegerAttr, StringAttr, TensorType, UnitAttr, f32, i64
from xdsl.ir import Attribute, SSAValue
from xdsl.irdl import (
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
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

from minimlc.dialects.graph.common import (
    BOOL,
    DYNAMIC,
    ELEMENT_TYPES,
    FLOATS,
    HALF_FLOATS,
    INDICES,
    INPUT_SYMBOLS_ATTR,
    INTEGERS,
    NUMBERS,
    STORAGE_ONLY,
    UNSIGNED,
    AnyTensor,
    F32Tensor,
    I64Array,
    Shape,
    broadcast_shapes,
    check_axis,
    check_elements,
    check_result_element,
    check_result_shape,
    dims_agree,
    element_type,
    i64_array,
    is_unsigned,
    matmul_shape,
    shape_of,
    shown,
    tensor_type,
    unit_flags,
)

__all__ = [
    "BOOL",
    "DYNAMIC",
    "ELEMENT_TYPES",
    "FLOATS",
    "HALF_FLOATS",
    "INPUT_SYMBOLS_ATTR",
    "INDICES",
    "INTEGERS",
    "NUMBERS",
    "STORAGE_ONLY",
    "UNSIGNED",
    "AnyTensor",
    "AxisOp",
    "BinaryShapeRuleOp",
    "ConstantOp",
    "ElementwiseBinaryOp",
    "ElementwiseUnaryOp",
    "F32Tensor",
    "GemmOp",
    "GraphOp",
    "MatMulOp",
    "ReshapeOp",
    "SameTypeUnaryOp",
    "Shape",
    "SoftmaxOp",
    "TransposeOp",
    "UnaryOp",
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

class GraphOp(IRDLOperation):
    """Base of every graph op: pure (`cse` merges equal ones, `dce` drops unused ones), its properties spelled in the
    attribute dictionary of the custom form (`{axis = 1 : i64}`)."""

    irdl_options = (ParsePropInAttrDict(),)
    traits = traits_def(Pure())
    RUN_TIME_DIMS: ClassVar[bool] = False
    """Whether the op takes tensors with `?` dimensions (docs/design/symbolic_shapes.md); an op that does not is
    refused by its verifier when one of its types has one."""

    def verify(self, verify_nested_ops: bool = True) -> None:
        if not self.RUN_TIME_DIMS:
            types = [value.type for value in (*self.operands, *self.results)]
            if any(isinstance(t, TensorType) and DYNAMIC in t.get_shape() for t in types):
                raise VerifyException(f"{self.name}: does not take run-time dimensions (`?` in its types)")
        super().verify(verify_nested_ops)


VALUE_BITS_ATTR = "minimlc.value_bits"
"""On an int8 `graph.weight`: the signed bits every value fits, found by the importer in the values
(`graph.weight "w" {minimlc.value_bits = 7 : i64} : tensor<8x16xi8>`); lowerings may rely on it, and the compiled
model refuses weights of that name that do not fit (`lowering/abi.py`, `EntrySignature.weight_bits`)."""


@irdl_op_definition
class WeightOp(GraphOp):
    """A handle to a named constant tensor in the weight store: `graph.weight "fc0.bias" : tensor<128xf32>`."""

    name = "graph.weight"
    weight_name = prop_def(StringAttr)
    result = result_def(AnyTensor)
    assembly_format = "$weight_name attr-dict `:` type($result)"

    def __init__(self, weight_name: str, shape: Sequence[int], element: Attribute = f32):
        super().__init__(
            properties={"weight_name": StringAttr(weight_name)}, result_types=[tensor_type(shape, element)]
        )

    def verify_(self) -> None:
        check_elements(self, ELEMENT_TYPES, self.result)


@irdl_op_definition
class ConstantOp(GraphOp):
    """A tensor whose every element is `value`, for scalars the compiler introduces (model constants are weights):
    `graph.constant {value = 1.0e-05 : f32} : tensor<4xf32>`."""

    name = "graph.constant"
    value = prop_def(FloatAttr[Float32Type])
    result = result_def(F32Tensor)
    assembly_format = "attr-dict `:` type($result)"

    def __init__(self, value: float, shape: Sequence[int]):
        super().__init__(properties={"value": FloatAttr(value, f32)}, result_types=[tensor_type(shape)])


class UnaryOp(GraphOp):
    """Base of one-input ops whose result type is spelled after the input's, the result shaped (and typed) by the op:
    `graph.reshape %x : tensor<2x3xf32> -> tensor<6xf32>`."""

    input = operand_def(AnyTensor)
    result = result_def(AnyTensor)
    assembly_format = "$input attr-dict `:` type($input) `->` type($result)"

    def __init__(
        self,
        input: SSAValue,
        shape: Sequence[int],
        element: Attribute | None = None,
        properties: Mapping[str, Attribute] | None = None,
    ):
        """The op of `input` with a result of `shape` and `element` (the input's element type unless given)."""
        element = element_type(input) if element is None else element
        super().__init__(operands=[input], result_types=[tensor_type(shape, element)], properties=properties or {})


class SameTypeUnaryOp(GraphOp):
    """Base of one-input ops whose result has the input's type, spelled once: `graph.relu %x : tensor<2x3xf32>`."""

    T: ClassVar = VarConstraint("T", AnyTensor)
    input = operand_def(T)
    result = result_def(T)
    assembly_format = "$input attr-dict `:` type($result)"

    def __init__(self, input: SSAValue, properties: Mapping[str, Attribute] | None = None):
        super().__init__(operands=[input], result_types=[input.type], properties=properties or {})


class BinaryShapeRuleOp(GraphOp):
    """Base of two-operand ops whose result shape is a function of the operand shapes (`SHAPE_RULE`)."""

    lhs = operand_def(F32Tensor)
    rhs = operand_def(F32Tensor)
    result = result_def(F32Tensor)
    assembly_format = "$lhs `,` $rhs attr-dict `:` `(` type($lhs) `,` type($rhs) `)` `->` type($result)"
    RUN_TIME_DIMS: ClassVar[bool] = True
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
            raise VerifyException(f"{self.name}: operand shapes {shown(lhs)} and {shown(rhs)} are not {self.RELATION}")
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


class ElementwiseUnaryOp(SameTypeUnaryOp):
    """Base of unary ops whose result has the operand's type, one of `ELEMENTS`: `graph.relu %x : tensor<2x3xf32>`."""

    ELEMENTS: ClassVar[tuple[Attribute, ...]] = (f32,)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def verify_(self) -> None:
        check_elements(self, self.ELEMENTS, self.input)


class AxisOp(SameTypeUnaryOp):
    """Base of same-type ops along one `axis` of the input (softmax, log-softmax):
    `graph.softmax %x {axis = 1 : i64} : tensor<1x10xf32>`."""

    axis = prop_def(IntegerAttr[I64])
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, axis: int):
        super().__init__(input, {"axis": IntegerAttr(axis, i64)})

    def verify_(self) -> None:
        check_axis(self, self.axis.value.data, len(shape_of(self.input)))


@irdl_op_definition
class SoftmaxOp(AxisOp):
    """Softmax along one axis (ONNX opset-13 semantics), of f32 or f64:
    `graph.softmax %x {axis = 1 : i64} : tensor<1x10xf32>`."""

    name = "graph.softmax"

    def verify_(self) -> None:
        check_elements(self, FLOATS, self.input)
        super().verify_()


@irdl_op_definition
class GemmOp(GraphOp):
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
    assembly_format = "$a `,` $b (`,` $c^)? attr-dict `:` functional-type(operands, results)"
    RUN_TIME_DIMS: ClassVar[bool] = True

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
        properties = {"alpha": FloatAttr(alpha, f32), "beta": FloatAttr(beta, f32)}
        properties |= unit_flags(trans_a=trans_a, trans_b=trans_b)
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
        if not dims_agree(k, kb):
            raise VerifyException(
                f"{self.name}: inner dimensions differ: op(a) is {(m, k)} and op(b) is {(kb, n)}"
            )
        if self.c is not None:
            c = shape_of(self.c)
            if len(c) > 2 or broadcast_shapes(c, (m, n)) != (m, n):
                raise VerifyException(
                    f"{self.name}: bias shape {shown(c)} does not broadcast to the result shape {shown((m, n))}"
                )
        check_result_shape(self, (m, n))


@irdl_op_definition
class MatMulOp(BinaryShapeRuleOp):
    """Numpy `matmul` (batched, broadcasting): `graph.matmul %a, %b : (tensor<2x3x4xf32>, tensor<4x5xf32>) -> tensor<2x3x5xf32>`."""

    name = "graph.matmul"
    SHAPE_RULE: ClassVar[Callable[[Shape, Shape], Shape | None]] = staticmethod(matmul_shape)
    RELATION: ClassVar[str] = "matmul-compatible"


@irdl_op_definition
class ReshapeOp(UnaryOp):
    """Same elements in row-major order, new shape (ONNX Reshape and Flatten):
    `graph.reshape %x : tensor<1x1x28x28xf32> -> tensor<1x784xf32>`.

    A result with `?` dimensions keeps ONNX's static target in `shape`, one entry per result axis: a size, 0 (the
    input's dimension on that axis) or -1 (the elements left over, at most once), so that each `?` follows from the
    input's dimensions: `graph.reshape %x {shape = array<i64: 0, 0, 12, 64>} : tensor<?x?x768xf32> ->
    tensor<?x?x12x64xf32>`."""

    name = "graph.reshape"
    shape = opt_prop_def(I64Array)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, shape: Sequence[int], target: Sequence[int] | None = None):
        """The reshape of `input` to `shape`; `target` (ONNX's form, 0 and -1) where `shape` has a `?`."""
        properties = {} if target is None else {"shape": i64_array(target)}
        super().__init__(input, shape, properties=properties)

    def verify_(self) -> None:
        check_result_element(self, check_elements(self, ELEMENT_TYPES, self.input))
        source, target = shape_of(self.input), shape_of(self.result)
        if self.shape is not None:
            self._verify_target(source, target, tuple(self.shape.get_values()))
        elif DYNAMIC in target:
            raise VerifyException(
                f"{self.name}: result shape {shown(target)} has run-time dimensions but no target `shape` "
                "(0 copies the input's dimension, -1 takes the rest)"
            )
        elif DYNAMIC in source:
            raise VerifyException(
                f"{self.name}: cannot reshape {shown(source)} to the static {target}: the element count of a run-time "
                "shape is not known to match"
            )
        elif math.prod(source) != math.prod(target):
            raise VerifyException(
                f"{self.name}: cannot reshape {source} ({math.prod(source)} elements) "
                f"to {target} ({math.prod(target)} elements)"
            )

    def _verify_target(self, source: Shape, target: Shape, spec: Shape) -> None:
        """The result shape is what the ONNX target `spec` gives `source`: sizes kept, 0 copied, -1 the rest."""
        if len(spec) != len(target) or spec.count(-1) > 1 or any(size < -1 for size in spec):
            raise VerifyException(
                f"{self.name}: target shape {list(spec)} must give each of the {len(target)} result axes a size, 0 "
                "or -1 (once)"
            )
        if any(size == 0 and axis >= len(source) for axis, size in enumerate(spec)):
            raise VerifyException(
                f"{self.name}: target shape {list(spec)} copies an axis the input {shown(source)} lacks"
            )
        expected = [source[axis] if size == 0 else size for axis, size in enumerate(spec)]
        rest = spec.index(-1) if -1 in spec else None
        known = [size for axis, size in enumerate(expected) if axis != rest]
        uncopied = source.count(DYNAMIC) - known.count(DYNAMIC)
        static_source = math.prod(size for size in source if size != DYNAMIC)
        static_known = math.prod(size for size in known if size != DYNAMIC)
        if rest is not None and uncopied:
            expected[rest] = DYNAMIC  # the elements of the uncopied `?`s, at run time
        elif rest is not None and static_known and static_source % static_known == 0:
            expected[rest] = static_source // static_known
        elif uncopied or static_source != static_known:
            raise VerifyException(
                f"{self.name}: target {list(spec)} does not keep the element count of input shape {shown(source)}"
            )
        if tuple(expected) != target:
            raise VerifyException(
                f"{self.name}: target {list(spec)} of input shape {shown(source)} gives {shown(tuple(expected))}, "
                f"not the result shape {shown(target)}"
            )


@irdl_op_definition
class TransposeOp(UnaryOp):
    """Permute dimensions, result dim i = input dim perm[i]:
    `graph.transpose %x {perm = array<i64: 1, 0>} : tensor<2x3xf32> -> tensor<3x2xf32>`."""

    name = "graph.transpose"
    perm = prop_def(I64Array)
    RUN_TIME_DIMS: ClassVar[bool] = True

    def __init__(self, input: SSAValue, perm: Sequence[int]):
        source = shape_of(input)
        super().__init__(input, [source[p] for p in perm], properties={"perm": i64_array(perm)})

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
