"""`loop-fuse-kernels`: merge the kernels of one fusion group into one kernel function, called once (TVM FuseOps).

A fused kernel holds several loop nests (stages), run one after the other, as a TVM fused primitive function does
(TOPI's conv2d keeps `data_pad` as its own stage). Runs on every public function's kernel calls after
`default-schedule`, so each stage keeps the schedule it was given, and before `loop-plan-memory`.

Each kernel gets a pattern from its structure (TVM's `OpPatternKind`, weakest first; `loop/kernel_patterns.py`):

- **elementwise**: no reduction, one store, every input read at the store's indices or at an ordered subset of
  them (broadcast, like a per-channel bias);
- **injective**: any other kernel without reduction (pad, transpose/layout copy, reshape);
- **contraction** (TVM's out-elementwise-fusable): a reduction (a `"local"` accumulator or tile, or reads of its own
  output) that multiplies two input reads, or takes the dot product of two reads of packed bfloat16 or int8 words:
  convolution, GEMM;
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

Where the elementwise stage directly follows the contraction stage that writes its input once per element from
register tiles, its body moves into the tiles' write-backs (TVM's epilogue at the cache write; `epilogue.py`): the
intermediate buffer and the stage's pass over it disappear. With no epilogue, a write-back that adds to a zeroed
output element by element (a convolution's NCHW output) stores each sum instead, and the zeroing goes
(`store_scalar_write_back`).

    func.call @pad_0(%x, %p)       // injective, only @conv_1 reads %p
    func.call @conv_1(%p, %w, %c)  // contraction, only @relu_2 reads %c
    func.call @relu_2(%c, %b, %y)  // elementwise
    // becomes
    func.call @fused_pad_conv_relu_3(%x, %w, %b, %p, %c, %y)  // without %c if relu_2 moved into the write-back

A dynamic model's kernels take their run-time extents after their buffers; buffers and extents are told apart by type
(`loop/kernel_patterns.py`). The fused kernel takes the buffers as above, then one `index` parameter per distinct SSA
value its calls pass as an extent (equal values are the same extent), so each stage's loops keep their own run-time
bounds. Write-backs under run-time loops are not folded: such a group's stages all run, its internal buffers stay.

    func.call @matmul_0(%x, %w, %m, %batch, %seq)  // contraction; extents %batch, %seq after its buffers
    func.call @relu_1(%m, %b, %y, %batch, %seq)    // elementwise
    // becomes
    func.call @fused_matmul_relu_1(%x, %w, %b, %m, %y, %batch, %seq)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import (
    ArrayAttr,
    DictionaryAttr,
    ModuleOp,
    StringAttr,
    SymbolRefAttr,
    UnitAttr,
)
from xdsl.ir import Block, Operation, Region, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter

from minimlc.lowering.abi import SCHEDULE_ATTR, TASK_ATTR
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.generic.structural_key import structural_key
from minimlc.lowering.loop.analysis import walk_ops
from minimlc.lowering.loop.kernel_patterns import Pattern, buffers, extents, is_extent, kernel_pattern, only_reader
from minimlc.lowering.program.epilogue import fold_epilogue, store_scalar_write_back


@dataclass
class _Group:
    calls: list[func.CallOp]
    pattern: Pattern


@dataclass
class _FusedTable:
    """Fused kernels of one module, deduplicated by their structure (`structural_key`) and, before one is built, by
    its group (`by_group`, `_group_key`): a repeated group (BERT's layers) is fused once."""

    module: ModuleOp
    by_body: dict[tuple[object, ...], str] = field(default_factory=dict)
    by_group: dict[tuple[object, ...], tuple[str, tuple[int, ...]]] = field(default_factory=dict)
    """A group's key -> its fused kernel and the positions of `_fused_arguments` that the kernel takes."""
    count: int = 0
    functions: set[str] | None = None
    """The names of the module's functions, listed at the first `intern` (one walk of the module, not one per name
    tried) and joined by the kernels it adds; the pass erases functions only after its last `intern`."""

    def intern(self, base: str, kernel: func.FuncOp) -> str:
        key = structural_key(kernel)
        if key not in self.by_body:
            if self.functions is None:
                self.functions = {op.sym_name.data for op in self.module.ops if isinstance(op, func.FuncOp)}
            name = f"{base}_{self.count}"
            while name in self.functions:
                self.count += 1
                name = f"{base}_{self.count}"
            self.count += 1
            kernel.sym_name = StringAttr(name)
            self.module.body.block.add_op(kernel)
            self.functions.add(name)
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
        consumer = only_reader(producer, call_set)
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


def _fused_arguments(calls: list[func.CallOp]) -> list[SSAValue]:
    """What a fused kernel of `calls` is passed, before an epilogue removes any: the group's inputs in first-use
    order, its internal buffers, its output, then its run-time extents (one per SSA value)."""
    internal = [buffers(call)[-1] for call in calls[:-1]]
    inputs: list[SSAValue] = []
    for call in calls:
        for value in buffers(call)[:-1]:
            if value not in internal and value not in inputs:
                inputs.append(value)
    sizes = list(dict.fromkeys(value for call in calls for value in extents(call)))
    return [*inputs, *internal, buffers(calls[-1])[-1], *sizes]


def _group_key(calls: list[func.CallOp], arguments: list[SSAValue]) -> tuple[object, ...]:
    """What a fused kernel is built from: its kernels, in order, and which of `arguments` each call passes where."""
    position = {value: index for index, value in enumerate(arguments)}
    return (
        tuple(value.type for value in arguments),
        *((call.callee.string_value(), tuple(position[value] for value in call.arguments)) for call in calls),
    )


def _fused_kernel(
    calls: list[func.CallOp], kernels: dict[str, func.FuncOp], arguments: list[SSAValue], moved: set[func.CallOp]
) -> tuple[func.FuncOp, list[SSAValue]]:
    """A kernel running the bodies of `calls` in order, and which of their `_fused_arguments` to pass it. The body of
    a call in `moved` is taken from its kernel, not copied (`_moved_calls`)."""
    internal = [buffers(call)[-1] for call in calls[:-1]]
    sizes = [value for value in arguments if is_extent(value)]
    arguments = list(arguments)
    block = Block(arg_types=[value.type for value in arguments])
    params = dict(zip(arguments, block.args))
    for index, param in enumerate(block.args):
        param.name_hint = f"in{index}"
    params[buffers(calls[-1])[-1]].name_hint = "out"
    for index, value in enumerate(sizes):
        params[value].name_hint = f"n{index}"
    for call in calls:
        kernel = kernels[call.callee.string_value()]
        mapping: dict[SSAValue, SSAValue] = {
            param: params[value] for param, value in zip(kernel.body.block.args, call.arguments)
        }
        if call in moved:
            for param, value in mapping.items():
                param.replace_all_uses_with(value)
        for op in list(kernel.body.block.ops):
            if not isinstance(op, func.ReturnOp):
                if call in moved:
                    op.detach()
                block.add_op(op if call in moved else clone_op(op, mapping))
    block.add_op(func.ReturnOp())
    for value in internal if not sizes else []:  # write-backs under run-time loops: not folded yet
        if fold_epilogue(block, params[value]):
            block.erase_arg(params[value])
            arguments.remove(value)
    types = [value.type for value in arguments]
    fused = func.FuncOp("fused", (types, []), Region(block), "private")
    fused.arg_attrs = ArrayAttr(
        [DictionaryAttr({} if is_extent(value) else {"llvm.noalias": UnitAttr()}) for value in arguments]
    )
    for name in (SCHEDULE_ATTR, TASK_ATTR):  # default-schedule{annotate}: the stages' schedules and tuning keys
        stages = [kernels[call.callee.string_value()].attributes.get(name) for call in calls]
        if any(isinstance(stage, StringAttr) for stage in stages):
            texts = [stage.data if isinstance(stage, StringAttr) else "-" for stage in stages]
            fused.attributes[name] = StringAttr(" + ".join(texts))
    return fused, arguments


def _tag(kernel_name: str) -> str:
    """`conv_input_nhwc_7` -> `conv_input_nhwc`."""
    return re.sub(r"_\d+$", "", kernel_name)


def _unreferenced_after_fusing(module: ModuleOp, members: set[func.CallOp]) -> set[str]:
    """The kernels that only `members` (the calls fusing replaces) refer to: nothing will once they are fused."""
    referrers: dict[str, list[Operation]] = {}
    for op in walk_ops(module):
        for value in (*op.properties.values(), *op.attributes.values()):
            if isinstance(value, SymbolRefAttr):
                referrers.setdefault(value.root_reference.data, []).append(op)
    names = {call.callee.string_value() for call in members}
    return {name for name in names if all(op in members for op in referrers[name])}


def _moved_calls(groups: list[list[func.CallOp]], keys: list[tuple[object, ...]], erased: set[str]) -> set[func.CallOp]:
    """The calls whose fused kernel takes their kernel's body instead of a copy: for each kernel of `erased`, its last
    call in the last group that builds a fused kernel (the first of its `keys`). Later groups of a key built before
    build nothing, and the kernel is erased after: most stages are copied no more."""
    built: set[tuple[object, ...]] = set()
    last: dict[str, func.CallOp] = {}
    for calls, key in zip(groups, keys):
        if key not in built:
            built.add(key)
            last.update((call.callee.string_value(), call) for call in calls if call.callee.string_value() in erased)
    return set(last.values())


@dataclass(frozen=True)
class LoopFuseKernelsPass(ModulePass):
    """Merge each fusion group of kernel calls (TVM FuseOps rules on kernel patterns) into one multi-stage kernel."""

    name = "loop-fuse-kernels"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        kernels = _kernels(op)
        table = _FusedTable(op)
        callers = [
            function
            for function in op.ops
            if isinstance(function, func.FuncOp) and function.body.blocks and function.sym_name.data not in kernels
        ]
        groups = [calls for function in callers for calls in fusion_groups(function, kernels)]
        candidates_of = [_fused_arguments(calls) for calls in groups]
        keys = [_group_key(calls, candidates) for calls, candidates in zip(groups, candidates_of)]
        erased = _unreferenced_after_fusing(op, {call for calls in groups for call in calls})
        moved = _moved_calls(groups, keys, erased)
        for calls, candidates, key in zip(groups, candidates_of, keys):
            names = [call.callee.string_value() for call in calls]
            if key not in table.by_group:
                fused, arguments = _fused_kernel(calls, kernels, candidates, moved)
                base = "fused_" + "_".join(dict.fromkeys(_tag(name) for name in names))
                kept = tuple(candidates.index(value) for value in arguments)
                table.by_group[key] = (table.intern(base, fused), kept)
            name, kept = table.by_group[key]
            call = func.CallOp(SymbolRefAttr(name), [candidates[index] for index in kept], [])
            Rewriter.insert_op(call, InsertPoint.before(calls[-1]))
            internal = [buffers(member)[-1] for member in calls[:-1]]
            for member in calls:
                Rewriter.erase_op(member)
            for buffer in internal:
                if not buffer.uses:
                    Rewriter.erase_op(buffer.owner)  # type: ignore[arg-type]
        for name in erased:
            Rewriter.erase_op(kernels[name])
        for kernel in _kernels(op).values():
            store_scalar_write_back(kernel)
