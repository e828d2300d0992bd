"""BYOC: `partition_for_target` offloads what a target supports (graph-partition), its code generator compiles the
regions (C source built by the system C compiler, or ONNX Runtime sessions) and the model calls them as external
functions; results match ONNX Runtime on the whole model."""

from __future__ import annotations

import json
import os
from pathlib import Path

import numpy as np
import onnx
import onnxruntime
import pytest
from onnx import TensorProto, helper, numpy_helper

from minimlc import InferenceSession
from minimlc.byoc.partition import partition_for_target
from minimlc.dialects import graph
from minimlc.driver.shared_library import CompilerNotFoundError
from minimlc.frontend.onnx import import_model
from minimlc.runtime import load
from minimlc.runtime.extern import ExternalFunctionError, remove_func


def make_model(nodes, inputs, outputs, weights) -> onnx.ModelProto:
    graph_proto = helper.make_graph(
        nodes,
        "byoc",
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in inputs],
        [helper.make_tensor_value_info(name, TensorProto.FLOAT, shape) for name, shape in outputs],
        [numpy_helper.from_array(array, name) for name, array in weights.items()],
    )
    return helper.make_model(graph_proto, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def conv_add_relu(rng: np.random.Generator) -> onnx.ModelProto:
    weights = {
        "W": rng.standard_normal((8, 3, 3, 3)).astype(np.float32),
        "B": rng.standard_normal(8).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "W", "B"], ["c"], pads=[1, 1, 1, 1]),
        helper.make_node("Add", ["c", "y"], ["s"]),
        helper.make_node("Relu", ["s"], ["r"]),
    ]
    return make_model(nodes, [("x", [1, 3, 16, 16]), ("y", [1, 8, 16, 16])], [("r", [1, 8, 16, 16])], weights)


def mixed(rng: np.random.Generator) -> onnx.ModelProto:
    """Grouped strided dilated conv, broadcast add, an unsupported sigmoid, flatten, Gemm (transB), MatMul."""
    weights = {
        "W": rng.standard_normal((6, 2, 3, 3)).astype(np.float32),
        "bias": rng.standard_normal((6, 1, 1)).astype(np.float32),
        "G": rng.standard_normal((5, 6 * 4 * 4)).astype(np.float32),
        "C": rng.standard_normal(5).astype(np.float32),
        "M": rng.standard_normal((5, 4)).astype(np.float32),
    }
    nodes = [
        helper.make_node("Conv", ["x", "W"], ["c"], pads=[1, 0, 1, 2], strides=[2, 2], dilations=[1, 2], group=2),
        helper.make_node("Add", ["c", "bias"], ["a"]),
        helper.make_node("Sigmoid", ["a"], ["s"]),
        helper.make_node("Flatten", ["s"], ["f"]),
        helper.make_node("Gemm", ["f", "G", "C"], ["g"], transB=1, alpha=0.5, beta=2.0),
        helper.make_node("Relu", ["g"], ["r"]),
        helper.make_node("MatMul", ["r", "M"], ["out"]),
    ]
    return make_model(nodes, [("x", [2, 4, 7, 9])], [("out", [2, 4])], weights)


def feeds_for(model: onnx.ModelProto, rng: np.random.Generator) -> dict[str, np.ndarray]:
    shapes = {i.name: [d.dim_value for d in i.type.tensor_type.shape.dim] for i in model.graph.input}
    return {name: rng.standard_normal(shape).astype(np.float32) for name, shape in shapes.items()}


def onnxruntime_outputs(model: onnx.ModelProto, feeds: dict[str, np.ndarray]) -> list[np.ndarray]:
    return onnxruntime.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"]).run(None, feeds)


def extern_calls(module) -> list[str]:
    return [op.callee.data for op in module.walk() if isinstance(op, graph.CallExternOp)]


@pytest.mark.parametrize("opt_level", [0, 3])
def test_conv_add_relu_offloaded_to_c_matches_onnxruntime(tmp_path: Path, opt_level: int) -> None:
    rng = np.random.default_rng(0)
    model = conv_add_relu(rng)
    partitioned = partition_for_target(import_model(model), "c", build_dir=tmp_path)
    (callee,) = extern_calls(partitioned.module)
    assert callee.startswith("c.")
    assert not [op for op in partitioned.module.walk() if isinstance(op, graph.ConvOp | graph.AddOp | graph.ReluOp)]
    description = json.loads((tmp_path / "c_regions.json").read_text())
    (region,) = description["regions"]
    assert [node["op"] for node in region["nodes"]] == ["graph.conv", "graph.add", "graph.relu"]
    assert [entry["shape"] for entry in region["inputs"]] == [[1, 3, 16, 16], [8, 3, 3, 3], [8], [1, 8, 16, 16]]
    assert (tmp_path / "c_regions.so").exists() and "int32_t c_" in (tmp_path / "c_regions.c").read_text()
    feeds = feeds_for(model, rng)
    (result,) = InferenceSession.from_imported(partitioned, opt_level=opt_level).run(None, feeds)
    np.testing.assert_allclose(result, onnxruntime_outputs(model, feeds)[0], rtol=1e-4, atol=1e-5)


@pytest.mark.parametrize("target", ["c", "onnxruntime"])
def test_regions_around_an_unsupported_op_match_onnxruntime(tmp_path: Path, target: str) -> None:
    rng = np.random.default_rng(1)
    model = mixed(rng)
    partitioned = partition_for_target(import_model(model), target, build_dir=tmp_path)
    calls = extern_calls(partitioned.module)
    # c: conv+add, then (sigmoid, flatten) gemm+relu+matmul; onnxruntime: conv+add+sigmoid, (flatten), the rest
    assert len(calls) == 2
    feeds = feeds_for(model, rng)
    (result,) = InferenceSession.from_imported(partitioned).run(None, feeds)
    np.testing.assert_allclose(result, onnxruntime_outputs(model, feeds)[0], rtol=1e-4, atol=1e-4)


@pytest.mark.parametrize("source", ["proto", "path"])
def test_an_onnx_model_or_its_path_is_imported_first(tmp_path: Path, source: str) -> None:
    rng = np.random.default_rng(4)
    model = conv_add_relu(rng)
    onnx.save(model, tmp_path / "model.onnx")
    given = model if source == "proto" else tmp_path / "model.onnx"
    partitioned = partition_for_target(given, "c", build_dir=tmp_path / "build")
    assert len(extern_calls(partitioned.module)) == 1
    feeds = feeds_for(model, rng)
    (result,) = InferenceSession.from_imported(partitioned).run(None, feeds)
    np.testing.assert_allclose(result, onnxruntime_outputs(model, feeds)[0], rtol=1e-4, atol=1e-5)


def test_anything_else_is_refused_saying_what_it_takes() -> None:
    with pytest.raises(TypeError, match=r"takes an ImportedModel .* onnx\.ModelProto, a path .* not a GraphProto"):
        partition_for_target(conv_add_relu(np.random.default_rng(0)).graph, "c")


def test_missing_c_compiler_names_target_and_compiler(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("PATH", str(tmp_path))  # no cc there
    monkeypatch.delenv("CC", raising=False)
    with pytest.raises(CompilerNotFoundError, match=r"BYOC target 'c' .* 'cc' \(the default; set CC"):
        partition_for_target(import_model(conv_add_relu(np.random.default_rng(0))), "c", build_dir=tmp_path)
    monkeypatch.setenv("CC", "clang-from-nowhere")
    with pytest.raises(CompilerNotFoundError, match=r"'clang-from-nowhere' \(\$CC\)"):
        partition_for_target(import_model(conv_add_relu(np.random.default_rng(0))), "c", build_dir=tmp_path)


def test_saved_partitioned_model_needs_its_regions_registered(tmp_path: Path) -> None:
    rng = np.random.default_rng(2)
    model = conv_add_relu(rng)
    partitioned = partition_for_target(import_model(model), "c", build_dir=tmp_path / "build")
    (callee,) = extern_calls(partitioned.module)
    InferenceSession.from_imported(partitioned).save(tmp_path / "model.mlc")
    feeds = feeds_for(model, rng)
    (result,) = load(tmp_path / "model.mlc").run(None, feeds)  # registered in this process: bound again by name
    np.testing.assert_allclose(result, onnxruntime_outputs(model, feeds)[0], rtol=1e-4, atol=1e-5)
    remove_func(callee)
    with pytest.raises(ExternalFunctionError, match=f"no external function registered as '{callee}'"):
        load(tmp_path / "model.mlc")


def test_unknown_target_is_refused() -> None:
    with pytest.raises(ValueError, match="unknown BYOC target 'tpu'"):
        partition_for_target(import_model(conv_add_relu(np.random.default_rng(0))), "tpu")
    assert os.environ.get("MINIMLC_CACHE") == "0"


def test_interleaved_regions_run_in_a_valid_order(tmp_path: Path) -> None:
    """The graph of graph-partition.mlir's @interleaved: two C regions with a sigmoid of minimlc's between them."""
    from minimlc import GraphBuilder

    bb = GraphBuilder()
    x, y, z = (bb.input(name, (4, 4)) for name in "xyz")
    a = bb.emit("matmul", x, x)
    p = bb.emit("add", a, bb.emit("sigmoid", a))
    q = bb.emit("relu", y)
    bb.output(bb.emit("add", p, q), "w")
    bb.output(bb.emit("relu", q), "l")
    bb.output(bb.emit("add", a, z), "b")
    partitioned = partition_for_target(bb.finish(), "c", build_dir=tmp_path)
    assert len(extern_calls(partitioned.module)) == 2
    rng = np.random.default_rng(3)
    feeds = {name: rng.standard_normal((4, 4)).astype(np.float32) for name in "xyz"}
    w, l, b = InferenceSession.from_imported(partitioned).run(None, feeds)
    a_ = feeds["x"] @ feeds["x"]
    q_ = np.maximum(feeds["y"], 0)
    np.testing.assert_allclose(w, a_ + 1 / (1 + np.exp(-a_)) + q_, rtol=1e-5, atol=1e-5)
    np.testing.assert_allclose(l, q_, rtol=1e-6)
    np.testing.assert_allclose(b, a_ + feeds["z"], rtol=1e-5, atol=1e-5)
