"""The `loop` dialect: TIR-like loop nests over buffers, the level where schedules are applied.

Buffers are `memref`s read and written with `memref.load` / `memref.store`; scalar work is `arith` and `math`. A
`loop.for` has static bounds or a run-time upper bound (an `index` operand), a kind (serial, parallel, vectorize,
unroll) that schedule passes set and lowerings honour, and a name that schedule options refer to. A buffer with `?`
dimensions carries its extents as `index` values: `loop.alloc` takes one per `?`, and a parameter goes through
`loop.extents` (`docs/design/symbolic_shapes.md`). Buffers come from `loop.alloc` (global: heap, one per
intermediate tensor; local: a scalar or small tile on the stack), are weights (named handles bound at run time),
or are precomputed once at load time from weights (`loop.precompute`, e.g. weights packed for a kernel's layout).

    func.func private @relu_0(%x: memref<128xf32>, %y: memref<128xf32>) {
      loop.for "i" %i = 0 to 128 step 1 vectorize {
        %v = memref.load %x[%i] : memref<128xf32>
        %c = arith.constant 0.000000e+00 : f32
        %r = arith.maximumf %v, %c : f32
        memref.store %r, %y[%i] : memref<128xf32>
      }
      func.return
    }
"""

from __future__ import annotations

import functools
from collections.abc import Sequence
from typing import ClassVar

from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    I64,
    IndexType,
    IntegerAttr,
    MemRefType,
    StringAttr,
    SymbolRefAttr,
    i64,
)
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.ir import Attribute, Block, Dialect, Operation, Region, SSAValue
from xdsl.irdl import (
    AttrSizedOperandSegments,
    EqAttrConstraint,
    IRDLOperation,
    ParsePropInAttrDict,
    VarConstraint,
    base,
    irdl_op_definition,
    operand_def,
    opt_operand_def,
    prop_def,
    region_def,
    result_def,
    traits_def,
    var_operand_def,
)
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.traits import NoTerminator, Pure, RecursiveMemoryEffect
from xdsl.utils.exceptions import VerifyException

from minimlc.dialects.te import check_same_size

LOOP_KINDS = ("serial", "parallel", "vectorize", "unroll")
"""How a `loop.for` is to be executed; every kind has serial semantics, the others are schedule directives."""

DYNAMIC_UPPER = -1
"""The `upper` property of a `loop.for` whose upper bound is the operand `dynamic_upper`."""

ALLOC_SCOPES = ("global", "local")
"""`global`: a heap buffer that lives for one call of the function; `local`: a stack buffer (accumulators, tiles)."""


@functools.cache
def _i64(value: int) -> IntegerAttr:
    """A loop bound or step (attributes are immutable: one per value serves every loop; building a checked
    `IntegerAttr` was a third of making a `loop.for`)."""
    return IntegerAttr(value, i64)


@functools.cache
def _kind(kind: str) -> StringAttr:
    return StringAttr(kind)


@irdl_op_definition
class ForOp(IRDLOperation):
    """A loop with static bounds, `loop.for "i" %i = 0 to 128 step 4 parallel { ... }`, or a run-time upper bound,
    `loop.for "i" %i = 0 to %n step 4 serial { ... }` (the `index` operand `dynamic_upper`; `upper` is then -1)."""

    name = "loop.for"
    loop_name = prop_def(StringAttr)
    lower = prop_def(IntegerAttr[I64])
    upper = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    kind = prop_def(StringAttr)
    dynamic_upper = opt_operand_def(IndexType)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), RecursiveMemoryEffect())

    def __init__(
        self,
        loop_name: str,
        lower: int,
        upper: int | SSAValue,
        body: Region | Block,
        step: int = 1,
        kind: str = "serial",
    ):
        dynamic = not isinstance(upper, int)
        # `Operation.__init__`, as `create` calls it: the op IRDL's init builds from these arguments (one optional
        # operand: no segment sizes), without its checks of each argument (a tenth of a schedule's steps)
        Operation.__init__(
            self,
            operands=[upper] if dynamic else [],
            properties={
                "loop_name": StringAttr(loop_name),
                "lower": _i64(lower),
                "upper": _i64(DYNAMIC_UPPER if dynamic else upper),
                "step": _i64(step),
                "kind": _kind(kind),
            },
            regions=[body if isinstance(body, Region) else Region(body)],
        )

    @staticmethod
    def empty_body() -> Block:
        """A body block with just the induction variable."""
        return Block(arg_types=[IndexType()])

    @property
    def induction_var(self):
        return self.body.block.args[0]

    @property
    def is_dynamic(self) -> bool:
        """Whether the upper bound is a run-time value (`dynamic_upper`, the loop's only operand: read from the
        operand tuple, not through IRDL's accessor, as schedules ask it of every loop after every step)."""
        return bool(self._operands)

    @property
    def trip_count(self) -> int:
        """The static number of iterations; ValueError on a loop with a run-time upper bound."""
        if self.is_dynamic:
            raise ValueError(f"loop '{self.loop_name.data}' has a run-time trip count (upper bound is an operand)")
        lower, upper, step = self.lower.value.data, self.upper.value.data, self.step.value.data
        return max(0, -(-(upper - lower) // step))

    def verify_(self) -> None:
        label = f"{self.name} '{self.loop_name.data}'"
        if self.step.value.data <= 0:
            raise VerifyException(f"{label}: step must be positive, got {self.step.value.data}")
        if self.is_dynamic and self.upper.value.data != DYNAMIC_UPPER:
            raise VerifyException(
                f"{label}: has a run-time upper bound operand, but its upper property is {self.upper.value.data}, "
                f"not {DYNAMIC_UPPER}"
            )
        if not self.is_dynamic and self.upper.value.data == DYNAMIC_UPPER:
            raise VerifyException(f"{label}: upper bound {DYNAMIC_UPPER} marks a run-time bound, but it has no operand")
        if not self.is_dynamic and self.upper.value.data < self.lower.value.data:
            raise VerifyException(
                f"{label}: upper bound {self.upper.value.data} is below lower bound {self.lower.value.data}"
            )
        if self.is_dynamic and self.lower.value.data < 0:
            raise VerifyException(f"{label}: lower bound must not be negative, got {self.lower.value.data}")
        if self.kind.data not in LOOP_KINDS:
            raise VerifyException(f"{label}: unknown kind '{self.kind.data}' (expected one of {', '.join(LOOP_KINDS)})")
        args = self.body.block.args
        if len(args) != 1 or not isinstance(args[0].type, IndexType):
            raise VerifyException(f"{label}: body must have exactly one index argument (the induction variable)")

    def print(self, printer: Printer) -> None:
        printer.print_string(" ")
        printer.print_attribute(self.loop_name)
        printer.print_string(" ")
        printer.print_ssa_value(self.induction_var)
        printer.print_string(f" = {self.lower.value.data} to ")
        if self.dynamic_upper is not None:
            printer.print_ssa_value(self.dynamic_upper)
        else:
            printer.print_string(str(self.upper.value.data))
        printer.print_string(f" step {self.step.value.data}")
        printer.print_string(f" {self.kind.data} ")
        printer.print_region(self.body, print_entry_block_args=False, print_empty_block=False)
        printer.print_op_attributes(self.attributes, print_keyword=True)

    @classmethod
    def parse(cls, parser: Parser) -> ForOp:
        loop_name = parser.parse_str_literal("loop name")
        induction_var = parser.parse_argument(expect_type=False)
        parser.parse_punctuation("=")
        lower = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("to")
        upper = parser.parse_optional_operand(IndexType())
        if upper is None:
            upper = parser.parse_integer(allow_boolean=False)
        parser.parse_keyword("step")
        step = parser.parse_integer(allow_boolean=False)
        kind = parser.parse_identifier("loop kind")
        body = parser.parse_region([induction_var.resolve(IndexType())])
        if not body.blocks:
            body.add_block(cls.empty_body())
        op = cls(loop_name, lower, upper, body, step, kind)
        if (extra := parser.parse_optional_attr_dict_with_keyword()) is not None:
            op.attributes |= extra.data
        return op


def _check_dynamic_sizes(op: IRDLOperation, memref_type: Attribute, sizes: Sequence[SSAValue]) -> None:
    """One `index` size per `?` of `memref_type`, or a VerifyException naming `op`."""
    assert isinstance(memref_type, MemRefType)
    dynamic = sum(1 for dim in memref_type.get_shape() if dim == DYNAMIC_INDEX)
    if len(sizes) != dynamic:
        prefix = f"buffer shape must be static, got {memref_type}" if not sizes else f"got {memref_type}"
        raise VerifyException(
            f"{op.name}: {prefix} with {len(sizes)} sizes, but it needs one index operand per '?' ({dynamic})"
        )


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A buffer for one call of the enclosing function: `%t = loop.alloc "global" : memref<1x128xf32>`; a global
    buffer may have `?` dimensions, each sized by an `index` operand: `%t = loop.alloc "global" [%n] :
    memref<?x768xf32>`."""

    name = "loop.alloc"
    scope = prop_def(StringAttr)
    dynamic_sizes = var_operand_def(IndexType)
    result = result_def(MemRefType)
    assembly_format = "$scope (` ` `[` $dynamic_sizes^ `]`)? attr-dict `:` type($result)"

    def __init__(self, memref_type: MemRefType, scope: str = "global", dynamic_sizes: Sequence[SSAValue] = ()):
        Operation.__init__(  # as `create` builds it, like `ForOp`
            self, operands=tuple(dynamic_sizes), properties={"scope": StringAttr(scope)}, result_types=(memref_type,)
        )

    def verify_(self) -> None:
        if self.scope.data not in ALLOC_SCOPES:
            raise VerifyException(
                f"{self.name}: unknown scope '{self.scope.data}' (expected one of {', '.join(ALLOC_SCOPES)})"
            )
        assert isinstance(self.result.type, MemRefType)
        if self.scope.data == "local" and not self.result.type.has_static_shape():
            raise VerifyException(f"{self.name}: a local buffer's shape must be static, got {self.result.type}")
        _check_dynamic_sizes(self, self.result.type, self.dynamic_sizes)


@irdl_op_definition
class ExtentsOp(IRDLOperation):
    """Gives a buffer with `?` dimensions its run-time extents, one `index` per `?` in order; the result is the same
    buffer, which every access goes through: `%x = loop.extents %arg[%n, %s] : memref<?x?xf32>`."""

    name = "loop.extents"
    T: ClassVar = VarConstraint("T", base(MemRefType))
    source = operand_def(T)
    sizes = var_operand_def(IndexType)
    result = result_def(T)
    assembly_format = "$source `[` $sizes `]` attr-dict `:` type($source)"
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, sizes: Sequence[SSAValue]):
        super().__init__(operands=[source, list(sizes)], result_types=[source.type])

    def verify_(self) -> None:
        _check_dynamic_sizes(self, self.source.type, self.sizes)


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A named constant buffer bound when the model is loaded: `%w = loop.weight "fc0.weight" : memref<128x784xf32>`."""

    name = "loop.weight"
    weight_name = prop_def(StringAttr)
    result = result_def(MemRefType)
    assembly_format = "$weight_name attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, weight_name: str, memref_type: Attribute):
        Operation.__init__(self, properties={"weight_name": StringAttr(weight_name)}, result_types=(memref_type,))


@irdl_op_definition
class PrecomputeOp(IRDLOperation):
    """A constant buffer computed once at load time by a kernel from weights:
    `%bp = loop.precompute @pack_0(%b) : (memref<64x48xf32>) -> memref<3x64x16xf32>`."""

    name = "loop.precompute"
    kernel = prop_def(SymbolRefAttr)
    sources = var_operand_def(MemRefType)
    result = result_def(MemRefType)
    assembly_format = "$kernel `(` $sources `)` attr-dict `:` functional-type($sources, $result)"
    traits = traits_def(Pure())

    def __init__(self, kernel: str, sources: Sequence[SSAValue], memref_type: MemRefType):
        Operation.__init__(
            self, operands=tuple(sources), properties={"kernel": SymbolRefAttr(kernel)}, result_types=(memref_type,)
        )

    def verify_(self) -> None:
        for source in self.sources:
            if not isinstance(source.owner, WeightOp | PrecomputeOp):
                raise VerifyException(f"{self.name}: operands must be weights or precomputed buffers")


@irdl_op_definition
class CallExternOp(IRDLOperation):
    """A call to an external function on buffers, inputs then `num_outputs` outputs, which it writes; `loop-to-scf`
    gives it the function pointer the runtime binds and the run's status word, where a failure is recorded (`via %fn
    status %st`): `loop.call_extern "env.relu" (%x, %y) {num_outputs = 1 : i64} : memref<8xf32>, memref<8xf32>`."""

    name = "loop.call_extern"
    callee = prop_def(StringAttr)
    num_outputs = prop_def(IntegerAttr[I64])
    function = opt_operand_def(EqAttrConstraint(LLVMPointerType()))
    status = opt_operand_def(EqAttrConstraint(LLVMPointerType()))
    buffers = var_operand_def(MemRefType)
    irdl_options = (AttrSizedOperandSegments(as_property=True), ParsePropInAttrDict())
    assembly_format = "$callee (`via` $function^ `status` $status)? `(` $buffers `)` attr-dict `:` type($buffers)"

    def __init__(
        self,
        callee: str,
        buffers: Sequence[SSAValue],
        num_outputs: int,
        function: SSAValue | None = None,
        status: SSAValue | None = None,
    ):
        super().__init__(
            operands=[[] if function is None else [function], [] if status is None else [status], buffers],
            properties={"callee": StringAttr(callee), "num_outputs": IntegerAttr(num_outputs, i64)},
        )

    def verify_(self) -> None:
        if (self.function is None) != (self.status is None):
            raise VerifyException(f"{self.name} '{self.callee.data}': a function pointer needs a status word")
        outputs = self.num_outputs.value.data
        if not 1 <= outputs <= len(self.buffers):
            raise VerifyException(
                f"{self.name} '{self.callee.data}': num_outputs {outputs} must be between 1 and the "
                f"{len(self.buffers)} buffers"
            )


def memref_of(shape: Sequence[int], element_type: Attribute) -> MemRefType:
    """`memref<shape x element_type>`."""
    return MemRefType(element_type, list(shape))


@irdl_op_definition
class PrefetchOp(IRDLOperation):
    """A hint that `buffer[indices]` is read soon: fetch its cache line into every cache level, in the background
    (`loop-prefetch` inserts it; lowered to `llvm.prefetch`, which never faults). Indices must lie in the buffer.

        loop.prefetch %w[%p, %k, %c0] : memref<16x4608x32xf32>
    """

    name = "loop.prefetch"
    buffer = operand_def(MemRefType)
    indices = var_operand_def(IndexType)
    assembly_format = "$buffer `[` $indices `]` attr-dict `:` type($buffer)"

    def __init__(self, buffer: SSAValue, indices: Sequence[SSAValue]):
        super().__init__(operands=[buffer, indices])

    def verify_(self) -> None:
        assert isinstance(self.buffer.type, MemRefType)
        rank = self.buffer.type.get_num_dims()
        if len(self.indices) != rank:
            raise VerifyException(f"{self.name}: {len(self.indices)} indices for a buffer of rank {rank}")


@irdl_op_definition
class ViewOp(IRDLOperation):
    """A buffer's bytes read as another static shape and element type of the same size (row-major, no copy): the
    result is the same memory, alive as long as the source (`loop-plan-memory` follows it), e.g. a channels-last
    bfloat16 activation read by a convolution as words of two adjacent channels (`te.view`):
    `%w = loop.view %a : memref<1x56x56x256xi16> to memref<1x56x56x128xi32>`."""

    name = "loop.view"
    source = operand_def(MemRefType)
    result = result_def(MemRefType)
    assembly_format = "$source attr-dict `:` type($source) `to` type($result)"
    traits = traits_def(Pure())

    def __init__(self, source: SSAValue, result_type: MemRefType):
        super().__init__(operands=[source], result_types=[result_type])

    def verify_(self) -> None:
        check_same_size(self, self.source, self.result, "buffers")


Loop = Dialect("loop", [ForOp, AllocOp, ExtentsOp, WeightOp, PrecomputeOp, CallExternOp, PrefetchOp, ViewOp], [])
