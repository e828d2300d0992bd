"""Graphviz DOT of an xDSL module at any level, as MLIR's `--view-op-graph` draws one.

One node per op (its name; with `print_attrs` its attributes and properties, with `print_result_types` its result
types), one node per block argument, a data-flow edge from each value's definition to each of its uses, and each op
with regions drawn as a `subgraph cluster_*` around its own node and the ops of its blocks (a block a cluster of its
own where the op has several), labelled with the op's symbol or first string property. So a function, a `te.compute`
body or a loop body is a cluster, and in the scheduled levels each kernel function clusters its fused ops. Ids number
ops, block arguments and clusters in walk order, so the same module always gives the same text:

    func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {
      %y = graph.relu %x : tensor<2x3xf32>
      func.return %y : tensor<2x3xf32>
    }

    digraph minimlc {
      subgraph cluster_0 {
        label = "builtin.module";
        op0 [label = "builtin.module", shape = box];
        subgraph cluster_1 {
          label = "func.func @main";
          op1 [label = "func.func", shape = box];
          arg0 [label = "%x", shape = plain];
          op2 [label = "graph.relu", shape = ellipse];
          op3 [label = "func.return", shape = ellipse];
        }
      }
      arg0 -> op2;
      op2 -> op3;
    }

Attribute values, result types and block argument types are cut at `max_label_len` characters, the cut ones ending
in `...`.
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects.builtin import StringAttr
from xdsl.ir import Attribute, Block, BlockArgument, Operation, OpResult, SSAValue

ELLIPSIS = "..."


@dataclass(frozen=True)
class DotOptions:
    """MLIR's `--view-op-graph` options: `max-label-len`, `print-attrs`, `print-result-types`."""

    max_label_len: int = 20
    print_attrs: bool = False
    print_result_types: bool = False


def escape(text: str) -> str:
    """`text` as the inside of a DOT string: backslashes and quotes escaped, newlines as DOT's `\\n`."""
    return text.replace("\\", "\\\\").replace('"', '\\"').replace("\n", "\\n")


def truncate(text: str, limit: int) -> str:
    """`text` cut to `limit` characters, the last three `...` where it was longer."""
    if len(text) <= limit:
        return text
    return text[: max(limit - len(ELLIPSIS), 0)] + ELLIPSIS


class _DotWriter:
    def __init__(self, options: DotOptions):
        self.options = options
        self.lines: list[str] = []
        self.uses: list[tuple[SSAValue, Operation]] = []
        self.ids: dict[Operation | BlockArgument, str] = {}
        self.counts = {"op": 0, "arg": 0, "cluster": 0}

    def edges(self) -> list[str]:
        """An edge per use, from the node of the value's op or block argument (drawn after all nodes: a graph
        region may use a value before its definition)."""
        edges = []
        for value, user in self.uses:
            source = self.ids.get(value.op if isinstance(value, OpResult) else value)
            if source is not None:  # else defined outside the op drawn
                edges.append(f"  {source} -> {self.ids[user]};")
        return edges

    def op_label(self, op: Operation) -> str:
        lines = [op.name]
        if self.options.print_attrs:
            named: dict[str, Attribute] = {**op.properties, **op.attributes}
            lines += [f"{name}: {self.cut(str(value))}" for name, value in sorted(named.items())]
        if self.options.print_result_types and op.results:
            lines.append(": " + self.cut(", ".join(str(result.type) for result in op.results)))
        return "\n".join(lines)

    def cut(self, text: str) -> str:
        """`text` on one line, cut at `max_label_len`."""
        return truncate(" ".join(text.split()), self.options.max_label_len)

    def emit_node(self, key: Operation | BlockArgument, prefix: str, label: str, shape: str, depth: int) -> None:
        node = f"{prefix}{self.counts[prefix]}"
        self.counts[prefix] += 1
        self.ids[key] = node
        self.lines.append(f'{"  " * depth}{node} [label = "{escape(label)}", shape = {shape}];')

    def emit_block(self, block: Block, depth: int) -> None:
        for argument in block.args:
            label = f"%{argument.name_hint or f'arg{argument.index}'}"
            if self.options.print_result_types:
                label += "\n" + self.cut(str(argument.type))
            self.emit_node(argument, "arg", label, "plain", depth)
        for op in block.ops:
            self.emit_op(op, depth)

    def emit_op(self, op: Operation, depth: int) -> None:
        indent = "  " * depth
        if not op.regions:
            self.emit_node(op, "op", self.op_label(op), "ellipse", depth)
        else:
            self.open_cluster(self.cluster_label(op), depth)
            self.emit_node(op, "op", self.op_label(op), "box", depth + 1)
            blocks = [block for region in op.regions for block in region.blocks]
            for index, block in enumerate(blocks):
                if len(blocks) > 1:
                    self.open_cluster(f"^bb{index}", depth + 1)
                    self.emit_block(block, depth + 2)
                    self.lines.append(f"{indent}  }}")
                else:
                    self.emit_block(block, depth + 1)
            self.lines.append(f"{indent}}}")
        self.uses += [(operand, op) for operand in op.operands]

    def open_cluster(self, label: str, depth: int) -> None:
        indent = "  " * depth
        self.lines.append(f"{indent}subgraph cluster_{self.counts['cluster']} {{")
        self.lines.append(f'{indent}  label = "{escape(label)}";')
        self.counts["cluster"] += 1

    @staticmethod
    def cluster_label(op: Operation) -> str:
        """The op's name and its symbol (`func.func @main`), else its first string property (`te.compute "relu"`,
        `loop.for "i0"`)."""
        symbol = op.properties.get("sym_name") or op.attributes.get("sym_name")
        if isinstance(symbol, StringAttr):
            return f"{op.name} @{symbol.data}"
        strings = [value.data for value in op.properties.values() if isinstance(value, StringAttr)]
        return f'{op.name} "{strings[0]}"' if strings else op.name


def op_graph_dot(op: Operation, options: DotOptions | None = None) -> str:
    """The DOT text of `op` and everything nested in it (see the module docstring)."""
    writer = _DotWriter(options or DotOptions())
    writer.emit_op(op, 1)
    return "\n".join(["digraph minimlc {", *writer.lines, *writer.edges(), "}"]) + "\n"
