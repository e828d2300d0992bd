"""The `loop` dialect: TIR-like loop nests over buffers, the level where schedules are applied.

Buffers are static-shaped `memref`s read and written with `memref.load` / `memref.store`; scalar work is `arith` and
`math`. A `loop.for` has static bounds, a kind (serial, parallel, vectorize, unroll) that schedule passes set and
lowerings honour, and a name that schedule options refer to. Buffers come from `loop.alloc` (global: heap, one per
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

from collections.abc import Sequence

from xdsl.dialects.builtin import I64, IndexType, IntegerAttr, MemRefType, StringAttr, SymbolRefAttr, i64
from xdsl.ir import Attribute, Block, Dialect, Region, SSAValue
from xdsl.dialects.llvm import LLVMPointerType
from xdsl.irdl import (
    AttrSizedOperandSegments,
    EqAttrConstraint,
    IRDLOperation,
    ParsePropInAttrDict,
    operand_def,
    opt_operand_def,
    irdl_op_definition,
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

LOOP_KINDS = ("serial", "parallel", "vectorize", "unroll")
"""How a `loop.for` is to be executed; every kind has serial semantics, the others are schedule directives."""

ALLOC_SCOPES = ("global", "local")
"""`global`: a heap buffer that lives for one call of the function; `local`: a stack buffer (accumulators, tiles)."""


@irdl_op_definition
class ForOp(IRDLOperation):
    """A loop with static bounds: `loop.for "i" %i = 0 to 128 step 4 parallel { ... }`."""

    name = "loop.for"
    loop_name = prop_def(StringAttr)
    lower = prop_def(IntegerAttr[I64])
    upper = prop_def(IntegerAttr[I64])
    step = prop_def(IntegerAttr[I64])
    kind = prop_def(StringAttr)
    body = region_def("single_block")
    traits = traits_def(NoTerminator(), RecursiveMemoryEffect())

    def __init__(
        self,
        loop_name: str,
        lower: int,
        upper: int,
        body: Region | Block,
        step: int = 1,
        kind: str = "serial",
    ):
        super().__init__(
            properties={
                "loop_name": StringAttr(loop_name),
                "lower": IntegerAttr(lower, i64),
                "upper": IntegerAttr(upper, i64),
                "step": IntegerAttr(step, i64),
                "kind": StringAttr(kind),
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
    def trip_count(self) -> int:
        lower, upper, step = self.lower.value.data, self.upper.value.data, self.step.value.data
        return max(0, -(-(upper - lower) // step))

    def verify_(self) -> None:
        label = f"{self.name} '{self.loop_name.data}'"
        if self.step.value.data <= 0:
            raise VerifyException(f"{label}: step must be positive, got {self.step.value.data}")
        if self.upper.value.data < self.lower.value.data:
            raise VerifyException(
                f"{label}: upper bound {self.upper.value.data} is below lower bound {self.lower.value.data}"
            )
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
        printer.print_string(f" = {self.lower.value.data} to {self.upper.value.data} step {self.step.value.data}")
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


@irdl_op_definition
class AllocOp(IRDLOperation):
    """A buffer for one call of the enclosing function: `%t = loop.alloc "global" : memref<1x128xf32>`."""

    name = "loop.alloc"
    scope = prop_def(StringAttr)
    result = result_def(MemRefType)
    assembly_format = "$scope attr-dict `:` type($result)"

    def __init__(self, memref_type: MemRefType, scope: str = "global"):
        super().__init__(properties={"scope": StringAttr(scope)}, result_types=[memref_type])

    def verify_(self) -> None:
        if self.scope.data not in ALLOC_SCOPES:
            raise VerifyException(
                f"{self.name}: unknown scope '{self.scope.data}' (expected one of {', '.join(ALLOC_SCOPES)})"
            )
        assert isinstance(self.result.type, MemRefType)
        if any(dim < 0 for dim in self.result.type.get_shape()):
            raise VerifyException(f"{self.name}: buffer shape must be static, got {self.result.type}")


@irdl_op_definition
class WeightOp(IRDLOperation):
    """A named constant buffer bound when the model is loaded: `%w = loop.weight "fc0.weight" : memref<128x784xf32>`."""

    name = "loop.weight"
    weight_name = prop_def(StringAttr)
    result = result_def(MemRefType)
    assembly_format = "$weight_name attr-dict `:` type($result)"
    traits = traits_def(Pure())

    def __init__(self, weight_name: str, memref_type: Attribute):
        super().__init__(properties={"weight_name": StringAttr(weight_name)}, result_types=[memref_type])


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
        super().__init__(
            operands=[sources], properties={"kernel": SymbolRefAttr(kernel)}, result_types=[memref_type]
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
    assembly_format = (
        "$callee (`via` $function^ `status` $status)? `(` $buffers `)` attr-dict `:` type($buffers)"
    )

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


Loop = Dialect("loop", [ForOp, AllocOp, WeightOp, PrecomputeOp, CallExternOp, PrefetchOp], [])
