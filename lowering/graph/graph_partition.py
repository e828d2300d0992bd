"""`graph-partition{target=NAME}`: offload the graph ops an external target supports (TVM's BYOC: annotate, merge
compiler regions, partition) into functions for that target's code generator.

1. Mark: an op is offloaded if the target's predicate (`PARTITION_TARGETS`) accepts it.
2. Merge: in program order, each marked op joins the region of its marked producers, all of them merged into one,
   if that creates no cycle (a path leaving the region through an op outside it and coming back); otherwise the
   first producer region it can join without one, else a region of its own. A region may so span an unmarked op
   that does not depend on it (its result becomes a region input), never one between two of its ops.
3. Outline: each region becomes `func.func private @<target>_region_<k>` (its inputs: the values it reads from
   outside, weights included; its outputs: the values read outside it), marked `minimlc.external_target`, called
   from where its last op was; then the ops are reordered so that each follows what it reads (an unmarked reader of
   a region's result that stood before that point moves after the call), keeping their order otherwise.

    %a = graph.conv %x, %w : ...                     %u = graph.sigmoid %y : ...
    %u = graph.sigmoid %y : ...             ->       %b = func.call @c_region_0(%x, %w, %u) : ...
    %b = graph.add %a, %u : ...

The runtime's code generators (`byoc/partition.py`) compile the outlined functions and replace each call with a
`graph.call_extern` of the code they registered; on its own the pass only partitions (for lit tests and mini-opt).
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr, f32
from xdsl.ir import Block, Operation, SSAValue
from xdsl.passes import ModulePass
from xdsl.rewriter import InsertPoint, Rewriter
from xdsl.utils.exceptions import PassFailedException

from minimlc.dialects import graph

EXTERNAL_TARGET_ATTR = "minimlc.external_target"
"""On an outlined region function: the name of the target whose code generator compiles it."""


def _f32_only(op: Operation) -> bool:
    return all(graph.element_type(value) == f32 for value in (*op.operands, *op.results))


def _c_supports(op: Operation) -> bool:
    if not _f32_only(op):
        return False
    if isinstance(op, graph.ConvOp):
        return len(graph.shape_of(op.input)) == 4
    if isinstance(op, graph.MatMulOp):
        return len(graph.shape_of(op.lhs)) == len(graph.shape_of(op.rhs)) == 2
    return isinstance(op, graph.AddOp | graph.ReluOp | graph.GemmOp)


def _onnxruntime_supports(op: Operation) -> bool:
    elementwise = (graph.AddOp, graph.SubOp, graph.MulOp, graph.ReluOp, graph.SigmoidOp, graph.TanhOp)
    return _f32_only(op) and isinstance(op, (*elementwise, graph.ConvOp, graph.MatMulOp, graph.GemmOp))


PARTITION_TARGETS: dict[str, Callable[[Operation], bool]] = {
    "c": _c_supports,
    "onnxruntime": _onnxruntime_supports,
}
"""External target name -> whether it can run a graph op: the targets `byoc/partition.py` ships code generators for."""


def register_partition_target(name: str, supports: Callable[[Operation], bool]) -> None:
    """Make `graph-partition{target=name}` offload the ops `supports` accepts."""
    PARTITION_TARGETS[name] = supports


@dataclass(frozen=True)
class GraphPartitionPass(ModulePass):
    """Outline the regions of ops an external target supports into functions for its code generator."""

    name = "graph-partition"

    target: str = ""

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        supports = PARTITION_TARGETS.get(self.target)
        if supports is None:
            known = ", ".join(sorted(PARTITION_TARGETS))
            raise PassFailedException(f"graph-partition: unknown target '{self.target}' (registered: {known})")
        functions = [f for f in op.ops if isinstance(f, func.FuncOp) and f.body.blocks]
        count = 0
        for function in functions:
            if EXTERNAL_TARGET_ATTR in function.attributes:
                continue
            for region in _regions(function, supports):
                _outline(op, region, f"{self.target}_region_{count}", self.target)
                count += 1
            _sort_topologically(function.body.block)


def _regions(function: func.FuncOp, supports: Callable[[Operation], bool]) -> list[list[Operation]]:
    """The marked ops of `function` grouped into acyclic regions, each in program order."""
    ops = list(function.body.block.ops)
    position = {op: index for index, op in enumerate(ops)}
    region_of: dict[Operation, int] = {}
    members: dict[int, list[Operation]] = {}
    for op in ops:
        if isinstance(op, graph.WeightOp | graph.ConstantOp) or op.name.startswith("func.") or not supports(op):
            continue
        producers = [p for p in dict.fromkeys(v.owner for v in op.operands) if p in region_of]
        candidates = list(dict.fromkeys(region_of[p] for p in producers))
        choices = [candidates] + [[c] for c in candidates] if len(candidates) > 1 else [candidates]
        chosen: list[int] = []
        for choice in choices:
            merged = {m for r in choice for m in members[r]} | {op}
            if not _has_cycle(merged, position, position[op]):
                chosen = choice
                break
        if not chosen:
            region = len(members)
            members[region] = []
        else:
            region = chosen[0]
            for other in chosen[1:]:
                for moved in members.pop(other):
                    region_of[moved] = region
                    members[region].append(moved)
        region_of[op] = region
        members[region].append(op)
    return [sorted(region, key=position.__getitem__) for region in members.values()]


def _has_cycle(merged: set[Operation], position: dict[Operation, int], limit: int) -> bool:
    """Whether a path leaves `merged` and comes back through ops outside it (all before position `limit`)."""
    frontier = [use.operation for m in merged for result in m.results for use in result.uses]
    seen: set[Operation] = set()
    while frontier:
        op = frontier.pop()
        if op in seen or op in merged or position.get(op, limit) >= limit:
            continue
        seen.add(op)
        for result in op.results:
            for use in result.uses:
                if use.operation in merged:
                    return True
                frontier.append(use.operation)
    return False


def _sort_topologically(block: Block) -> None:
    """Reorder `block` so that every op follows the ops it reads, otherwise keeping the current order (depth-first
    over operands, in block order): the calls, once in, may be read by ops that stood before their region's end."""
    ops = list(block.ops)
    inside = set(ops)
    placed: set[Operation] = set()
    order: list[Operation] = []
    for root in ops:
        stack: list[tuple[Operation, bool]] = [(root, False)]
        while stack:
            op, ready = stack.pop()
            if op in placed:
                continue
            if ready:
                placed.add(op)
                order.append(op)
                continue
            stack.append((op, True))
            for operand in reversed(op.operands):
                owner = operand.owner
                if isinstance(owner, Operation) and owner in inside and owner not in placed:
                    stack.append((owner, False))
    for op in order:
        op.detach()
        block.add_op(op)


def _outline(module: ModuleOp, region: list[Operation], name: str, target: str) -> None:
    """Move `region` into a new function and call it where its last op was (a reader of its results may now come
    before the call: `_sort_topologically` moves it after)."""
    inside = set(region)
    inputs = list(dict.fromkeys(v for op in region for v in op.operands if v.owner not in inside))
    outputs = [r for op in region for r in op.results if any(use.operation not in inside for use in r.uses)]
    outlined = func.FuncOp(name, ([v.type for v in inputs], [v.type for v in outputs]), visibility="private")
    outlined.attributes[EXTERNAL_TARGET_ATTR] = StringAttr(target)
    body = outlined.body.block
    mapping: dict[SSAValue, SSAValue] = dict(zip(inputs, body.args))
    for op in region:
        clone = op.clone(value_mapper=mapping)
        body.add_op(clone)
        mapping.update(zip(op.results, clone.results))
    body.add_op(func.ReturnOp(*[mapping[v] for v in outputs]))
    module.body.block.add_op(outlined)

    call = func.CallOp(name, inputs, [v.type for v in outputs])
    Rewriter.insert_op(call, InsertPoint.after(region[-1]))
    for value, result in zip(outputs, call.res):
        value.replace_all_uses_with(result)
    for op in reversed(region):
        op.detach()
        op.erase()
