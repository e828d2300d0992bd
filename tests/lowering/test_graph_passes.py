"""Graph-level cleanups rely on xDSL's `cse` and `dce`, which only touch ops without side effects."""

from xdsl.traits import Pure

from minimlc.dialects.graph import Graph


def test_every_graph_op_is_pure() -> None:
    impure = [op.name for op in Graph.operations if not op.has_trait(Pure)]
    assert not impure, f"cse/dce would keep or mis-handle these ops: {impure}"
