"""minimlc_toy: an example minimlc plugin, installed with `pip install ./examples/plugin`.

The `toy` dialect (`toy.gelu`, `toy.matmul_relu`), `toy-to-graph` (its lowering into graph ops), two graph-level
rewrites (`toy-fuse-matmul-relu`, `toy-relu-to-clip`) and the pipeline `toy-lower-to-llvm`. `plugin()` is the entry
point minimlc finds in the `minimlc.plugins` group (see `pyproject.toml`); every loader is lazy, so listing the
plugin imports nothing but this file.
"""

from __future__ import annotations

from xdsl.ir import Dialect
from xdsl.passes import ModulePass

from minimlc.lowering.plugins import Plugin


def _toy() -> Dialect:
    from minimlc_toy.dialect import Toy

    return Toy


def _toy_to_graph() -> type[ModulePass]:
    from minimlc_toy.toy_to_graph import ToyToGraphPass

    return ToyToGraphPass


def _toy_fuse_matmul_relu() -> type[ModulePass]:
    from minimlc_toy.toy_fuse_matmul_relu import ToyFuseMatmulReluPass

    return ToyFuseMatmulReluPass


def _toy_relu_to_clip() -> type[ModulePass]:
    from minimlc_toy.toy_relu_to_clip import ToyReluToClipPass

    return ToyReluToClipPass


def plugin() -> Plugin:
    """The toy plugin's dialects, passes and pipelines."""
    return Plugin(
        dialects={"toy": _toy},
        passes={
            "toy-to-graph": _toy_to_graph,
            "toy-fuse-matmul-relu": _toy_fuse_matmul_relu,
            "toy-relu-to-clip": _toy_relu_to_clip,
        },
        pipelines={"toy-lower-to-llvm": ("toy and graph -> llvm dialect at O3", "toy-to-graph,lower-to-llvm")},
    )
