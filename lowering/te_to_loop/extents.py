"""Run-time extents in te-to-loop (`docs/design/symbolic_shapes.md`): index values, kernel signatures, the entry ABI.

A `?` dimension's extent is an `index` value. In a lowered function the te-level index values (`te.dim`, `arith` on
`index`) are re-emitted once each (`IndexValues`); an entry argument's extents are loaded from the
`memref<Kxi64>` parameter after the outputs. A kernel takes the caller's index values it needs after its buffers,
each once, and gives every dynamic buffer its extents with `loop.extents` at its start (`KernelSignature`):

    func.func private @add_0(%in0: memref<?xf32> {llvm.noalias}, %out: memref<?xf32> {llvm.noalias}, %n0: index) {
      %in0_1 = loop.extents %in0[%n0] : memref<?xf32>
      %out_1 = loop.extents %out[%n0] : memref<?xf32>
      loop.for "i" %i = 0 to %n0 step 1 serial { ... }
"""

from __future__ import annotations

from collections.abc import Callable, Sequence

from xdsl.builder import Builder
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    DYNAMIC_INDEX,
    ArrayAttr,
    DictionaryAttr,
    IndexType,
    IntegerAttr,
    MemRefType,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Attribute, Block, BlockArgument, Operation, Region, SSAValue
from xdsl.rewriter import InsertPoint
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop, te
from minimlc.lowering.abi import ENTRY_ATTR, output_extents_name

Extent = int | SSAValue
"""A dimension: its static size or the `index` value holding it at run time."""


def is_dynamic(type: Attribute) -> bool:
    """Whether a tensor or memref type has a `?` dimension."""
    return isinstance(type, TensorType | MemRefType) and DYNAMIC_INDEX in type.get_shape()


def dynamic_input_extents(inputs: Sequence[SSAValue]) -> list[tuple[SSAValue, int]]:
    """The entry's dynamic input extents as (argument, axis), in input order then axis order: the layout of the
    `memref<Kxi64>` extents parameter."""
    return [
        (value, axis)
        for value in inputs
        if isinstance(value.type, TensorType)
        for axis, dim in enumerate(value.type.get_shape())
        if dim == DYNAMIC_INDEX
    ]


def load_input_extents(
    builder: Builder,
    extents: SSAValue,
    positions: Sequence[tuple[SSAValue, int]],
    names: Sequence[str] = (),
    offset: int = 0,
) -> list[SSAValue]:
    """The `index` values of `extents[offset + k]` for each of `positions` (loaded, then `index_cast`), named after
    the input symbols `names` where given."""
    loaded: list[SSAValue] = []
    for slot in range(len(positions)):
        position = builder.insert(arith.ConstantOp(IntegerAttr(offset + slot, IndexType())))
        value = builder.insert(memref.LoadOp.get(extents, [position.result]))
        cast = builder.insert(arith.IndexCastOp(value.res, IndexType()))
        named = slot < len(names) and names[slot].isidentifier()  # not `past + sequence`: an SSA name is one word
        cast.result.name_hint = names[slot] if named else None
        loaded.append(cast.result)
    return loaded


class IndexValues:
    """The te-level index values of a function (`te.dim`, `arith` on `index`, the extents of computes' results),
    emitted at `builder` once each; an argument's `?` extent is `argument_extent(argument, axis)`. A value that
    depends on anything else is refused with `context` (which says what needed it)."""

    def __init__(
        self, builder: Builder, argument_extent: Callable[[BlockArgument, int], SSAValue], context: str
    ) -> None:
        self.builder = builder
        self.argument_extent = argument_extent
        self.context = context
        self.values: dict[SSAValue, SSAValue] = {}

    def extents(self, tensor: SSAValue) -> list[Extent]:
        assert isinstance(tensor.type, TensorType)
        return [self.extent(tensor, axis) for axis in range(tensor.type.get_num_dims())]

    def extent(self, tensor: SSAValue, axis: int) -> Extent:
        """The size of `tensor` along `axis`: an `int`, or the emitted `index` value of a `?`."""
        assert isinstance(tensor.type, TensorType)
        size = tensor.type.get_shape()[axis]
        if size != DYNAMIC_INDEX:
            return size
        owner = tensor.owner
        if isinstance(owner, te.ComputeOp):
            extent = owner.output_extents()[axis]
            assert isinstance(extent, SSAValue)
            return self.value(extent)
        if isinstance(owner, Block) and isinstance(owner.parent_op(), func.FuncOp):
            assert isinstance(tensor, BlockArgument)
            return self.argument_extent(tensor, axis)
        raise DiagnosticException(f"{self.context}: it depends on the run-time extent of {_origin(tensor)}")

    def value(self, value: SSAValue) -> SSAValue:
        """The emitted counterpart of the te-level `index` value `value`."""
        if value in self.values:
            return self.values[value]
        owner = value.owner
        if isinstance(owner, te.DimOp):
            extent = self.extent(owner.tensor, owner.axis.value.data)
            emitted = extent if isinstance(extent, SSAValue) else self.constant(extent)
            emitted.name_hint = emitted.name_hint or value.name_hint
        elif is_index_arith(owner):
            assert isinstance(owner, Operation)
            clone = owner.clone(value_mapper={operand: self.value(operand) for operand in owner.operands})
            self.builder.insert(clone)
            for old, new in zip(owner.results, clone.results):
                self.values[old] = new
            emitted = clone.results[owner.results.index(value)]
        else:
            raise DiagnosticException(f"{self.context}: it depends on {_origin(value)}")
        self.values[value] = emitted
        return emitted

    def constant(self, size: int) -> SSAValue:
        return self.builder.insert(arith.ConstantOp(IntegerAttr(size, IndexType()))).result


def is_index_arith(op: Operation | Block) -> bool:
    """An `arith` op computing `index` values (an extent from others: `arith.muli %b, %s : index`)."""
    return (
        isinstance(op, Operation)
        and op.name.startswith("arith.")
        and not op.regions
        and bool(op.results)
        and all(isinstance(result.type, IndexType) for result in op.results)
    )


def _origin(value: SSAValue) -> str:
    owner = value.owner
    if isinstance(owner, Operation):
        return f"a '{owner.name}' result of type {value.type}"
    return f"a block argument of type {value.type}"


class KernelSignature:
    """A kernel's parameters: its buffers (`llvm.noalias`), then each caller `index` value that its buffers' extents
    and `values` use, once; at its start `loop.extents` gives each dynamic buffer parameter its extents.
    `buffers` are the parameters to access (through `loop.extents` where dynamic), `operands` the call's."""

    def __init__(
        self, buffers: Sequence[SSAValue], extents: Sequence[Sequence[Extent]], values: Sequence[SSAValue] = ()
    ) -> None:
        dynamic = [extent for buffer in extents for extent in buffer if isinstance(extent, SSAValue)]
        indices = list(dict.fromkeys([*dynamic, *values]))
        types = [*(buffer.type for buffer in buffers), *[IndexType()] * len(indices)]
        self.function = func.FuncOp("kernel", (types, []), Region(Block([func.ReturnOp()], arg_types=types)), "private")
        self.function.arg_attrs = ArrayAttr(
            [DictionaryAttr({"llvm.noalias": UnitAttr()}) for _ in buffers] + [DictionaryAttr({}) for _ in indices]
        )
        params = self.function.body.block.args
        for position, param in enumerate(params[: len(buffers)]):
            param.name_hint = "out" if position == len(buffers) - 1 else f"in{position}"
        for position, param in enumerate(params[len(buffers) :]):
            param.name_hint = f"n{position}"
        self.operands = [*buffers, *indices]
        self.index = dict(zip(indices, params[len(buffers) :]))
        self.buffers: list[SSAValue] = []
        builder = Builder(InsertPoint.at_start(self.function.body.block))
        for param, buffer_extents in zip(params, extents):
            sizes = [self.index[extent] for extent in buffer_extents if isinstance(extent, SSAValue)]
            self.buffers.append(builder.insert(loop.ExtentsOp(param, sizes)).result if sizes else param)
            self.buffers[-1].name_hint = param.name_hint

    def extent(self, extent: Extent) -> Extent:
        """The kernel's counterpart of a caller extent."""
        return extent if isinstance(extent, int) else self.index[extent]


def output_extents_function(
    entry: str, returned: Sequence[SSAValue], inputs: Sequence[tuple[SSAValue, int]]
) -> tuple[func.FuncOp, int]:
    """`@<entry>_output_extents(%in: memref<Kxi64>, %out: memref<Jxi64>)`, an entry that stores each dynamic extent
    of the `returned` te values (output order, then axis order), computed from the K input extents `inputs`; and J.
    DiagnosticException naming the output for an extent that the input extents do not decide."""
    outputs = [
        (position, value, axis) for position, value in enumerate(returned) for _, axis in dynamic_input_extents([value])
    ]
    types = [MemRefType(i64, [len(inputs)]), MemRefType(i64, [len(outputs)])]
    function = func.FuncOp(output_extents_name(entry), (types, []), Region(Block(arg_types=types)))
    function.attributes[ENTRY_ATTR] = UnitAttr()
    extents_in, extents_out = function.body.block.args
    extents_in.name_hint, extents_out.name_hint = "in", "out"
    builder = Builder(InsertPoint.at_end(function.body.block))
    loaded: dict[tuple[SSAValue, int], SSAValue] = {}

    def input_extent(argument: BlockArgument, axis: int) -> SSAValue:
        if (argument, axis) not in loaded:
            slot = inputs.index((argument, axis))
            loaded[argument, axis] = load_input_extents(builder, extents_in, [(argument, axis)], offset=slot)[0]
        return loaded[argument, axis]

    values = IndexValues(builder, input_extent, "")
    for slot, (position, value, axis) in enumerate(outputs):
        values.context = (
            f"te-to-loop: output {position} of @{entry} has a run-time extent (axis {axis}) that its input extents "
            "do not decide"
        )
        extent = values.extent(value, axis)
        assert isinstance(extent, SSAValue)
        cast = builder.insert(arith.IndexCastOp(extent, i64))
        offset = builder.insert(arith.ConstantOp(IntegerAttr(slot, IndexType())))
        builder.insert(memref.StoreOp.get(cast.result, extents_out, [offset.result]))
    builder.insert(func.ReturnOp())
    return function, len(outputs)
