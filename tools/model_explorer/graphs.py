"""An ONNX model as Model Explorer graphs: its `graph` level after the opt level's passes, its `te` level and its
`loop` level (the `program` stage: the entry calling its kernels), each op of the entry function a node.

    graphs = model_graphs("bert.onnx", opt_level=3)           # [Graph("graph"), Graph("te"), Graph("loop")]
    graphs = model_graphs("bert.onnx", profile=read_profile("bert.profile.json"))   # with measured kernel times

A node's namespace comes from the ONNX node that made its result (the importer names each result after the node's
first output, `ImportedModel` keeps no node names): the node's name when it has one (`/encoder/layer.0/attention/
MatMul` -> `encoder/layer.0/attention`), else its output name split at dots (`layer0.attn.q.mm` -> `layer0/attn/q`).
An op the passes made (a padded weight) takes the namespace of its first operand's node, a weight that of its first
user. Edges are the data flow: at
the `graph` and `te` levels from each operand's definition; at the `loop` level, where kernels write into buffers
they are given, from the kernel call that wrote a buffer (the first call it is passed to) to each later call that
reads it. Every op records its kernel: the call that writes its result (a model output: the call writing the loop
level's `out<i>` parameter), or, for an op fused into its user's kernel (its result no call writes), its first
user's kernel; profile figures sit on the op the kernel writes
(`tools/model_explorer/profile.py`).
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from pathlib import Path
from typing import TYPE_CHECKING, Any

import onnx
from model_explorer import graph_builder as gb
from xdsl.dialects import arith, func, memref
from xdsl.dialects.builtin import ArrayAttr, DictionaryAttr, MemRefType, ModuleOp, StringAttr
from xdsl.ir import Block, Operation, SSAValue

from minimlc.dialects import loop
from minimlc.frontend.onnx import import_model
from minimlc.frontend.onnx_ops import sanitise
from minimlc.lowering.abi import PROFILE_ATTR, SCHEDULE_ATTR, entry_function
from minimlc.lowering.pipeline import build_pipeline, run_passes
from minimlc.lowering.program.loop_profile_calls import BUFFER_KERNEL, CLOCK_FUNCTION

if TYPE_CHECKING:
    from minimlc.tools.model_explorer.profile import Profile

KERNEL_KEY = "in_kernel"
"""The attribute naming the kernel whose output a node's op is (`fused_into` for the ops fused before it)."""
LEVELS = {"graph": (None, "graph"), "te": ("graph", "te"), "loop": ("te", "program")}
"""Graph id -> the pipeline stages it lowers after and up to (`minimlc.lowering.pipeline.STAGES`)."""


def lower_levels(model: str | Path, opt_level: int) -> dict[str, ModuleOp]:
    """`model` at each of `LEVELS`, lowered once as a profiled build is (kernels annotated with their schedules)."""
    module = import_model(str(model)).module
    levels: dict[str, ModuleOp] = {}
    for level, (start, stop) in LEVELS.items():
        run_passes(module, build_pipeline(opt_level, profiling="monotonic", start_after=start, stop_after=stop))
        levels[level] = module.clone()
    return levels


def onnx_namespaces(model: str | Path) -> dict[str, tuple[str, str]]:
    """Per SSA name the importer gives an ONNX node's result (its sanitised first output), the node's name (or that
    output's name) and namespace."""
    found: dict[str, tuple[str, str]] = {}
    for node in onnx.load(str(model), load_external_data=False).graph.node:
        if not node.output:
            continue
        if node.name:
            name, parts = node.name, node.name.strip("/").split("/")
        else:
            name, parts = node.output[0], node.output[0].split(".")
        found[sanitise(node.output[0])] = (name, "/".join(part for part in parts[:-1] if part))
    return found


def kernel_writers(loop_module: ModuleOp) -> dict[str, str]:
    """Per buffer name at the `loop` level, the kernel that writes it: the first call it is passed to."""
    writers: dict[str, str] = {}
    for call in _kernel_calls(loop_module):
        for operand in call.arguments:
            if isinstance(operand.type, MemRefType) and operand.name_hint:
                writers.setdefault(operand.name_hint, call.callee.string_value())
    return writers


def model_graphs(model: str | Path, opt_level: int = 3, profile: Profile | None = None) -> list[gb.Graph]:
    """The `LEVELS` of `model` as graphs, at `profile`'s opt level if given (else `opt_level`), its measured
    figures on each kernel's node."""
    levels = lower_levels(model, profile.opt_level if profile else opt_level)
    namespaces = onnx_namespaces(model)
    writers = kernel_writers(levels["loop"])
    schedules = _kernel_attributes(levels["loop"])
    graphs = []
    for level, module in levels.items():
        builder = _GraphBuilder(level, namespaces, writers, schedules, profile)
        graphs.append(builder.build(entry_function(module)))
    return graphs


def _kernel_calls(module: ModuleOp) -> list[func.CallOp]:
    entry = entry_function(module)
    kernels = {op.sym_name.data for op in module.ops if isinstance(op, func.FuncOp) and op.body.blocks}
    return [
        op
        for op in entry.body.block.ops
        if isinstance(op, func.CallOp) and op.callee.string_value() in kernels - {entry.sym_name.data}
    ]


def _kernel_attributes(module: ModuleOp) -> dict[str, dict[str, str]]:
    """Per kernel: its schedule and, from the entry's profile, one call's FLOPs and bytes."""
    found: dict[str, dict[str, str]] = {}
    for op in module.ops:
        if isinstance(op, func.FuncOp) and isinstance(schedule := op.attributes.get(SCHEDULE_ATTR), StringAttr):
            found.setdefault(op.sym_name.data, {})["schedule"] = schedule.data
    described = entry_function(module).attributes.get(PROFILE_ATTR)
    for call in described.data if isinstance(described, ArrayAttr) else ():
        assert isinstance(call, DictionaryAttr)
        kernel = call.data["kernel"].data  # pyright: ignore[reportAttributeAccessIssue]
        for key in ("flops", "bytes"):
            found.setdefault(kernel, {})[key] = str(call.data[key].value.data)  # pyright: ignore
    return found


def _is_instrumentation(op: Operation) -> bool:
    """Constants, and the profiler's clock readings and their buffer: not data flow worth a node."""
    if isinstance(op, arith.ConstantOp):
        return True
    if isinstance(op, func.CallOp) and op.callee.string_value() == CLOCK_FUNCTION:
        return True
    if isinstance(op, loop.PrecomputeOp) and op.kernel.string_value() == BUFFER_KERNEL:
        return True
    return isinstance(op, memref.ViewOp) and all(_is_instrumentation(user) for user in _users(op))


def _users(op: Operation) -> list[Operation]:
    """The ops of `op`'s block that use its results, themselves or in their regions (a `te.read` in a compute)."""
    users = []
    for use in (use for result in op.results for use in result.uses):
        user: Operation | None = use.operation
        while user is not None and user.parent_block() is not op.parent_block():
            user = user.parent_op()
        if user is not None and user not in users:
            users.append(user)
    return users


def _inputs(op: Operation) -> list[SSAValue]:
    """The values `op` reads from its block: its operands, then those its regions read (a compute's `te.read`s)."""
    inputs = list(op.operands)
    for inner in op.walk():
        inputs += [value for value in inner.operands if value not in inputs and not _defined_in(value, op)]
    return inputs


def _defined_in(value: SSAValue, op: Operation) -> bool:
    owner = value.owner
    block = owner if isinstance(owner, Block) else owner.parent_block()
    while block is not None:
        if block.parent_op() is op:
            return True
        block = block.parent_op().parent_block() if block.parent_op() is not None else None  # pyright: ignore
    return False


class _GraphBuilder:
    """One level's entry function as a graph (see the module docstring)."""

    def __init__(
        self,
        level: str,
        namespaces: Mapping[str, tuple[str, str]],
        writers: Mapping[str, str],
        kernels: Mapping[str, Mapping[str, str]],
        profile: Profile | None,
    ):
        self.level, self.namespaces, self.writers, self.kernels, self.profile = (
            level,
            namespaces,
            writers,
            kernels,
            profile,
        )
        self.ids: dict[SSAValue, tuple[str, int]] = {}
        self.nodes: dict[str, gb.GraphNode] = {}

    def build(self, entry: func.FuncOp) -> gb.Graph:
        graph = gb.Graph(id=self.level)
        returned = entry.body.block.last_op
        if self.level != "loop" and isinstance(returned, func.ReturnOp):  # the loop level writes them into `out<i>`
            outputs = {value.name_hint: self.writers.get(f"out{i}") for i, value in enumerate(returned.operands)}
            self.writers = {**{name: kernel for name, kernel in outputs.items() if name and kernel}, **self.writers}
        for index, argument in enumerate(entry.args):
            node = gb.GraphNode(id=f"arg{index}", label="Input", attrs=[_kv("name", argument.name_hint or "")])
            node.outputsMetadata = [_output(0, argument)]
            self.ids[argument] = (node.id, 0)
            graph.nodes.append(node)
        ops = [op for op in entry.body.block.ops if not _is_instrumentation(op)]
        kernels = self._op_kernels(ops)
        written: dict[SSAValue, str] = {}
        op_nodes: dict[Operation, gb.GraphNode] = {}
        for index, op in enumerate(ops):
            node = gb.GraphNode(id=str(index), label=self._label(op), namespace=self._namespace(op))
            node.attrs = [_kv("op", op.name), *self._attributes(op, kernels.get(op))]
            node.outputsMetadata = [_output(number, result) for number, result in enumerate(op.results)]
            for number, operand in enumerate(_inputs(op)):
                source = written.get(operand) if self.level == "loop" else None
                source_id, output = (source, 0) if source else self.ids.get(operand, (None, 0))
                if source_id is not None:
                    node.incomingEdges.append(gb.IncomingEdge(source_id, str(output), str(number)))
                if self.level == "loop" and isinstance(op, func.CallOp) and isinstance(operand.type, MemRefType):
                    written.setdefault(operand, node.id)
            for number, result in enumerate(op.results):
                self.ids[result] = (node.id, number)
            self.nodes[node.id] = node
            graph.nodes.append(node)
            op_nodes[op] = node
        for op in reversed(ops):  # a weight without an ONNX node: in its first user's namespace
            if not op.operands and not op_nodes[op].namespace and (users := _users(op)) and users[0] in op_nodes:
                op_nodes[op].namespace = op_nodes[users[0]].namespace
        return graph

    def _op_kernels(self, ops: Sequence[Operation]) -> dict[Operation, tuple[str, bool]]:
        """Per op: its kernel and whether it is the kernel's last op (else it is fused into a later op's kernel)."""
        found: dict[Operation, tuple[str, bool]] = {}
        anchored: set[str] = set()
        for op in reversed(ops):
            if isinstance(op, func.CallOp) and op.callee.string_value() in self.kernels:
                kernel = op.callee.string_value()
            elif self.level != "loop" and op.results and op.results[0].name_hint in self.writers:
                kernel = self.writers[op.results[0].name_hint]  # pyright: ignore[reportArgumentType]
            elif self.level != "loop" and (users := [found[user] for user in _users(op) if user in found]):
                kernel = users[0][0]
            else:
                continue
            found[op] = (kernel, kernel not in anchored or self.level == "loop")
            anchored.add(kernel)
        return found

    def _label(self, op: Operation) -> str:
        if isinstance(op, func.CallOp):
            return op.callee.string_value()
        strings = [value.data for value in op.properties.values() if isinstance(value, StringAttr)]
        return f"{op.name} {strings[0]}" if op.name == "te.compute" and strings else op.name

    def _hint(self, op: Operation) -> str | None:
        """The name of the op's result; a kernel call's: that of the last buffer it is passed (its output)."""
        if isinstance(op, func.CallOp):
            buffers = [value for value in op.arguments if isinstance(value.type, MemRefType)]
            return buffers[-1].name_hint if buffers else None
        return op.results[0].name_hint if op.results else None

    def _namespace(self, op: Operation) -> str:
        if (known := self.namespaces.get(self._hint(op) or "")) is not None:
            return known[1]
        for operand in op.operands:
            if operand in self.ids and (source := self.nodes.get(self.ids[operand][0])) is not None:
                return source.namespace
        return ""

    def _attributes(self, op: Operation, kernel: tuple[str, bool] | None) -> list[gb.KeyValue]:
        attrs = []
        if (known := self.namespaces.get(self._hint(op) or "")) is not None:
            attrs.append(_kv("onnx_node", known[0]))
        named: dict[str, Any] = {**op.properties, **op.attributes}
        attrs += [_kv(name, " ".join(str(value).split())[:200]) for name, value in sorted(named.items())]
        if kernel is not None:
            name, writes = kernel
            attrs.append(_kv(KERNEL_KEY if writes else "fused_into", name))
            if writes:
                attrs += [_kv(key, value) for key, value in sorted(self.kernels.get(name, {}).items())]
                if self.profile is not None:
                    attrs += [_kv(key, value) for key, value in self.profile.figures(name).items()]
        return attrs


def _kv(key: str, value: str) -> gb.KeyValue:
    return gb.KeyValue(key=key, value=value)


def _output(number: int, value: SSAValue) -> gb.MetadataItem:
    attrs = [_kv("tensor_shape", str(value.type))]
    if value.name_hint:
        attrs.append(_kv("__tensor_tag", value.name_hint))
    return gb.MetadataItem(id=str(number), attrs=attrs)
