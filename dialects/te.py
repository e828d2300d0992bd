"""The `te` dialect: tensor expressions, TVM's `te.compute` as IR.

A `te.compute` defines every element of its result tensor by a scalar body over the output indices, optionally
folded over extra reduction indices with a combiner (sum, max, min, prod; maxnum: a max that passes over NaNs, NaN
only if every value is, as max pooling takes it). The body reads other tensors with
`te.read` and computes with `arith`/`math`; reads are the only way data enters a body, so inlining one compute into
another (TVM `compute_inline`) is a substitution of indices.

    %y = te.compute "matmul" (%i, %j) reduce sum (%k : 784) -> tensor<1x128xf32> {
      %a = te.read %x[%i, %k] : tensor<1x784xf32>
      %b = te.read %w[%j, %k] : tensor<128x784xf32>
      %p = arith.mulf %a, %b : f32
      te.yield %p : f32
    }

A dimension may be a run-time extent (`docs/design/symbolic_shapes.md`): `?` in the result type and `?` (-1 in
`reduce_extents`) for a reduction axis, each given by an `index` operand in brackets, outputs' then reductions':

    %n = te.dim %x[0] : tensor<?x768xf32>
    %s = te.compute "row_sum" (%i) [%n] reduce sum (%k : 768) -> tensor<?xf32> { ... }
    %t = te.compute "col_sum" (%j) reduce sum (%k : ?) [%n] -> tensor<768xf32> { ... }

`te.compute`, `te.read` and `te.yield` are built as `Operation.create` builds an op: the op IRDL's init gives for
the same arguments (each has at most one variadic operand group, so no segment sizes), without its check of each
argument against the definition, which took three quarters of building one (a model builds thousands).
"""

from __future__ import annotations

from collections.abc import Sequence
from functools import lru_cache
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    DenseArrayBase,
    FixedBitwidthType,
    IndexType,
    IntegerAttr,
    StringAttr,
    TensorType,
    i64,
)
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AnyAttr,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    irdl_op_definition,
    operand_def,
    opt_prop_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
    var_result_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import HasParent, IsTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

COMBINERS = ("sum", "max", "min", "prod", "maxnum", "max_nnan")
"""Reduction combiners a `te.compute` may use. `max` propagates NaN, `maxnum` passes over it, `max_nnan` may do
either: it is for maxima whose readers make a row holding a NaN all NaN whatever the maximum is (a softmax's row max,
read through `x - max` into the row's sum), and costs one `vmaxps` where `max` costs six instructions on x86."""

DYNAMIC_EXTENT = -1
"""A run-time reduction extent in `reduce_extents` (`?` in the text form; a `?` of a type is `DYNAMIC_INDEX`)."""

KERNEL_GROUP = "kernel_group"
"""The attribute (an integer) that makes consecutive computes one kernel, one loop nest each (`te-to-loop`): the
stages of a softmax or a normalisation, `attributes {kernel_group = 0 : i64}`; `te-inline` keeps them."""


def _static_bits(type: Attribute) -> int | None:
    """The bits of a static tensor or memref type whose elements have a fixed width, else None."""
    shape = getattr(type, "get_shape", lambda: None)()
    element = getattr(type, "element_type", None)
    if shape is None or DYNAMIC_INDEX in shape or not isinstance(element, FixedBitwidthType):
        return None
    bits = element.bitwidth
    for dim in shape:
        bits *= dim
    return bits


def check_same_size(op: Operation, source: SSAValue, result: SSAValue, what: str) -> None:
    """A view's check (`te.view`, `loop.view`): `source` and `result` are static `what` of the same size."""
    source_bits, result_bits = _static_bits(source.type), _static_bits(result.type)
    if source_bits is None or source_bits != result_bits:
        raise VerifyException(f"{op.name}: needs static {what} of the same size, got {source.type} to {result.type}")


@lru_cache(maxsize=1024)
def _extents_array(extents: tuple[int, ...]) -> DenseArrayBase:
    """The `array<i64: ...>` of a compute's reduction extents, made once per extents (building one verifies it, which
    every compute built would pay for again: an attribute is immutable, so the ops share it)."""
    return DenseArrayBase.from_list(i64, extents)


@irdl_op_definition
class ComputeOp(IRDLOperation):
    """A tensor defined elementwise by its body, optionally reduced over extra indices:
    `%y = te.compute "relu" (%i) -> tensor<8xf32> { ... te.yield %v : f32 }`. Run-time extents are `index`
    operands, one per `?` of the result type, then one per -1 of `reduce_extents`:
    `%y = te.compute "sum" (%i) [%n] reduce sum (%k : ?) [%s] -> tensor<?xf32> { ... }`. The body may use `index`
    values defined outside it (an extent, for a mean)."""

    name = "te.compute"
    tag = prop_def(StringAttr)
    reduce_extents = prop_def(DenseArrayBase[I64])
    combiner = opt_prop_def(StringAttr)
    dynamic_sizes = var_operand_def(IndexType())
    result = result_def(TensorType)
    body = region_def("single_block")
    traits = traits_def(RecursiveMemoryEffect())

    def __init__(
        self,
        tag: str,
        result_type: TensorType,
        body: Region | Block,
        reduce_extents: Sequence[int] = (),
        combiner: str | None = None,
        dynamic_sizes: Sequence[SSAValue] = (),
    ):
        properties: dict[str, Attribute] = {
            "tag": StringAttr(tag),
            "reduce_extents": _extents_array(tuple(reduce_extents)),
        }
        if combiner is not None:
            properties["combiner"] = StringAttr(combiner)
        Operation.__init__(  # as `create` builds it: see the module docstring
            self,
            operands=tuple(dynamic_sizes),
            result_types=(result_type,),
            regions=(body if isinstance(body, Region) else Region(body),),
            properties=properties,
        )

    @staticmethod
    def block_for(shape: Sequence[int], reduce_extents: Sequence[int] = ()) -> Block:
        """An empty body block with one index argument per output dimension and reduction axis."""
        return Block(arg_types=[IndexType()] * (len(shape) + len(reduce_extents)))

    @property
    def shape(self) -> tuple[int, ...]:
        assert isinstance(self.result.type, TensorType)
        return tuple(self.result.type.get_shape())

    @property
    def extents(self) -> tuple[int, ...]:
        """Extents of the reduction axes (empty for a pure elementwise compute)."""
        return self.reduce_extents.get_values()

    def output_extents(self) -> list[int | SSAValue]:
        """Each dimension of the result: its size, or the operand giving it at run time."""
        sizes = iter(self.dynamic_sizes)
        return [next(sizes) if extent == DYNAMIC_INDEX else extent for extent in self.shape]

    def reduce_extent_values(self) -> list[int | SSAValue]:
        """Each reduction extent: its size, or the operand giving it at run time."""
        sizes = iter(self.dynamic_sizes[self.shape.count(DYNAMIC_INDEX) :])
        return [next(sizes) if extent == DYNAMIC_EXTENT else extent for extent in self.extents]

    def has_run_time_extents(self) -> bool:
        """Whether the compute has a run-time extent or reads a tensor with a `?` dimension (the passes that plan
        static shapes, such as the convolution rewrites, leave such a compute alone)."""
        return bool(self.dynamic_sizes) or any(
            isinstance(op, ReadOp) and DYNAMIC_INDEX in op.tensor.type.get_shape()  # type: ignore[union-attr]
            for op in self.body.walk()
        )

    @property
    def output_indices(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[: len(self.shape)]

    @property
    def reduce_indices(self) -> tuple[SSAValue, ...]:
        return self.body.block.args[len(self.shape) :]

    @property
    def yield_op(self) -> YieldOp:
        terminator = self.body.block.last_op
        assert isinstance(terminator, YieldOp)
        return terminator

    def verify_(self) -> None:
        result_type = self.result.type
        assert isinstance(result_type, TensorType)
        expected_args = len(self.shape) + len(self.extents)
        args = self.body.block.args
        if len(args) != expected_args:
            raise VerifyException(
                f"{self.name} '{self.tag.data}': body has {len(args)} index arguments, expected {expected_args} "
                f"({len(self.shape)} output + {len(self.extents)} reduction)"
            )
        if any(not isinstance(arg.type, IndexType) for arg in args):
            raise VerifyException(f"{self.name} '{self.tag.data}': body arguments must be of type index")
        if bool(self.extents) != (self.combiner is not None):
            raise VerifyException(
                f"{self.name} '{self.tag.data}': a combiner is required exactly when there are reduction axes"
            )
        if self.combiner is not None and self.combiner.data not in COMBINERS:
            raise VerifyException(
                f"{self.name} '{self.tag.data}': unknown combiner '{self.combiner.data}' "
                f"(expected one of {', '.join(COMBINERS)})"
            )
        if any(extent <= 0 and extent != DYNAMIC_EXTENT for extent in self.extents):
            raise VerifyException(
                f"{self.name} '{self.tag.data}': reduction extents must be positive (or {DYNAMIC_EXTENT}, a run-time "
                "extent)"
            )
        if any(extent < 0 and extent != DYNAMIC_INDEX for extent in self.shape):
            raise VerifyException(
                f"{self.name} '{self.tag.data}': result dimensions must be sizes or '?' (DYNAMIC_INDEX), got "
                f"{self.shape}"
            )
        output_sizes, reduce_sizes = self.shape.count(DYNAMIC_INDEX), self.extents.count(DYNAMIC_EXTENT)
        if len(self.dynamic_sizes) != output_sizes + reduce_sizes:
            raise VerifyException(
                f"{self.name} '{self.tag.data}': has {len(self.dynamic_sizes)} size operands, expected "
                f"{output_sizes + reduce_sizes} ({output_sizes} for the result's '?' dimensions + {reduce_sizes} "
                "for run-time reduction extents)"
            )
        terminator = self.body.block.last_op
        if not isinstance(terminator, YieldOp):
            raise VerifyException(f"{self.name} '{self.tag.data}': body must end with te.yield")
        if KERNEL_GROUP in self.attributes and not isinstance(self.attributes[KERNEL_GROUP], IntegerAttr):
            raise VerifyException(f"{self.name} '{self.tag.data}': {KERNEL_GROUP} must be an integer attribute")
        if terminator.value.type != result_type.element_type:
            raise VerifyException(
                f"{self.name} '{self.tag.data}': yields {terminator.value.type} but the result element type "
                f"is {result_type.element_type}"
            )

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.tag)
        printer.print_string(" (")
        printer.print_list(self.output_indices, printer.print_ssa_value)
        printer.print_string(")")
        output_sizes = self.shape.count(DYNAMIC_INDEX)
        self._print_sizes(printer, self.dynamic_sizes[:output_sizes])
        if self.combiner is not None:
            printer.print_string(f" reduce {self.combiner.data} (")
            printer.print_list(
                zip(self.reduce_indices, self.extents),
                lambda pair: (
                    printer.print_ssa_value(pair[0]),
                    printer.print_string(f" : {'?' if pair[1] == DYNAMIC_EXTENT else pair[1]}"),
                ),
            )
            printer.print_string(")")
            self._print_sizes(printer, self.dynamic_sizes[output_sizes:])
        printer.print_string(" -> ")
        printer.print_attribute(self.result.type)
        printer.print_string(" ")
        printer.print_region(self.body, print_entry_block_args=False)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @staticmethod
    def _print_sizes(printer: Printer, sizes: Sequence[SSAValue]) -> None:
        if sizes:
            printer.print_string(" [")
            printer.print_list(sizes, printer.print_ssa_value)
            printer.print_string("]")

    @staticmethod
    def _parse_sizes(parser: Parser) -> list[SSAValue]:
        """An optional `[%n, %s]` of run-time extents."""
        sizes = parser.parse_optional_comma_separated_list(
            Parser.Delimiter.SQUARE, lambda: parser.parse_operand(IndexType()), " in run-time extents"
        )
        return sizes or []

    @classmethod
    def parse(cls, parser: Parser) -> ComputeOp:
        tag = parser.parse_str_literal("kernel tag")
        outputs = parser.parse_comma_separated_list(
            Parser.Delimiter.PAREN, lambda: parser.parse_argument(expect_type=False)
        )
        sizes = cls._parse_sizes(parser)
        combiner: str | None = None
        reductions: list[tuple[Parser.UnresolvedArgument, int]] = []
        if parser.parse_optional_keyword("reduce"):
            combiner = parser.parse_identifier("reduction combiner")

            def parse_axis() -> tuple[Parser.UnresolvedArgument, int]:
                arg = parser.parse_argument(expect_type=False)
                parser.parse_punctuation(":")
                if parser.parse_optional_punctuation("?") is not None:
                    return arg, DYNAMIC_EXTENT
                return arg, parser.parse_integer(allow_boolean=False, allow_negative=False)

            reductions = parser.parse_comma_separated_list(Parser.Delimiter.PAREN, parse_axis)
            sizes += cls._parse_sizes(parser)
        parser.parse_punctuation("->")
        result_type = parser.parse_type()
        if not isinstance(result_type, TensorType):
            parser.raise_error(f"te.compute result must be a tensor type, got {result_type}")
        index = IndexType()
        args = [arg.resolve(index) for arg in outputs] + [arg.resolve(index) for arg, _ in reductions]
        body = parser.parse_region(args)
        op = cls(tag, result_type, body, [extent for _, extent in reductions], combiner, sizes)
        if (extra := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= extra.data
        return op


@irdl_op_definition
class ReadOp(IRDLOperation):
    """One element of a tensor inside a `te.compute` body: `%v = te.read %x[%i, %k] : tensor<1x784xf32>`."""

    name = "te.read"
    T: ClassVar = VarConstraint("T", AnyAttr())
    tensor = operand_def(TensorType.constr(T))
    indices = var_operand_def(IndexType())
    result = result_def(T)
    assembly_format = "$tensor `[` $indices `]` attr-dict `:` type($tensor)"
    traits = traits_def(Pure())

    def __init__(self, tensor: SSAValue, indices: Sequence[SSAValue]):
        assert isinstance(tensor.type, TensorType)
        Operation.__init__(self, operands=(tensor, *indices), result_types=(tensor.type.element_type,))

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, TensorType)
        rank = self.tensor.type.get_num_dims()
        if len(self.indices) != rank:
            raise VerifyException(f"{self.name}: {len(self.indices)} indices given for a tensor of rank {rank}")


@irdl_op_definition
class DimOp(IRDLOperation):
    """The extent of one dimension of a tensor, an `index` (a run-time value for a `?` dimension):
    `%n = te.dim %x[0] : tensor<?x768xf32>`."""

    name = "te.dim"
    tensor = operand_def(TensorType)
    axis = prop_def(IntegerAttr[I64])
    result = result_def(IndexType())
    traits = traits_def(Pure())

    def __init__(self, tensor: SSAValue, axis: int):
        super().__init__(operands=[tensor], result_types=[IndexType()], properties={"axis": IntegerAttr(axis, i64)})

    def verify_(self) -> None:
        assert isinstance(self.tensor.type, TensorType)
        rank, axis = self.tensor.type.get_num_dims(), self.axis.value.data
        if not 0 <= axis < rank:
            raise VerifyException(f"{self.name}: axis {axis} is out of range for a tensor of rank {rank}")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_ssa_value(self.tensor)
        printer.print_string(f"[{self.axis.value.data}]")
        printer.print_op_attributes(self.attributes)
        printer.print_string(" : ")
        printer.print_attribute(self.tensor.type)

    @classmethod
    def parse(cls, parser: Parser) -> DimOp:
        tensor = parser.parse_unresolved_operand()
        parser.parse_punctuation("[")
        axis = parser.parse_integer(allow_boolean=False, allow_negative=False)
        parser.parse_punctuation("]")
        attributes = parser.parse_optional_attr_dict()
        parser.parse_punctuation(":")
        op = cls(parser.resolve_operand(tensor, parser.parse_type()), axis)
        op.attributes |= attributes
        return op


@irdl_op_definition
class YieldOp(IRDLOperation):
    """The value of one element (or one reduction term) of a `te.compute`: `te.yield %v : f32`."""

    name = "te.yield"
    value = operand_def()
    assembly_format = "$value attr-dict `:` type($value)"
    traits = traits_def(IsTerminator(), HasParent(ComputeOp), Pure())
    irdl_options = (ParsePropInAttrDict(),)

    def __init__(self, value: SSAValue):
        Operation.__init__(self, operands=(value,))


@irdl_op_definition
class CallExternOp(IRDLOperation):
    """A call to an external function that writes the results, as `graph.call_extern`; no te pass looks inside it:
    `%y = te.call_extern "env.relu" (%x) : (tensor<8xf32>) -> tensor<8xf32>`."""

    name = "te.call_extern"
    callee = prop_def(StringAttr)
    args = var_operand_def(TensorType)
    res = var_result_def(TensorType)
    assembly_format = "$callee `(` $args `)` attr-dict `:` functional-type($args, $res)"

    def __init__(self, callee: str, args: Sequence[SSAValue], result_types: Sequence[Attribute]):
        super().__init__(operands=[args], result_types=[result_types], properties={"callee": StringAttr(callee)})

    def verify_(self) -> None:
        if not self.callee.data or not self.res:
            raise VerifyException(f"{self.name}: needs a callee name and at least one result")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A tensor's bytes read as another static shape and element type of the same size (row-major, no copy; `te-to-loop`
    makes it a `loop.view` of the source's buffer): a channels-last bfloat16 activation read by a 1x1 convolution as
    the words of two adjacent channels its dot products take (`te-bf16-word-views`):
    `%w = te.view %a : tensor<1x56x56x256xbf16> to tensor<1x56x56x128xi32>`."""

    name = "te.view"
    source = operand_def(TensorType)
    result = result_def(TensorType)
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, result_type: TensorType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        check_same_size(self, self.source, self.result, "tensors")


TE = Dialect("te", [ComputeOp, ReadOp, DimOp, YieldOp, CallExternOp, ViewOp], [])
