"""BYOC (bring your own codegen): offload the parts of a model an external target supports.

`partition_for_target(model, "c")` runs `graph-partition{target=c}` on a copy of the model's graph, hands the
outlined regions to the target's code generator, which compiles them and registers one external function per
region (`register_func`), and replaces each region's call with a `graph.call_extern` of that function. The result
is an `ImportedModel` that `InferenceSession.from_imported` compiles as usual: minimlc's code runs the rest and
calls the regions through function pointers.

    partitioned = partition_for_target("model.onnx", "c", build_dir="build")   # or an ImportedModel, a ModelProto
    session = InferenceSession.from_imported(partitioned)     # build/c_regions.{c,so,json}

Targets: `c` (C source compiled by the system C compiler, `byoc/c_source.py`) and `onnxruntime` (each region an
ONNX Runtime session, `byoc/onnxruntime_offload.py`). A region's function is named by a hash of its IR, so equal
regions share one; a saved model of a partitioned graph loads only where the same regions were registered again
(partition the model again in that process).
"""

from __future__ import annotations

import dataclasses
import hashlib
import os
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any

import onnx
from xdsl.dialects import func
from xdsl.dialects.builtin import StringAttr
from xdsl.rewriter import Rewriter

from minimlc.dialects import graph
from minimlc.frontend.onnx import ImportedModel, import_model
from minimlc.frontend.onnx_model_file import ModelSource
from minimlc.lowering.graph.graph_partition import EXTERNAL_TARGET_ATTR, PARTITION_TARGETS, GraphPartitionPass
from minimlc.lowering.pipeline import make_context
from minimlc.runtime.extern import register_func

Codegen = Callable[[Sequence[tuple[str, func.FuncOp]], Path], None]
"""Compile `(name, outlined function)` regions (build files under the folder) and register each as the external
function `name`."""


def _c_codegen(regions: Sequence[tuple[str, func.FuncOp]], build_dir: Path) -> None:
    from minimlc.byoc.c_source import compile_regions

    symbols = [(name.replace(".", "_"), function) for name, function in regions]
    pointers = compile_regions(symbols, build_dir)
    for (name, function), (symbol, _) in zip(regions, symbols):
        register_func(name, pointers[symbol], signature=_buffer_types(function))


def _onnxruntime_codegen(regions: Sequence[tuple[str, func.FuncOp]], build_dir: Path) -> None:
    from minimlc.byoc.onnxruntime_offload import region_sessions

    for name, run in region_sessions(regions).items():
        register_func(name, run, signature=_buffer_types(dict(regions)[name]))


CODEGENS: dict[str, Codegen] = {"c": _c_codegen, "onnxruntime": _onnxruntime_codegen}
"""External target -> its code generator; its supported ops are `graph_partition.PARTITION_TARGETS[target]`."""


def register_target(name: str, supports: Callable[[Any], bool], codegen: Codegen) -> None:
    """Add an external target: which graph ops it runs, and how its regions become registered functions."""
    from minimlc.lowering.graph.graph_partition import register_partition_target

    register_partition_target(name, supports)
    CODEGENS[name] = codegen


def partition_for_target(
    model: ImportedModel | ModelSource, target: str, *, build_dir: str | os.PathLike[str] | None = None
) -> ImportedModel:
    """`model` (imported, or an ONNX model: a ModelProto, a path or bytes, imported as `InferenceSession` does) with
    the regions `target` supports compiled by its code generator and called as external functions (build files in
    `build_dir`, default a new temporary folder); `model` itself is left unchanged."""
    if target not in CODEGENS or target not in PARTITION_TARGETS:
        raise ValueError(f"unknown BYOC target '{target}' (known: {', '.join(sorted(CODEGENS))})")
    if isinstance(model, onnx.ModelProto | str | os.PathLike | bytes):
        model = import_model(model)
    elif not isinstance(model, ImportedModel):
        raise TypeError(
            "partition_for_target takes an ImportedModel (import_model), an onnx.ModelProto, a path to an ONNX "
            f"file or its bytes, not a {type(model).__name__}"
        )
    module = model.module.clone()
    GraphPartitionPass(target=target).apply(make_context(), module)
    outlined = {
        op.sym_name.data: op
        for op in module.ops
        if isinstance(op, func.FuncOp) and (attr := op.attributes.get(EXTERNAL_TARGET_ATTR)) and attr.data == target
    }
    names = {symbol: f"{target}.{_structure_hash(function)}" for symbol, function in outlined.items()}
    regions = list({names[symbol]: function for symbol, function in outlined.items()}.items())
    if regions:
        folder = Path(build_dir) if build_dir is not None else Path(tempfile.mkdtemp(prefix=f"minimlc_{target}_"))
        CODEGENS[target](regions, folder)
    for call in [op for op in module.walk() if isinstance(op, func.CallOp) and op.callee.string_value() in names]:
        extern = graph.CallExternOp(names[call.callee.string_value()], list(call.arguments), call.res.types)
        Rewriter.replace_op(call, extern)
    for function in outlined.values():
        Rewriter.erase_op(function)
    return dataclasses.replace(model, module=module)


def _structure_hash(function: func.FuncOp) -> str:
    """A name for a region's code: the hash of its body and signature, printed under a fixed name."""
    copy = function.clone()
    copy.sym_name = StringAttr("region")
    return hashlib.sha256(str(copy).encode()).hexdigest()[:12]


def _buffer_types(function: func.FuncOp) -> list[tuple[tuple[int, ...], Any]]:
    from minimlc.lowering.abi import buffer_dtype

    types = [*function.function_type.inputs.data, *function.function_type.outputs.data]
    return [(graph.shape_of(t), buffer_dtype(graph.element_type(t))) for t in types]
