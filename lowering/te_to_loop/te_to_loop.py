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

Reductions accumulate in a `loop.alloc "local"` scalar (promoted to a register by LLVM): init, update in the
innermost loops, final store. Float `max` and `min` are `arith.maximumf`/`minimumf` (NaN-propagating) from -inf/+inf,
`maxnum` is `arith.maxnumf` from NaN (NaNs passed over; NaN only if every value is). Float contraction (fused
multiply-add) is allowed in kernels, and sums may be reassociated, as ONNX Runtime and TVM do.

Element types are the computes' own (f32, f64, f16, bf16, or integers such as the i64 of MaxPool's indices: integer
reductions combine with addi/muli/maxsi/minsi, or maxui/minui for unsigned ones, from 0, 1, or the type's extreme
values). The loop level is signless: unsigned types (`ui8`..`ui64`, whose ops te bodies already chose) become the
signless type of their width in buffers, scalars and constants, bfloat16 its 16 bits and float8, float4 and sub-byte
integers a byte (`loop_type`). Assumes
static shapes and te bodies that only read tensors through `te.read`.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    AnyFloat,
    ArrayAttr,
    BFloat16Type,
    DictionaryAttr,
    FloatAttr,
    IntegerAttr,
    IntegerType,
    MemRefType,
    ModuleOp,
    ReducedPrecisionFloatType,
    Signedness,
    StringAttr,
    SymbolRefAttr,
    TensorType,
    UnitAttr,
)
from xdsl.dialects.utils.fast_math import FastMathFlag
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import graph, loop, te
from minimlc.lowering.abi import ENTRY_ATTR
from minimlc.lowering.generic.structural_key import structural_key

_COMBINER_INIT = {"sum": 0.0, "prod": 1.0, "max": float("-inf"), "min": float("inf"), "maxnum": float("nan")}
_INTEGER_COMBINER = {"maxnum": "max"}
"""Combiners that are another one on integers (which have no NaN)."""
_FUSED_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.ALLOW_CONTRACT,))
_REDUCE_FLAGS = arith.FastMathFlagsAttr((FastMathFlag.REASSOC, FastMathFlag.ALLOW_CONTRACT))


def _is_unsigned(element: Attribute) -> bool:
    return isinstance(element, IntegerType) and element.signedness.data == Signedness.UNSIGNED


def loop_type(type: Attribute) -> Attribute:
    """The loop-level type of a te type (also as a memref's elements): unsigned integers become signless (`ui8` ->
    `i8`), bfloat16 its bits (`i16`: LLVM IR text through llvmlite has no `bfloat`; te bodies only bitcast it), float8,
    float4 and 4- and 2-bit integers a byte (`i8`, holding them in its low bits; te bodies only bitcast, extend and
    truncate them)."""
    if isinstance(type, IntegerType) and type.width.data in (2, 4):
        return IntegerType(8)
    if _is_unsigned(type):
        assert isinstance(type, IntegerType)
        return IntegerType(type.width.data)
    if isinstance(type, BFloat16Type):
        return IntegerType(16)
    if isinstance(type, ReducedPrecisionFloatType) and type.bitwidth <= 8:
        return IntegerType(8)
    if isinstance(type, MemRefType):
        return loop.memref_of(type.get_shape(), loop_type(type.element_type))
    return type


def _signless_constant(value: int, element: IntegerType) -> arith.ConstantOp:
    """An integer constant of `element`'s width, its bits those of `value` (taken modulo 2^width)."""
    width = element.width.data
    bits = value % (1 << width)
    signed = bits - (1 << width) if width > 1 and bits >= 1 << (width - 1) else bits
    return arith.ConstantOp(IntegerAttr(signed, IntegerType(width)))


def _combiner_init(combiner: str, element: Attribute) -> arith.ConstantOp:
    """The combiner's identity: for integers, 0, 1, or the type's smallest or largest value (signed or not)."""
    if isinstance(element, IntegerType):
        width = element.width.data
        if _is_unsigned(element):
            identities = {"sum": 0, "prod": 1, "max": 0, "min": (1 << width) - 1}
        else:
            identities = {"sum": 0, "prod": 1, "max": -(1 << (width - 1)), "min": (1 << (width - 1)) - 1}
        return _signless_constant(identities[_INTEGER_COMBINER.get(combiner, combiner)], element)
    assert isinstance(element, AnyFloat)
    return arith.ConstantOp(FloatAttr(_COMBINER_INIT[combiner], element))


def _combine(combiner: str, acc: SSAValue, value: SSAValue, *, unsigned: bool) -> Operation:
    if isinstance(acc.type, IntegerType):
        integer_ops = {"sum": arith.AddiOp, "prod": arith.MuliOp, "max": arith.MaxSIOp, "min": arith.MinSIOp}
        if unsigned:
            integer_ops |= {"max": arith.MaxUIOp, "min": arith.MinUIOp}
        return integer_ops[_INTEGER_COMBINER.get(combiner, combiner)](acc, value)
    if combiner == "sum":
        return arith.AddfOp(acc, value, _REDUCE_FLAGS)
    if combiner == "prod":
        return arith.MulfOp(acc, value, _REDUCE_FLAGS)
    if combiner == "max":
        return arith.MaximumfOp(acc, value)
    if combiner == "maxnum":
        return arith.MaxnumfOp(acc, value)
    return arith.MinimumfOp(acc, value)


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


def _buffer_type(value: SSAValue) -> Attribute:
    tensor = value.type
    if not isinstance(tensor, TensorType):
        raise DiagnosticException(f"te-to-loop: expected a tensor value, got {tensor}")
    return loop.memref_of(tensor.get_shape(), loop_type(tensor.element_type))


class _KernelTable:
    """Kernel functions of one module, deduplicated by their structure (`structural_key`)."""

    def __init__(self, module: ModuleOp):
        self.module = module
        self.by_body: dict[tuple[object, ...], str] = {}
        self.count = 0

    def intern(self, tag: str, kernel: func.FuncOp) -> str:
        key = structural_key(kernel)
        if key not in self.by_body:
            name = f"{tag}_{self.count}"
            self.count += 1
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
            self.by_body[key] = name
        return self.by_body[key]


@dataclass
class _FunctionState:
    builder: Builder
    buffers: dict[SSAValue, SSAValue]
    kernels: _KernelTable

    def call_kernel(self, tag: str, kernel: func.FuncOp, operands: Sequence[SSAValue]) -> None:
        name = self.kernels.intern(tag, kernel)
        self.builder.insert(func.CallOp(SymbolRefAttr(name), list(operands), []))


def _bufferize_function(function: func.FuncOp, kernels: _KernelTable) -> None:
    old_block = function.body.block
    results = function.function_type.outputs.data
    terminator = old_block.last_op
    assert isinstance(terminator, func.ReturnOp)
    returned = list(terminator.arguments)

    arg_types = [_buffer_type(arg) for arg in old_block.args] + [
        loop.memref_of(t.get_shape(), loop_type(t.element_type)) for t in results if isinstance(t, TensorType)
    ]
    new_block = Block(arg_types=arg_types)
    for old, new in zip(old_block.args, new_block.args):
        new.name_hint = old.name_hint
    out_params = new_block.args[len(old_block.args) :]
    for index, param in enumerate(out_params):
        param.name_hint = f"out{index}"

    # A computed value returned (first time) is written directly into its output buffer.
    direct_output: dict[SSAValue, SSAValue] = {}
    for value, param in zip(returned, out_params):
        if isinstance(value.owner, te.ComputeOp | te.CallExternOp) and value not in direct_output:
            direct_output[value] = param

    state = _FunctionState(Builder(InsertPoint.at_end(new_block)), dict(zip(old_block.args, new_block.args)), kernels)
    for op in old_block.ops:
        if isinstance(op, te.ComputeOp) and te.KERNEL_GROUP in op.attributes:
            _lower_group_member(op, state, direct_output)
        elif isinstance(op, graph.WeightOp):
            weight = loop.WeightOp(op.weight_name.data, _buffer_type(op.result))
            weight.result.name_hint = op.result.name_hint
            state.builder.insert(weight)
            state.buffers[op.result] = weight.result
        elif isinstance(op, te.ComputeOp):
            _lower_compute(op, state, direct_output.get(op.result))
        elif isinstance(op, te.CallExternOp):
            _lower_extern_call(op, state, direct_output)
        elif isinstance(op, func.ReturnOp):
            for value, param in zip(returned, out_params):
                if direct_output.get(value) is not param:
                    _copy(state, state.buffers[value], param)
            state.builder.insert(func.ReturnOp())
        else:
            raise DiagnosticException(
                f"te-to-loop: cannot bufferize '{op.name}' in @{function.sym_name.data}; "
                "lower graph ops with graph-to-te first"
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


def _lower_stages(stages: Sequence[te.ComputeOp], state: _FunctionState, outputs: dict[SSAValue, SSAValue]) -> None:
    """One kernel computing `stages` in order: inputs are the tensors they read that none of them computes, then
    every stage's buffer (`outputs` where given, else a caller allocation), the last stage's last."""
    results = {stage.result for stage in stages}
    inputs = [t for t in dict.fromkeys(t for stage in stages for t in _read_tensors(stage)) if t not in results]
    for stage in stages:
        output = outputs.get(stage.result)
        if output is None:
            alloc = loop.AllocOp(_buffer_type(stage.result), "global")
            alloc.result.name_hint = stage.result.name_hint
            state.builder.insert(alloc)
            output = alloc.result
        state.buffers[stage.result] = output
    operands = [*(state.buffers[t] for t in inputs), *(state.buffers[stage.result] for stage in stages)]
    kernel = _kernel_function([v.type for v in operands[:-1]], operands[-1].type)
    params = dict(zip([*inputs, *(stage.result for stage in stages)], kernel.body.block.args))
    taken: set[str] = set()
    names = [_loop_names(stage, taken) for stage in reversed(stages)][::-1]
    for stage, stage_names in zip(stages, names):
        _emit_loops(stage, kernel.body.block, params, params[stage.result], stage_names)
    state.call_kernel(stages[-1].tag.data, kernel, operands)


def _lower_extern_call(call: te.CallExternOp, state: _FunctionState, direct_output: dict[SSAValue, SSAValue]) -> None:
    """`loop.call_extern` on the operands' buffers and the results' (output parameters or new allocations)."""
    for result in call.res:
        if result not in direct_output:
            alloc = loop.AllocOp(_buffer_type(result), "global")
            alloc.result.name_hint = result.name_hint
            state.builder.insert(alloc)
        state.buffers[result] = direct_output.get(result) or alloc.result
    buffers = [state.buffers[value] for value in (*call.args, *call.res)]
    state.builder.insert(loop.CallExternOp(call.callee.data, buffers, len(call.res)))


def _copy(state: _FunctionState, source: SSAValue, target: SSAValue) -> None:
    kernel = _kernel_function([source.type], target.type)
    src, dst = kernel.body.block.args
    shape = target.type.get_shape()  # type: ignore[union-attr]

    def store_element(builder: Builder, ivs: list[SSAValue]) -> None:
        load = builder.insert(memref.LoadOp.get(src, ivs))
        builder.insert(memref.StoreOp.get(load.res, dst, ivs))

    _build_nest(Builder(InsertPoint.at_start(kernel.body.block)), _index_names(len(shape)), shape, store_element)
    state.call_kernel("copy", kernel, [source, target])


def _kernel_function(input_types: Sequence[Attribute], output_type: Attribute) -> func.FuncOp:
    """An empty private kernel `(inputs..., out) -> ()` whose buffer parameters do not alias."""
    types = [*input_types, output_type]
    kernel = func.FuncOp("kernel", (types, []), Region(Block([func.ReturnOp()], arg_types=types)), "private")
    kernel.arg_attrs = _noalias_attrs(len(types))
    for index, param in enumerate(kernel.body.block.args):
        param.name_hint = "out" if index == len(types) - 1 else f"in{index}"
    return kernel


def _noalias_attrs(count: int) -> ArrayAttr[DictionaryAttr]:
    return ArrayAttr([DictionaryAttr({"llvm.noalias": UnitAttr()}) for _ in range(count)])


def _read_tensors(compute: te.ComputeOp) -> list[SSAValue]:
    """The tensors a compute reads, in first-read order; any other value from outside the body is an error."""
    tensors: list[SSAValue] = []
    for op in compute.body.walk():
        for operand in op.operands:
            if _defined_inside(operand, compute):
                continue
            if isinstance(op, te.ReadOp) and operand is op.tensor:
                if operand not in tensors:
                    tensors.append(operand)
                continue
            raise DiagnosticException(
                f"te-to-loop: te.compute '{compute.tag.data}' uses a value defined outside its body "
                f"other than through te.read (operand of {op.name})"
            )
    return tensors


def _defined_inside(value: SSAValue, compute: te.ComputeOp) -> bool:
    owner = value.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        if block is compute.body.block:
            return True
        parent = block.parent_op()
        block = parent.parent_block() if parent is not None else None
    return False


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
    extents: Sequence[int],
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


def _emit_body(compute: te.ComputeOp, builder: Builder, ivs: Sequence[SSAValue], params: dict[SSAValue, SSAValue]):
    """Clone the compute body at `builder` with indices `ivs`, reading buffers; returns the yielded value."""
    mapping: dict[SSAValue, SSAValue] = dict(zip(compute.body.block.args, ivs))
    for op in compute.body.block.ops:
        if isinstance(op, te.YieldOp):
            return mapping.get(op.value, op.value)
        if isinstance(op, te.ReadOp):
            load = builder.insert(memref.LoadOp.get(params[op.tensor], [mapping[i] for i in op.indices]))
            load.res.name_hint = op.result.name_hint
            mapping[op.result] = load.res
            continue
        if isinstance(op, arith.BitcastOp) and mapping.get(op.input, op.input).type == loop_type(op.result.type):
            mapping[op.result] = mapping.get(op.input, op.input)  # a change of signedness, or bfloat16 <-> its bits
            continue
        clone = builder.insert(op.clone(value_mapper=mapping))
        for old, new in zip(op.results, clone.results):
            if loop_type(new.type) != new.type:
                mapping[old] = Rewriter.replace_value_with_new_type(new, loop_type(new.type))
        if (
            isinstance(clone, arith.MulfOp | arith.AddfOp | arith.SubfOp)
            and clone.fastmath == arith.FastMathFlagsAttr("none")
            and graph.EXACT_ATTR not in clone.attributes
        ):
            clone.fastmath = _FUSED_FLAGS
    raise AssertionError("te.compute body without te.yield")


def _emit_loops(
    compute: te.ComputeOp, block: Block, params: dict[SSAValue, SSAValue], out: SSAValue, names: Sequence[str]
) -> None:
    """Append the compute's loop nest to the kernel `block` (before its return); an accumulator goes after the
    others, before every loop nest."""
    terminator = block.last_op
    assert terminator is not None
    builder = Builder(InsertPoint.before(terminator))
    rank = len(compute.shape)
    if compute.combiner is None:

        def store_element(inner: Builder, ivs: list[SSAValue]) -> None:
            inner.insert(memref.StoreOp.get(_emit_body(compute, inner, ivs, params), out, ivs))

        _build_nest(builder, names, compute.shape, store_element)
        return

    combiner = compute.combiner.data
    result_type = compute.result.type
    assert isinstance(result_type, TensorType)
    element = result_type.element_type
    first_nest = next(op for op in block.ops if not isinstance(op, loop.AllocOp))
    alloc = loop.AllocOp(loop.memref_of((), loop_type(element)), "local")
    accumulator = Builder(InsertPoint.before(first_nest)).insert(alloc).result
    accumulator.name_hint = "acc"

    def reduce_element(inner: Builder, ivs: list[SSAValue]) -> None:
        init = inner.insert(_combiner_init(combiner, element))
        inner.insert(memref.StoreOp.get(init.result, accumulator, []))

        def update(innermost: Builder, reduce_ivs: list[SSAValue]) -> None:
            value = _emit_body(compute, innermost, [*ivs, *reduce_ivs], params)
            current = innermost.insert(memref.LoadOp.get(accumulator, []))
            combined = innermost.insert(_combine(combiner, current.res, value, unsigned=_is_unsigned(element)))
            innermost.insert(memref.StoreOp.get(combined.results[0], accumulator, []))

        _build_nest(inner, names[rank:], compute.extents, update)
        final = inner.insert(memref.LoadOp.get(accumulator, []))
        inner.insert(memref.StoreOp.get(final.res, out, ivs))

    _build_nest(builder, names[:rank], compute.shape, reduce_element)
