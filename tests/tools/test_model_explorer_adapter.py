"""The Model Explorer adapter: its graphs of the example MLP and a one-layer BERT encoder hold every op of each level
as a node, with the namespaces of the ONNX node names and edges along the data flow; a profile's kernel times land
on the nodes of the ops each kernel computes; Model Explorer's server converts a model with it and headless
Chromium draws the graph."""

from __future__ import annotations

import contextlib
import json
import socket
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path
from urllib.parse import quote
from urllib.request import urlopen

import onnx
import pytest
from chromium_screenshot import chromium, screenshot_when_shown
from cli_run import ROOT, SCRIPTS, assert_one_line_error, minimlc

pytest.importorskip("model_explorer", reason="the explorer extra (ai-edge-model-explorer) is not installed")

from xdsl.dialects import arith

from minimlc import InferenceSession
from minimlc.lowering.abi import entry_function
from minimlc.lowering.pipeline import build_pipeline, run_passes
from minimlc.tools.model_explorer.graphs import KERNEL_KEY, model_graphs
from minimlc.tools.model_explorer.profile import node_data, read_profile

sys.path.insert(0, str(ROOT / "examples"))
from transformer_models import Dims, bert

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


def attr(node, key: str) -> str | None:
    return next((a.value for a in node.attrs if a.key == key), None)


@pytest.fixture(scope="module")
def bert_path(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """One BERT layer whose nodes are named as PyTorch's exporter names them (`/encoder/layer.0/attention/MatMul`)."""
    model = bert(Dims(tokens=8, hidden=32, heads=2, ffn=64), layers=1, vocab=50)
    for index, node in enumerate(model.graph.node):
        block = "encoder/layer.0/attention" if node.output[0].startswith("layer0.attn") else "embeddings"
        node.name = f"/{block}/{node.op_type}_{index}" if node.output[0].startswith(("layer0.attn", "emb")) else ""
    path = tmp_path_factory.mktemp("models") / "bert.onnx"
    onnx.save(model, path)
    return path


@pytest.fixture(scope="module")
def bert_graphs(bert_path: Path):
    return {graph.id: graph for graph in model_graphs(bert_path)}


def lowered_entry_ops(model: Path, stop_after: str) -> list:
    """The entry's ops of `model` lowered at O3 to `stop_after`, constants left out: lowered here, apart."""
    from minimlc.frontend.onnx import import_model

    module = import_model(str(model)).module
    run_passes(module, build_pipeline(3, profiling="monotonic", stop_after=stop_after))
    return [op for op in entry_function(module).body.block.ops if not isinstance(op, arith.ConstantOp)]


def test_mlp_graph_level_is_every_op_with_its_operands_as_edges(mlp_path: Path) -> None:
    graph, te, loop = model_graphs(mlp_path)
    assert [graph.id, te.id, loop.id] == ["graph", "te", "loop"]
    labels = [node.label for node in graph.nodes]
    assert labels == ["Input", *[op.name for op in lowered_entry_ops(mlp_path, "graph")]]
    assert labels[1:] == [
        *["graph.weight"] * 2, "graph.gemm", "graph.relu", *["graph.weight"] * 2, *["graph.pad"] * 2, "graph.gemm",
        "graph.slice", "func.return",
    ]  # fmt: skip
    by_label = lambda label, n=0: [node for node in graph.nodes if node.label == label][n]  # noqa: E731
    sources = lambda node: [edge.sourceNodeId for edge in node.incomingEdges]  # noqa: E731
    assert sources(by_label("graph.gemm")) == ["arg0", by_label("graph.weight").id, by_label("graph.weight", 1).id]
    assert sources(by_label("graph.relu")) == [by_label("graph.gemm").id]
    second = by_label("graph.gemm", 1)
    assert sources(second) == [by_label("graph.relu").id, by_label("graph.pad").id, by_label("graph.pad", 1).id]
    assert sources(by_label("func.return")) == [by_label("graph.slice").id]
    assert attr(by_label("graph.relu"), "onnx_node") == "relu0"
    assert attr(by_label("graph.slice"), "onnx_node") == "fc1"  # the Gemm whose output `logits` the slice makes


def test_kernels_are_the_ones_a_profiled_session_calls(mlp_path: Path) -> None:
    """Each level's ops name their kernels; the loop level is the calls, in order, that the profiler times."""
    calls = [call.kernel for call in InferenceSession(str(mlp_path), enable_profiling=True).profiler.calls]
    graph, te, loop = model_graphs(mlp_path)
    assert [node.label for node in loop.nodes if attr(node, KERNEL_KEY)] == calls
    for level in (graph, te):
        written = [attr(node, KERNEL_KEY) for node in level.nodes if attr(node, KERNEL_KEY)]
        assert sorted(written) == sorted(calls)  # each kernel's output is one op's result
        fused = {attr(node, "fused_into") for node in level.nodes} - {None}
        assert fused <= set(calls)
    gemm = next(node for node in graph.nodes if node.label == "graph.gemm")
    relu = next(node for node in graph.nodes if node.label == "graph.relu")
    assert attr(gemm, "fused_into") == attr(relu, KERNEL_KEY)


def test_bert_levels_hold_every_op(bert_path: Path, bert_graphs) -> None:
    for level, stage in (("graph", "graph"), ("te", "te")):
        ops = lowered_entry_ops(bert_path, stage)
        assert [attr(node, "op") for node in bert_graphs[level].nodes if node.label != "Input"] == [
            op.name for op in ops
        ]
    calls = [call.kernel for call in InferenceSession(str(bert_path), enable_profiling=True).profiler.calls]
    assert [node.label for node in bert_graphs["loop"].nodes if attr(node, KERNEL_KEY)] == calls


def test_bert_namespaces_come_from_the_onnx_node_names(bert_graphs) -> None:
    """`/encoder/layer.0/attention/MatMul_4` is in `encoder/layer.0/attention`; an unnamed node's output name
    `layer0.ffn.linear1.mm` puts it in `layer0/ffn/linear1`; a weight sits with its user."""
    named = {node.id: attr(node, "onnx_node") for node in bert_graphs["graph"].nodes if attr(node, "onnx_node")}
    assert len(named) > 20
    for node in bert_graphs["graph"].nodes:
        name = named.get(node.id)
        if name is not None and name.startswith("/"):
            assert node.namespace == name.rsplit("/", 1)[0].lstrip("/")
    namespaces = {node.namespace for node in bert_graphs["graph"].nodes}
    assert {"embeddings", "encoder/layer.0/attention", "layer0/ffn/linear1", "layer0/ffn/gelu"} <= namespaces
    by_id = {node.id: node for node in bert_graphs["graph"].nodes}
    linear1 = [by_id[node_id] for node_id, name in named.items() if name == "layer0.ffn.linear1.mm"]
    assert [node.namespace for node in linear1] == ["layer0/ffn/linear1"]
    (weight,) = [
        by_id[edge.sourceNodeId]
        for edge in linear1[0].incomingEdges
        if by_id[edge.sourceNodeId].label == "graph.weight"
    ]
    assert weight.namespace == "layer0/ffn/linear1"


def test_bert_edges_follow_each_operand(bert_path: Path, bert_graphs) -> None:
    """At the graph level an op's incoming edges are its operands' definitions, in operand order."""
    ops = lowered_entry_ops(bert_path, "graph")
    node_of = {op: node for op, node in zip(ops, [n for n in bert_graphs["graph"].nodes if n.label != "Input"])}
    for op, node in node_of.items():
        expected = [
            node_of[value.owner].id if value.owner in node_of else f"arg{value.index}"  # type: ignore[union-attr]
            for value in op.operands
            if not isinstance(value.owner, arith.ConstantOp)
        ]
        assert [edge.sourceNodeId for edge in node.incomingEdges] == expected


def test_profile_overlays_are_the_measured_figures(mlp_path: Path, tmp_path: Path) -> None:
    summary = tmp_path / "mlp.profile.json"
    options = ["--repeat", "3", "--threads", "1", "--peak-gflops", "50"]
    result = minimlc("run", str(mlp_path), "--profile", "--profile-summary", str(summary), *options)
    assert result.returncode == 0, result.stderr
    rows = {row["kernel"]: row for row in json.loads(summary.read_text())["kernels"]}
    profile = read_profile(summary)
    graphs = model_graphs(mlp_path, profile=profile)
    overlays = node_data(graphs, profile)
    for graph in graphs:
        times = overlays["time_ms"].graphsData[graph.id].results
        peaks = overlays["peak_percent"].graphsData[graph.id].results
        anchors = {node.id: attr(node, KERNEL_KEY) for node in graph.nodes if attr(node, KERNEL_KEY)}
        assert set(times) == set(anchors)
        assert sorted(anchors.values()) == sorted(rows)
        for node_id, kernel in anchors.items():
            assert times[node_id].value == pytest.approx(rows[kernel]["total_ms"] / rows[kernel]["calls"])
            assert peaks[node_id].value == pytest.approx(rows[kernel]["peak_percent"])
            node = next(node for node in graph.nodes if node.id == node_id)
            assert attr(node, "schedule") == rows[kernel]["schedule"]


def test_a_bad_profile_is_a_one_line_error(mlp_path: Path, tmp_path: Path) -> None:
    module = [sys.executable, "-m", "minimlc.tools.model_explorer", str(mlp_path)]
    bad = tmp_path / "trace.json"
    bad.write_text("[]")
    result = subprocess.run([*module, str(bad)], capture_output=True, text=True, check=False)
    assert result.returncode == 1
    assert "Traceback" not in result.stderr
    assert result.stderr.strip().splitlines() == [f"error: {bad} is not a profile summary (minimlc run --profile "
                                                  "--profile-summary FILE.json)"]  # fmt: skip


def test_profile_summary_needs_profile(mlp_path: Path) -> None:
    result = minimlc("run", str(mlp_path), "--profile-summary", "profile.json")
    assert_one_line_error(result, "--profile-summary writes the kernel profile: use it with --profile")


def _free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


@contextlib.contextmanager
def explorer_server() -> Iterator[str]:
    """Model Explorer's server on loopback with the adapter loaded; its URL."""
    port = _free_port()
    command = [str(SCRIPTS / "model-explorer"), "--extensions=minimlc.tools.model_explorer", "--no_open_in_browser"]
    server = subprocess.Popen(
        [*command, "--host=127.0.0.1", f"--port={port}"], stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True
    )
    try:
        lines = []
        for line in server.stdout:  # type: ignore[union-attr]
            lines.append(line)
            if line.startswith("Starting Model Explorer server"):
                break
        assert any(" - minimlc" in line for line in lines), "".join(lines)
        yield f"http://127.0.0.1:{port}"
    finally:
        server.terminate()
        server.wait(10)
        server.stdout.close()  # type: ignore[union-attr]


def converted(server: str, model: Path) -> list[dict]:
    """The graphs the server's adapter makes of `model`, fetched as the web app fetches them."""
    command = {"extensionId": "minimlc", "cmdId": "convert", "modelPath": str(model), "settings": {}}
    command["deleteAfterConversion"] = False
    with urlopen(f"{server}/api/v1/send_command?json={quote(json.dumps(command))}", timeout=300) as reply:
        return json.load(reply)["graphs"]


def test_model_explorer_serves_the_graphs_and_chromium_draws_one(bert_path: Path, bert_graphs) -> None:
    with explorer_server() as server:
        served = converted(server, bert_path)
        assert [graph["id"] for graph in served] == list(bert_graphs)
        for graph in served:
            assert [node["id"] for node in graph["nodes"]] == [node.id for node in bert_graphs[graph["id"]].nodes]
        if chromium() is None:
            pytest.skip("Chromium is not installed (apt-get install chromium)")
        pane = {"deepestExpandedGroupNodeIds": [], "selectedNodeId": "", "selectedGraphId": "graph", "widthFraction": 1}
        data = {"models": [{"url": str(bert_path), "adapterId": "minimlc"}], "uiState": {"paneStates": [pane]}}
        page = f"{server}/?data={quote(json.dumps(data))}"
        png = screenshot_when_shown(page, ["bert.onnx", "nodes"], absent=["Converting", "Processing graph"])
    assert png.startswith(PNG_SIGNATURE)
    assert len(png) > 20_000


@pytest.mark.slow
def test_model_explorer_serves_light_resnet50() -> None:
    """onnx's light ResNet-50 through the server: every op of its graph level a node, the loop level the calls a
    profiled session makes."""
    from minimlc.tools.conformance import light_model_paths

    (model,) = [path for path in light_model_paths() if path.stem == "light_resnet50"]
    with explorer_server() as server:
        served = {graph["id"]: graph for graph in converted(server, model)}
    ops = lowered_entry_ops(model, "graph")
    assert [node["attrs"][0]["value"] for node in served["graph"]["nodes"][1:]] == [op.name for op in ops]
    calls = [call.kernel for call in InferenceSession(str(model), enable_profiling=True).profiler.calls]
    kernels = [node["label"] for node in served["loop"]["nodes"] if any(a["key"] == KERNEL_KEY for a in node["attrs"])]
    assert kernels == calls
