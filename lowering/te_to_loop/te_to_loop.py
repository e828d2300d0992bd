"""Lower `te` computes over tensors to `loop` nests over buffers (bufferization + kernel extraction).

Every function whose signature holds tensors is rewritten to take buffers: inputs first, then one output buffer per
result, and no results. Each `te.compute` becomes a private kernel function `@<tag>_<n>(inputs..., out)` holding
its loop nest, called from the function; a compute whose value is returned writes straight into that output
buffer, any other into a `loop.alloc "global"` buffer. `graph.weight` becomes `loop.weight`. Returned values that
are not freshly computed (function arguments, weights, a value returned twice) are copied by a copy kernel.
Structurally identical kernels are emitted once and shared.

Consecutive computes carrying the same `kernel_group` attribute (`te.KERNEL_GROUP`, set by graph-to-te on the
stages of a softmax or a normalisation) become one kernel `@<last tag>_<n>(inputs..., stages..., out)` holding one
loop nest per compute, in order (their accumulators allocated first): the earlier computes' results are buffers the
caller allocates, as for any intermediate, so the schedule can move each stage into the rows of the last one
(`loop-compute-at`, see `schedule/rows.py`). Loop names stay unique within the kernel, the last compute's unchanged.

Reductions accumulate in a `loop.alloc "local"` scalar (promoted to a register by LLVM): init, update in the innermost
loops, final store. Float `max` and `min` are `arith.maximumf`/`minimumf` (NaN-propagating) from -inf/+inf, `maxnum` is
`arith.maxnumf` from NaN (NaNs passed over; NaN only if every value is), `max_nnan` an `arith.maximumf` flagged
`nnan,nsz` (one `vmaxps` on x86; for maxima whose readers turn a NaN row into NaN). Float contraction (fused
multiply-add) is allowed in kernels, and sums may be reassociated, as ONNX Runtime and TVM do; a product marked `exact`
(dequantization's) and the adds that read it are not contracted, so quantized outputs match on every CPU.

Element types are the computes' own (f32, f64, f16, bf16, or integers such as the i64 of MaxPool's indices: integer
reductions combine with addi/muli/maxsi/minsi, or maxui/minui for unsigned ones, from 0, 1, or the type's extreme
values). The loop level is signless: unsigned types (`ui8`..`ui64`, whose ops te bodies already chose) become the
signless type of their width in buffers, scalars and constants, bfloat16 its 16 bits and float8, float4 and sub-byte
integers a byte (`loop_type`, `element_types.py`). Te bodies read tensors only through `te.read`; the other
outside values they may use are `index` values.

Run-time extents (`?` dimensions, `extents.py`): a function with `?`s in its signature takes the `memref<Kxi64>` of
its K dynamic input extents after its outputs (`minimlc.input_extents`) and loads them at its start; `te.dim` and
`arith` on `index` are re-emitted there. A kernel takes the caller's `index` values that its buffers' extents, its
reductions' extents and its bodies use, after its buffers, and wraps each dynamic buffer in `loop.extents`; loops
over `?` are dynamic `loop.for`s; intermediates with `?` are `loop.alloc "global" [sizes]`. A function with dynamic
outputs gets `@<name>_output_extents(%in: memref<Kxi64>, %out: memref<Jxi64>)` (`minimlc.output_extents = J`).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func
from xdsl.dialects.builtin import (
    IndexType,
    IntegerAttr,
    MemRefType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
    i64,
)
from xdsl.ir import Block, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import graph, loop, te
from minimlc.lowering.abi import ENTRY_ATTR, INPUT_EXTENTS_ATTR, OUTPUT_EXTENTS_ATTR, input_symbols_of
from minimlc.lowering.generic import built_ops
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.generic.structural_key import structural_key
from minimlc.lowering.te_to_loop.element_types import (
    FUSED_FLAGS,
    buffer_type,
    combine,
    combiner_init,
    is_unsigned,
    loop_type,
)
from minimlc.lowering.te_to_loop.extents import (
    IndexValues,
    KernelSignature,
    dynamic_input_extents,
    is_dynamic,
    is_index_arith,
    load_input_extents,
    output_extents_function,
)


@dataclass(frozen=True)
class TeToLoopPass(ModulePass):
    """Bufferize tensor functions and turn each te.compute into a loop-nest kernel function."""

    name = "te-to-loop"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = _KernelTable(op)
        for function in list(op.ops):
            if isinstance(function, func.FuncOp) and _has_tensors(function):
                _bufferize_function(function, kernels)


def _has_tensors(function: func.FuncOp) -> bool:
    types = (*function.function_type.inputs, *function.function_type.outputs)
    return any(isinstance(t, TensorType) for t in types)


class _KernelTable:
    """Kernel functions of one module, deduplicated: a static kernel by its computes before it is lowered
    (`by_source`, `_source_key`: a ResNet-50 lowers 87 kernels for its 269 computes), a kernel over run-time extents
    by its structure once lowered (`by_body`, `structural_key`). The tag only names a kernel, so computes of
    different tags with one body (a TE user's `first` and `second` ReLU) share one."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.by_body: dict[tuple[object, ...], str] = {}
        self.by_source: dict[tuple[object, ...], str] = {}
        self.count = 0

    def intern(self, tag: str, kernel: func.FuncOp, source: tuple[object, ...] | None) -> str:
        """The name of `kernel`, added as `<tag>_<n>` if it is new: a static kernel's computes' key `source` was
        new, so is the kernel; a kernel over run-time extents (`source` None) may be one of its structure added
        before (its key is hashed once: its attributes do not keep their hashes)."""
        key = structural_key(kernel) if source is None else source
        known = self.by_body if source is None else self.by_source
        if (name := known.get(key)) is None:
            known[key] = name = f"{tag}_{self.count}"
            self.count += 1
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
        return name


@dataclass
class _FunctionState:
    builder: Builder
    buffers: dict[SSAValue, SSAValue]
    kernels: _KernelTable
    index: IndexValues
    """The function's index values: run-time extents and what is computed from them."""

    def call_kernel(self, tag: str, signature: KernelSignature, source: tuple[object, ...] | None = None) -> None:
        """Call the kernel `signature` built (`_KernelTable.intern`)."""
        name = self.kernels.intern(tag, signature.function, source)
        self.builder.insert(func.CallOp(SymbolRefAttr(name), signature.operands, []))

    def allocate(self, value: SSAValue) -> SSAValue:
        """A `loop.alloc "global"` for the te tensor `value`, sized by its run-time extents where it has `?`s."""
        sizes = [extent for extent in self.index.extents(value) if isinstance(extent, SSAValue)]
        alloc = self.builder.insert(loop.AllocOp(buffer_type(value), "global", sizes))
        alloc.result.name_hint = value.name_hint
        return alloc.result


def _bufferize_function(function: func.FuncOp, kernels: _KernelTable) -> None:
    """Rewrite `function` over buffers; with `?` dimensions it takes the `memref<Kxi64>` of its input extents after
    its outputs, and `@<function>_output_extents` (inserted after it) computes its outputs' extents."""
    old_block = function.body.block
    name = function.sym_name.data
    results = function.function_type.outputs.data
    terminator = old_block.last_op
    assert isinstance(terminator, func.ReturnOp)
    returned = list(terminator.arguments)

    dynamic = any(is_dynamic(t) for t in (*function.function_type.inputs, *results))
    inputs = dynamic_input_extents(old_block.args)
    if dynamic:
        function.attributes[INPUT_EXTENTS_ATTR] = IntegerAttr(len(inputs), i64)
    if any(is_dynamic(value.type) for value in returned):
        extents_function, count = output_extents_function(name, returned, inputs)
        function.parent_block().insert_op_after(extents_function, function)  # type: ignore[union-attr]
        function.attributes[OUTPUT_EXTENTS_ATTR] = IntegerAttr(count, i64)
    arg_types = [buffer_type(arg) for arg in old_block.args] + [
        loop.memref_of(t.get_shape(), loop_type(t.element_type)) for t in results if isinstance(t, TensorType)
    ]
    if dynamic:
        arg_types.append(MemRefType(i64, [len(inputs)]))
    new_block = Block(arg_types=arg_types)
    for old, new in zip(old_block.args, new_block.args):
        new.name_hint = old.name_hint
    out_params = new_block.args[len(old_block.args) : len(old_block.args) + len(results)]
    for index, param in enumerate(out_params):
        param.name_hint = f"out{index}"

    # A computed value returned (first time) is written directly into its output buffer.
    direct_output: dict[SSAValue, SSAValue] = {}
    for value, param in zip(returned, out_params):
        if isinstance(value.owner, te.ComputeOp | te.CallExternOp) and value not in direct_output:
            direct_output[value] = param

    builder = Builder(InsertPoint.at_end(new_block))
    extents: dict[tuple[SSAValue, int], SSAValue] = {}
    if dynamic:
        new_block.args[-1].name_hint = "extents"
        loaded = load_input_extents(builder, new_block.args[-1], inputs, input_symbols_of(function))
        extents = dict(zip(inputs, loaded))
    index = IndexValues(builder, lambda argument, axis: extents[argument, axis], f"te-to-loop: @{name}")
    state = _FunctionState(builder, dict(zip(old_block.args, new_block.args)), kernels, index)
    for op in old_block.ops:
        if isinstance(op, te.ComputeOp) and te.KERNEL_GROUP in op.attributes:
            _lower_group_member(op, state, direct_output)
        elif isinstance(op, graph.WeightOp):
            if is_dynamic(op.result.type):
                raise DiagnosticException(f"te-to-loop: weight '{op.weight_name.data}' has a '?' dimension")
            weight = loop.WeightOp(op.weight_name.data, buffer_type(op.result))
            weight.result.name_hint = op.result.name_hint
            state.builder.insert(weight)
            state.buffers[op.result] = weight.result
        elif isinstance(op, te.ComputeOp):
            _lower_compute(op, state, direct_output.get(op.result))
        elif isinstance(op, te.ViewOp):
            view = state.builder.insert(loop.ViewOp(state.buffers[op.source], buffer_type(op.result)))
            view.result.name_hint = op.result.name_hint
            state.buffers[op.result] = view.result
        elif isinstance(op, te.CallExternOp):
            _lower_extern_call(op, state, direct_output)
        elif isinstance(op, te.DimOp) or is_index_arith(op):
            for result in op.results:
                index.value(result)
        elif isinstance(op, func.ReturnOp):
            for value, param in zip(returned, out_params):
                if direct_output.get(value) is not param:
                    _copy(state, value, param)
            state.builder.insert(func.ReturnOp())
        else:
            raise DiagnosticException(
                f"te-to-loop: cannot bufferize '{op.name}' in @{name}; lower graph ops with graph-to-te first"
            )

    function.body.detach_block(old_block)
    function.body.add_block(new_block)
    function.function_type = func.FunctionType.from_lists(arg_types, [])
    function.attributes[ENTRY_ATTR] = UnitAttr()


def _lower_compute(compute: te.ComputeOp, state: _FunctionState, output: SSAValue | None) -> None:
    _lower_stages([compute], state, {compute.result: output} if output is not None else {})


def _lower_group_member(compute: te.ComputeOp, state: _FunctionState, direct_output: dict[SSAValue, SSAValue]) -> None:
    """Collect `compute` into its kernel group; the group's last compute (the next op is not of the group) lowers
    the whole group as one kernel."""
    group = compute.attributes[te.KERNEL_GROUP]
    following = compute.next_op
    if isinstance(following, te.ComputeOp) and following.attributes.get(te.KERNEL_GROUP) == group:
        return
    members = [compute]
    while (previous := members[0].prev_op) is not None and previous.attributes.get(te.KERNEL_GROUP) == group:
        assert isinstance(previous, te.ComputeOp)
        members.insert(0, previous)
    outputs = {m.result: direct_output[m.result] for m in members if m.result in direct_output}
    _lower_stages(members, state, outputs)


@dataclass
class _KernelValues:
    """What a kernel's loop nests use: its buffer for each te tensor, and its index parameter for each of the
    function's te-level index values (extents, and outside values a body uses)."""

    buffers: dict[SSAValue, SSAValue]
    signature: KernelSignature
    index: IndexValues
    outside_indices: dict[te.ComputeOp, list[SSAValue]]
    """Per stage, the index values from outside its body that it uses (`_outside_values`)."""

    def extent(self, extent: int | SSAValue) -> int | SSAValue:
        return extent if isinstance(extent, int) else self.signature.extent(self.index.value(extent))

    def outside(self, compute: te.ComputeOp) -> dict[SSAValue, SSAValue]:
        """The kernel's parameter for each outside index value the compute's body uses."""
        return {value: self.signature.extent(self.index.value(value)) for value in self.outside_indices[compute]}


def _lower_stages(stages: Sequence[te.ComputeOp], state: _FunctionState, outputs: dict[SSAValue, SSAValue]) -> None:
    """One kernel computing `stages` in order: inputs are the tensors they read that none of them computes, then
    every stage's buffer (`outputs` where given, else a caller allocation), the last stage's last; then the index
    values the buffers' extents, the reductions' extents and the bodies use."""
    results = {stage.result for stage in stages}
    outside = [_outside_values(stage) for stage in stages]
    inputs = [t for t in dict.fromkeys(t for tensors, _ in outside for t in tensors) if t not in results]
    for stage in stages:
        state.buffers[stage.result] = outputs.get(stage.result) or state.allocate(stage.result)
    tensors = [*inputs, *(stage.result for stage in stages)]
    values = [
        state.index.value(value)
        for stage, (_, indices) in zip(stages, outside)
        for value in (*stage.reduce_extent_values(), *indices)
        if isinstance(value, SSAValue)
    ]
    extents = [state.index.extents(t) for t in tensors]
    static = not values and all(isinstance(extent, int) for buffer in extents for extent in buffer)
    source = _source_key(stages, tensors) if static else None
    if source is not None and (known := state.kernels.by_source.get(source)) is not None:
        state.builder.insert(func.CallOp(SymbolRefAttr(known), [state.buffers[t] for t in tensors], []))
        return
    signature = KernelSignature([state.buffers[t] for t in tensors], extents, values)
    outside_indices = {stage: indices for stage, (_, indices) in zip(stages, outside)}
    kernel = _KernelValues(dict(zip(tensors, signature.buffers)), signature, state.index, outside_indices)
    taken: set[str] = set()
    names = [_loop_names(stage, taken) for stage in reversed(stages)][::-1]
    for stage, stage_names in zip(stages, names):
        _emit_loops(stage, signature.function.body.block, kernel, stage_names)
    state.call_kernel(stages[-1].tag.data, signature, source)


def _source_key(stages: Sequence[te.ComputeOp], tensors: Sequence[SSAValue]) -> tuple[object, ...]:
    """What a static kernel is lowered from, all that its body depends on: its tensors' types in parameter order and
    each stage's compute (its reads keyed by tensor position, its index names, which name the loops; not its tag,
    which names only the kernel, nor its group number)."""
    return (
        tuple(tensor.type for tensor in tensors),
        *(
            (
                structural_key(stage, tensors, ignored=("tag", te.KERNEL_GROUP)),
                tuple(arg.name_hint for arg in stage.body.block.args),
            )
            for stage in stages
        ),
    )


def _lower_extern_call(call: te.CallExternOp, state: _FunctionState, direct_output: dict[SSAValue, SSAValue]) -> None:
    """`loop.call_extern` on the operands' buffers and the results' (output parameters or new allocations)."""
    if any(is_dynamic(value.type) for value in (*call.args, *call.res)):
        raise DiagnosticException(
            f"te-to-loop: te.call_extern '{call.callee.data}' has a tensor with a '?' dimension (external functions "
            "take static shapes)"
        )
    for result in call.res:
        state.buffers[result] = direct_output.get(result) or state.allocate(result)
    buffers = [state.buffers[value] for value in (*call.args, *call.res)]
    state.builder.insert(loop.CallExternOp(call.callee.data, buffers, len(call.res)))


def _copy(state: _FunctionState, value: SSAValue, target: SSAValue) -> None:
    """Copy the te value `value` (its buffer) into the output parameter `target`, by a copy kernel."""
    extents = state.index.extents(value)
    signature = KernelSignature([state.buffers[value], target], [extents, extents])
    src, dst = signature.buffers

    def store_element(builder: Builder, ivs: list[SSAValue]) -> None:
        load = builder.insert(built_ops.load(src, ivs))
        builder.insert(built_ops.store(load.res, dst, ivs))

    bounds = [signature.extent(extent) for extent in extents]
    body = signature.function.body.block
    _build_nest(Builder(InsertPoint.before(body.last_op)), _index_names(len(bounds)), bounds, store_element)  # type: ignore[arg-type]
    state.call_kernel("copy", signature)


def _outside_values(compute: te.ComputeOp) -> tuple[list[SSAValue], list[SSAValue]]:
    """The tensors a compute reads, in first-read order, and the `index` values from outside its body that it uses
    (an extent, for a mean); any other value from outside the body is an error. One pass over the body: a value
    defined inside it is defined before its uses (in its block, or in a block enclosing theirs); a region of several
    blocks has all its values counted first."""
    inside: set[SSAValue] = set()
    tensors: list[SSAValue] = []
    indices: list[SSAValue] = []

    def visit(block: Block) -> None:
        inside.update(block.args)
        for op in block.ops:
            for operand in op.operands:
                if operand in inside:
                    continue
                if isinstance(op, te.ReadOp) and operand is op.tensor:
                    if operand not in tensors:
                        tensors.append(operand)
                    continue
                if isinstance(operand.type, IndexType):
                    if operand not in indices:
                        indices.append(operand)
                    continue
                raise DiagnosticException(
                    f"te-to-loop: te.compute '{compute.tag.data}' uses a value defined outside its body "
                    f"other than through te.read or an index value (operand of {op.name})"
                )
            for region in op.regions:
                if len(region.blocks) > 1:
                    for inner in region.blocks:
                        inside.update(inner.args)
                        inside.update(result for nested in inner.walk() for result in nested.results)
                for inner in region.blocks:
                    visit(inner)
            inside.update(op.results)

    visit(compute.body.block)
    return tensors, indices


def _index_names(count: int, prefix: str = "i") -> list[str]:
    return [f"{prefix}{n}" for n in range(count)]


def _loop_names(compute: te.ComputeOp, taken: set[str]) -> list[str]:
    """Loop names from the compute's index names (`%i` -> "i"), made unique among themselves and `taken` (the names
    of the kernel's other stages), which they join."""
    names: list[str] = []
    for position, arg in enumerate(compute.body.block.args):
        name = arg.name_hint or f"{'i' if position < len(compute.shape) else 'k'}{position}"
        while name in names or name in taken:
            name += "_"
        names.append(name)
    taken.update(names)
    return names


def _build_nest(
    builder: Builder,
    names: Sequence[str],
    extents: Sequence[int | SSAValue],
    inner: Callable[[Builder, list[SSAValue]], None],
    ivs: tuple[SSAValue, ...] = (),
) -> None:
    if not extents:
        inner(builder, list(ivs))
        return
    body = loop.ForOp.empty_body()
    body.args[0].name_hint = names[0]
    builder.insert(loop.ForOp(names[0], 0, extents[0], body))
    _build_nest(Builder(InsertPoint.at_end(body)), names[1:], extents[1:], inner, (*ivs, body.args[0]))


def _is_exact_product(value: SSAValue) -> bool:
    """Whether `value` is a product marked `exact`: an add reading it gets no `contract` either, since a code
    generator may fuse on the add's flag alone (AArch64's machine combiner does), which would round the sum once."""
    return isinstance(value.owner, arith.MulfOp) and graph.EXACT_ATTR in value.owner.attributes


def _emit_body(compute: te.ComputeOp, builder: Builder, ivs: Sequence[SSAValue], kernel: _KernelValues):
    """Clone the compute body at `builder` with indices `ivs`, reading buffers; returns the yielded value."""
    params = kernel.buffers
    mapping: dict[SSAValue, SSAValue] = kernel.outside(compute) | dict(zip(compute.body.block.args, ivs))
    for op in compute.body.block.ops:
        if isinstance(op, te.YieldOp):
            return mapping.get(op.value, op.value)
        if isinstance(op, te.ReadOp):
            load = builder.insert(built_ops.load(params[op.tensor], [mapping[i] for i in op.indices]))
            load.res.name_hint = op.result.name_hint
            mapping[op.result] = load.res
            continue
        if isinstance(op, arith.BitcastOp) and mapping.get(op.input, op.input).type == loop_type(op.result.type):
            mapping[op.result] = mapping.get(op.input, op.input)  # a change of signedness, or bfloat16 <-> its bits
            continue
        clone = builder.insert(clone_op(op, mapping))
        for old, new in zip(op.results, clone.results):
            if loop_type(new.type) != new.type:
                mapping[old] = Rewriter.replace_value_with_new_type(new, loop_type(new.type))
        if (
            isinstance(clone, arith.MulfOp | arith.AddfOp | arith.SubfOp)
            and clone.fastmath == arith.FastMathFlagsAttr("none")
            and graph.EXACT_ATTR not in clone.attributes
            and not any(_is_exact_product(operand) for operand in clone.operands)
        ):
            clone.fastmath = FUSED_FLAGS
    raise AssertionError("te.compute body without te.yield")


def _emit_loops(compute: te.ComputeOp, block: Block, kernel: _KernelValues, names: Sequence[str]) -> None:
    """Append the compute's loop nest to the kernel `block` (before its return); an accumulator goes after the
    others and the `loop.extents`, before every loop nest."""
    terminator = block.last_op
    assert terminator is not None
    builder = Builder(InsertPoint.before(terminator))
    rank = len(compute.shape)
    out = kernel.buffers[compute.result]
    shape = [kernel.extent(extent) for extent in compute.output_extents()]
    reduce_extents = [kernel.extent(extent) for extent in compute.reduce_extent_values()]
    if compute.combiner is None:

        def store_element(inner: Builder, ivs: list[SSAValue]) -> None:
            inner.insert(built_ops.store(_emit_body(compute, inner, ivs, kernel), out, ivs))

        _build_nest(builder, names, shape, store_element)
        return

    combiner = compute.combiner.data
    result_type = compute.result.type
    assert isinstance(result_type, TensorType)
    element = result_type.element_type
    first_nest = next(op for op in block.ops if not isinstance(op, loop.AllocOp | loop.ExtentsOp))
    alloc = loop.AllocOp(loop.memref_of((), loop_type(element)), "local")
    accumulator = Builder(InsertPoint.before(first_nest)).insert(alloc).result
    accumulator.name_hint = "acc"

    def reduce_element(inner: Builder, ivs: list[SSAValue]) -> None:
        init = inner.insert(combiner_init(combiner, element))
        inner.insert(built_ops.store(init.result, accumulator, []))

        def update(innermost: Builder, reduce_ivs: list[SSAValue]) -> None:
            value = _emit_body(compute, innermost, [*ivs, *reduce_ivs], kernel)
            current = innermost.insert(built_ops.load(accumulator, []))
            combined = innermost.insert(combine(combiner, current.res, value, unsigned=is_unsigned(element)))
            innermost.insert(built_ops.store(combined.results[0], accumulator, []))

        _build_nest(inner, names[rank:], reduce_extents, update)
        final = inner.insert(built_ops.load(accumulator, []))
        inner.insert(built_ops.store(final.res, out, ivs))

    _build_nest(builder, names[:rank], shape, reduce_element)
