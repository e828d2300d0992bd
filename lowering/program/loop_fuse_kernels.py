"""`loop-fuse-kernels`: merge the kernels of one fusion group into one kernel function, called once (TVM FuseOps).

A fused kernel holds several loop nests (stages), run one after the other, as a TVM fused primitive function does
(TOPI's conv2d keeps `data_pad` as its own stage). Runs on every public function's kernel calls after
`default-schedule`, so each stage keeps the schedule it was given, and before `loop-plan-memory`.

Each kernel gets a pattern from its structure (TVM's `OpPatternKind`, weakest first):

- **elementwise**: no reduction, one store, every input read at the store's indices or at an ordered subset of
  them (broadcast, like a per-channel bias);
- **injective**: any other kernel without reduction (pad, transpose/layout copy, reshape);
- **contraction** (TVM's out-elementwise-fusable): a reduction (a `"local"` accumulator or tile, or reads of its own
  output) that multiplies two input reads: convolution, GEMM;
- **reduction**: any other reduction (pooling, softmax's max and sum).

Groups grow along producer -> consumer edges of the calling function, visited in program order; an edge is only
taken when the producer's output is an intermediate buffer (`loop.alloc "global"`) that exactly one call reads, so
no value read by several groups is ever fused across (nothing is recomputed) and every group has one output, its
last call's. A group whose strongest pattern is injective or weaker joins its consumer's group, whatever that is
(pads and layout copies become stages of their convolution); a contraction group absorbs an elementwise consumer
whose group holds nothing stronger than injective (bias, ReLU, a residual add: the other operand is just another
input), so a group holds at most one contraction; reduction groups stay as they are.

The fused kernel takes the group's inputs (first use order), then its internal buffers, then its output; internal
buffers stay `loop.alloc "global"` in the caller, so memory planning still places them in the arena, alive only
during the fused call. The call replaces the group's last call. Fused kernels are deduplicated by printed body, as
`te-to-loop` does; kernels nothing refers to any more are erased.

Where a contraction stage zeroes its output and then adds each element's finished sum once, from its register tile
(`loop-decompose-reduction` + `loop-cache-write accumulate=true` with the whole reduction inside the tile loop, as
the convolution schedule has it; checked: the write-back loops visit every element exactly once), and its
elementwise stage follows directly, the elementwise body moves into the write-back (TVM's epilogue at the cache
write): it reads the tile's value instead of the intermediate, so the zeroing, the intermediate buffer and the
stage's pass over it disappear. In a vectorized write-back (a channels-last convolution's, a GEMM's whose whole
reduction is in the tile loop) the epilogue becomes vector code too, so one with a libm call or a bool (i1) read (no
vector form) stays a stage of its own. With no epilogue, a write-back element by element (a convolution's NCHW
output) stores each sum instead of adding it, and the zeroing goes (`_store_scalar_write_back`).

    func.call @pad_0(%x, %p)       // injective, only @conv_1 reads %p
    func.call @conv_1(%p, %w, %c)  // contraction, only @relu_2 reads %c
    func.call @relu_2(%c, %b, %y)  // elementwise
    // becomes
    func.call @fused_pad_conv_relu_3(%x, %w, %b, %p, %c, %y)  // without %c if relu_2 moved into the write-back
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from enum import IntEnum

from xdsl.builder import Builder
from xdsl.context import Context
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    FloatAttr,
    IndexType,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
    f32,
)
from xdsl.ir import Attribute, Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.dialects import loop
from minimlc.lowering.abi import SCHEDULE_ATTR
from minimlc.lowering.llvm.arith_patterns import LIBM_FUNCTIONS
from minimlc.lowering.loop.analysis import (
    Affine,
    affine_form,
    enclosing_loops,
    is_bool_buffer,
    loop_of,
    structural_key,
    writes_each_element_once,
)

_ZERO = FloatAttr(0.0, f32)


class Pattern(IntEnum):
    """How a kernel may fuse, weakest first (TVM's kElemWise/kBroadcast, kInjective, kOutEWiseFusable, kCommReduce)."""

    ELEMENTWISE = 0
    INJECTIVE = 1
    CONTRACTION = 2
    REDUCTION = 3


def kernel_pattern(kernel: func.FuncOp) -> Pattern:
    """The pattern of a kernel `(inputs..., out)` (see the module docstring)."""
    *inputs, out = kernel.body.block.args
    ops = list(kernel.walk())
    reduces = any(isinstance(op, loop.AllocOp) and op.scope.data == "local" for op in ops) or any(
        isinstance(op, memref.LoadOp) and op.memref is out for op in ops
    )
    if reduces:
        contracts = any(
            isinstance(op, arith.MulfOp)
            and all(isinstance(v.owner, memref.LoadOp) and v.owner.memref in inputs for v in (op.lhs, op.rhs))
            for op in ops
        )
        return Pattern.CONTRACTION if contracts else Pattern.REDUCTION
    stores = [op for op in ops if isinstance(op, memref.StoreOp)]
    if len(stores) != 1 or stores[0].memref is not out:
        return Pattern.INJECTIVE
    out_forms = [_form(index) for index in stores[0].indices]
    for load in (op for op in ops if isinstance(op, memref.LoadOp)):
        if not _reads_along(out_forms, [_form(index) for index in load.indices]):
            return Pattern.INJECTIVE
    return Pattern.ELEMENTWISE


def _form(index: SSAValue) -> Affine | None:
    form = affine_form(index)
    return None if form is None else {key: coeff for key, coeff in form.items() if coeff}


def _reads_along(out_forms: list[Affine | None], read_forms: list[Affine | None]) -> bool:
    """True if each read index is one of the output's indices, in the output's dimension order."""
    position = 0
    for form in read_forms:
        while position < len(out_forms) and (form is None or out_forms[position] != form):
            position += 1
        if position == len(out_forms):
            return False
        position += 1
    return True


@dataclass
class _Group:
    calls: list[func.CallOp]
    pattern: Pattern


@dataclass
class _FusedTable:
    """Fused kernels of one module, deduplicated by their structure (`structural_key`)."""

    module: ModuleOp
    by_body: dict[tuple[object, ...], str] = field(default_factory=dict)
    count: int = 0

    def intern(self, base: str, kernel: func.FuncOp) -> str:
        key = structural_key(kernel)
        if key not in self.by_body:
            name = f"{base}_{self.count}"
            while any(isinstance(op, func.FuncOp) and op.sym_name.data == name for op in self.module.ops):
                self.count += 1
                name = f"{base}_{self.count}"
            self.count += 1
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
            self.by_body[key] = name
        return self.by_body[key]


def _kernels(module: ModuleOp) -> dict[str, func.FuncOp]:
    return {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp)
        and op.body.blocks
        and op.sym_visibility is not None
        and op.sym_visibility.data == "private"
    }


def _only_reader(call: func.CallOp, calls: set[func.CallOp]) -> func.CallOp | None:
    """The one kernel call that reads `call`'s output, if the output is an intermediate used by nothing else."""
    output = call.arguments[-1]
    alloc = output.owner
    if not isinstance(alloc, loop.AllocOp) or alloc.scope.data != "global":
        return None
    readers: set[Operation] = set()
    for use in output.uses:
        if use.operation is call and use.index == len(call.arguments) - 1:
            continue
        if use.operation not in calls or use.index == len(use.operation.operands) - 1:
            return None
        readers.add(use.operation)
    if len(readers) != 1:
        return None
    reader = readers.pop()
    assert isinstance(reader, func.CallOp)
    return reader


def _can_fuse(producer: Pattern, consumer: Pattern, consumer_group: Pattern) -> bool:
    if producer <= Pattern.INJECTIVE:
        return True
    return producer == Pattern.CONTRACTION and consumer == Pattern.ELEMENTWISE and consumer_group <= Pattern.INJECTIVE


def fusion_groups(function: func.FuncOp, kernels: dict[str, func.FuncOp]) -> list[list[func.CallOp]]:
    """The groups of two or more kernel calls of `function` to fuse, each in program order."""
    calls = [
        op for op in function.body.block.ops if isinstance(op, func.CallOp) and op.callee.string_value() in kernels
    ]
    patterns = {call: kernel_pattern(kernels[call.callee.string_value()]) for call in calls}
    group_of = {call: _Group([call], patterns[call]) for call in calls}
    call_set = set(calls)
    for producer in calls:
        consumer = _only_reader(producer, call_set)
        if consumer is None:
            continue
        source, target = group_of[producer], group_of[consumer]
        if not _can_fuse(source.pattern, patterns[consumer], target.pattern):
            continue
        target.calls = source.calls + target.calls
        target.pattern = max(source.pattern, target.pattern)
        for call in source.calls:
            group_of[call] = target
    order = {call: position for position, call in enumerate(calls)}
    groups = {id(group): group for group in group_of.values() if len(group.calls) > 1}
    return [sorted(group.calls, key=order.__getitem__) for group in groups.values()]


def _fused_kernel(calls: list[func.CallOp], kernels: dict[str, func.FuncOp]) -> tuple[func.FuncOp, list[SSAValue]]:
    """A kernel running the bodies of `calls` in order, and the caller's buffers to pass it."""
    internal = [call.arguments[-1] for call in calls[:-1]]
    inputs: list[SSAValue] = []
    for call in calls:
        for value in call.arguments[:-1]:
            if value not in internal and value not in inputs:
                inputs.append(value)
    arguments = [*inputs, *internal, calls[-1].arguments[-1]]
    block = Block(arg_types=[value.type for value in arguments])
    params = dict(zip(arguments, block.args))
    for index, param in enumerate(block.args):
        param.name_hint = "out" if index == len(arguments) - 1 else f"in{index}"
    for call in calls:
        kernel = kernels[call.callee.string_value()]
        mapping: dict[SSAValue, SSAValue] = {
            param: params[value] for param, value in zip(kernel.body.block.args, call.arguments)
        }
        for op in kernel.body.block.ops:
            if not isinstance(op, func.ReturnOp):
                block.add_op(op.clone(value_mapper=mapping))
    block.add_op(func.ReturnOp())
    for value in internal:
        epilogue = _find_epilogue(block, params[value])
        if epilogue is not None and _fold_epilogue(epilogue):
            block.erase_arg(params[value])
            arguments.remove(value)
    types = [value.type for value in arguments]
    fused = func.FuncOp("fused", (types, []), Region(block), "private")
    fused.arg_attrs = ArrayAttr([DictionaryAttr({"llvm.noalias": UnitAttr()}) for _ in arguments])
    schedules = [kernels[call.callee.string_value()].attributes.get(SCHEDULE_ATTR) for call in calls]
    if any(isinstance(schedule, StringAttr) for schedule in schedules):  # default-schedule{annotate}: the stages'
        texts = [schedule.data if isinstance(schedule, StringAttr) else "-" for schedule in schedules]
        fused.attributes[SCHEDULE_ATTR] = StringAttr(" + ".join(texts))
    return fused, arguments


def _tag(kernel_name: str) -> str:
    """`conv_input_nhwc_7` -> `conv_input_nhwc`."""
    return re.sub(r"_\d+$", "", kernel_name)


def _referenced_symbols(module: ModuleOp) -> set[str]:
    names: set[str] = set()
    for op in module.walk():
        values: list[Attribute] = [*op.properties.values(), *op.attributes.values()]
        names.update(value.root_reference.data for value in values if isinstance(value, SymbolRefAttr))
    return names


@dataclass(frozen=True)
class LoopFuseKernelsPass(ModulePass):
    """Merge each fusion group of kernel calls (TVM FuseOps rules on kernel patterns) into one multi-stage kernel."""

    name = "loop-fuse-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = _kernels(op)
        table = _FusedTable(op)
        members: set[str] = set()
        callers = [
            function
            for function in op.ops
            if isinstance(function, func.FuncOp) and function.body.blocks and function.sym_name.data not in kernels
        ]
        for function in callers:
            for calls in fusion_groups(function, kernels):
                fused, arguments = _fused_kernel(calls, kernels)
                names = [call.callee.string_value() for call in calls]
                base = "fused_" + "_".join(dict.fromkeys(_tag(name) for name in names))
                call = func.CallOp(SymbolRefAttr(table.intern(base, fused)), arguments, [])
                Rewriter.insert_op(call, InsertPoint.before(calls[-1]))
                internal = [member.arguments[-1] for member in calls[:-1]]
                for member in calls:
                    Rewriter.erase_op(member)
                for buffer in internal:
                    if not buffer.uses:
                        Rewriter.erase_op(buffer.owner)  # type: ignore[arg-type]
                members.update(names)
        referenced = _referenced_symbols(op)
        for name in members - referenced:
            Rewriter.erase_op(kernels[name])
        for kernel in _kernels(op).values():
            _store_scalar_write_back(kernel)


@dataclass
class _Epilogue:
    """A contraction stage that zeroes buffer `buffer` and adds each element's value once at `write_back`, followed
    directly by the elementwise stage `stage` whose innermost body `body` reads `buffer` once, at its store's
    indices."""

    buffer: SSAValue
    zeroing: Operation
    write_back: memref.StoreOp
    stage: loop.ForOp
    body: Block
    forms: list[Affine | None]


def _top_level(op: Operation, block: Block) -> Operation | None:
    current: Operation | None = op
    while current is not None and current.parent_block() is not block:
        current = current.parent_op()
    return current


def _find_epilogue(block: Block, buffer: SSAValue) -> _Epilogue | None:
    """The epilogue pattern on internal buffer `buffer` of a fused kernel's `block`, if it is there."""
    stores = [use.operation for use in buffer.uses if isinstance(use.operation, memref.StoreOp)]
    loads = [use.operation for use in buffer.uses if isinstance(use.operation, memref.LoadOp)]
    if len(stores) != 2 or len(loads) != 2 or len(stores) + len(loads) != len(list(buffer.uses)):
        return None
    zero = [s for s in stores if isinstance(s.value.owner, arith.ConstantOp) and s.value.owner.value == _ZERO]
    if len(zero) != 1:
        return None
    write_back = next(s for s in stores if s is not zero[0])
    total = write_back.value.owner
    old = next((load for load in loads if load.parent_block() is write_back.parent_block()), None)
    if (
        not isinstance(total, arith.AddfOp)
        or old is None
        or total.lhs is not old.res
        or len(list(total.result.uses)) != 1
    ):
        return None
    if list(old.indices) != list(write_back.indices) or len(list(old.res.uses)) != 1:
        return None
    read = next(load for load in loads if load is not old)
    zeroing, nest, stage = (_top_level(op, block) for op in (zero[0], write_back, read))
    if zeroing is None or nest is None or not isinstance(stage, loop.ForOp) or nest.next_op is not stage:
        return None
    if any(isinstance(op, memref.StoreOp | memref.LoadOp) and op is not zero[0] for op in zeroing.walk()):
        return None
    if not writes_each_element_once(write_back, nest):
        return None
    for op in nest.walk():
        if isinstance(op, memref.StoreOp) and op.memref is not buffer:
            local = op.memref.owner
            if not (isinstance(local, loop.AllocOp) and local.scope.data == "local"):
                return None
    body = read.parent_block()
    assert body is not None
    vectorized = any(lp.kind.data == "vectorize" for lp in enclosing_loops(write_back, nest))
    if vectorized and any(type(op) in LIBM_FUNCTIONS or _reads_bools(op) for op in body.walk()):
        return None  # the write-back is one vector operation per tile row; a libm call or an i1 load has no vector form
    current: Operation = stage
    while isinstance(current, loop.ForOp) and current.body.block is not body:
        ops = list(current.body.block.ops)
        if len(ops) != 1:
            return None
        current = ops[0]
    out_stores = [op for op in stage.walk() if isinstance(op, memref.StoreOp)]
    if len(out_stores) != 1 or out_stores[0].parent_block() is not body:
        return None
    if out_stores[0].memref.type != buffer.type:
        return None  # a slice or broadcast: the write-back's elements are not the stage's
    forms = [_form(index) for index in out_stores[0].indices]
    if [_form(index) for index in read.indices] != forms or any(form is None for form in forms):
        return None
    return _Epilogue(buffer, zeroing, write_back, stage, body, forms)


def _store_scalar_write_back(kernel: func.FuncOp) -> None:
    """Where a contraction zeroes its output and adds each element's finished sum once from its tile, element by
    element (an NCHW output of a convolution vectorized over channels: LLVM makes the add a gather and a scatter),
    store the sum instead and drop the zeroing pass (SqueezeNet's expand convolutions, ShuffleNet's stem)."""
    block = kernel.body.block
    uses = [use.operation for use in block.args[-1].uses] if block.args else []
    zero = [op for op in uses if isinstance(op, memref.StoreOp) and _stores_zero(op)]
    loads = [op for op in uses if isinstance(op, memref.LoadOp)]
    stores = [op for op in uses if isinstance(op, memref.StoreOp) and not _stores_zero(op)]
    if len(uses) != 3 or len(zero) != 1 or len(loads) != 1 or len(stores) != 1:
        return
    (old,), (write_back,), total = loads, stores, stores[0].value.owner
    zeroing, nest = _top_level(zero[0], block), _top_level(write_back, block)
    if not isinstance(total, arith.AddfOp) or total.lhs is not old.res or len(list(total.result.uses)) != 1:
        return
    if list(old.indices) != list(write_back.indices) or len(list(old.res.uses)) != 1 or zeroing is None or not nest:
        return
    if block.get_operation_index(zeroing) >= block.get_operation_index(nest) or any(
        isinstance(op, memref.StoreOp | memref.LoadOp) and op is not zero[0] for op in zeroing.walk()
    ):
        return
    vector = any(lp.kind.data == "vectorize" for lp in enclosing_loops(write_back, nest))
    if not vector and writes_each_element_once(write_back, nest):  # vector write-backs: no faster (docs/DESIGN.md)
        Rewriter.replace_op(total, [], [total.rhs])
        for op in (old, zeroing):
            Rewriter.erase_op(op)


def _stores_zero(store: memref.StoreOp) -> bool:
    return isinstance(store.value.owner, arith.ConstantOp) and store.value.owner.value == _ZERO


def _reads_bools(op: Operation) -> bool:
    return isinstance(op, memref.LoadOp) and is_bool_buffer(op.memref)


def _dims(forms: list[Affine | None], indices: list[SSAValue]) -> list[int] | None:
    dims = []
    for index in indices:
        form = _form(index)
        if form not in forms:
            return None
        dims.append(forms.index(form))
    return dims


def _fold_epilogue(epilogue: _Epilogue) -> bool:
    """Compute the elementwise stage at the contraction's write-back instead of in a pass of its own."""
    write_back = epilogue.write_back
    total = write_back.value.owner
    assert isinstance(total, arith.AddfOp)
    value = total.rhs
    indices = list(write_back.indices)
    plan: list[tuple[Operation, list[int] | None]] = []
    skipped: set[SSAValue] = set()
    for op in epilogue.body.ops:
        if isinstance(op, memref.LoadOp | memref.StoreOp):
            dims = _dims(epilogue.forms, list(op.indices))
            if dims is None:
                return False
            plan.append((op, dims))
        elif all(isinstance(result.type, IndexType) for result in op.results) and op.results:
            if any(not isinstance(use.operation, memref.LoadOp | memref.StoreOp) for r in op.results for use in r.uses):
                return False
            skipped.update(op.results)
        else:
            if any(operand in skipped or loop_of(operand) is not None for operand in op.operands):
                return False
            plan.append((op, None))
    builder = Builder(InsertPoint.before(write_back))
    mapping: dict[SSAValue, SSAValue] = {}
    for op, dims in plan:
        if isinstance(op, memref.LoadOp) and op.memref is epilogue.buffer:
            mapping[op.res] = value
        elif isinstance(op, memref.LoadOp):
            assert dims is not None
            load = builder.insert(memref.LoadOp.get(op.memref, [indices[d] for d in dims]))
            load.res.name_hint = op.res.name_hint
            mapping[op.res] = load.res
        elif isinstance(op, memref.StoreOp):
            assert dims is not None
            stored = mapping.get(op.value, op.value)
            builder.insert(memref.StoreOp.get(stored, op.memref, [indices[d] for d in dims]))
        else:
            builder.insert(op.clone(value_mapper=mapping))
    old = total.lhs.owner
    for op in (write_back, total, old, epilogue.zeroing, epilogue.stage):
        Rewriter.erase_op(op)  # type: ignore[arg-type]
    return True
