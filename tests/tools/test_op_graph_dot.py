"""`op_graph_dot`: Graphviz DOT of a module at every level, rendered by `dot -Tsvg`; `mini-opt --view-op-graph` and
`minimlc compile --dot` on the command line.

Each model is lowered once, stage by stage (graph, te, loop at O3); at each level the DOT has a node per op and per
block argument, an edge per operand, a cluster per function, and Graphviz draws it. Light SqueezeNet (convolutions),
a one-layer BERT encoder and the example MLP: about 6 s in all, most of it Graphviz laying out the te and loop
levels. The nine light CNNs and the benchmark's transformers are parsed by Graphviz at the graph level (~10 s).
"""

from __future__ import annotations

import re
import shutil
import subprocess
from pathlib import Path

import pytest
from cli_run import SCRIPTS, assert_one_line_error, minimlc
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.parser import Parser

from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import make_context, run_pipeline
from minimlc.tools.conformance import LIGHT_MODELS_DIR
from minimlc.tools.op_graph_dot import DotOptions, escape, op_graph_dot, truncate

LEVELS = ("graph", "te", "loop")

needs_graphviz = pytest.mark.skipif(shutil.which("dot") is None, reason="Graphviz's `dot` is not installed")


def _squeezenet() -> ModuleOp:
    return import_model(LIGHT_MODELS_DIR / "light_squeezenet.onnx").module


def _bert() -> ModuleOp:
    import transformer_models
    from transformer_models import Dims

    dims = Dims(tokens=8, hidden=32, heads=2, ffn=64)
    return import_model(transformer_models.bert(dims, layers=1, vocab=50)).module


def _mlp(mlp_path: Path) -> ModuleOp:
    return import_model(mlp_path).module


@pytest.fixture(scope="module", params=["squeezenet", "bert", "mlp"])
def levels(request: pytest.FixtureRequest, mlp_path: Path) -> dict[str, ModuleOp]:
    """The model at each of `LEVELS`: one lowering, a copy kept after each stage."""
    module = _mlp(mlp_path) if request.param == "mlp" else {"squeezenet": _squeezenet, "bert": _bert}[request.param]()
    copies, previous = {}, None
    for level in LEVELS:
        run_pipeline(module, 3, start_after=previous, stop_after=level)
        copies[level], previous = module.clone(), level
    return copies


def _ids(dot: str, prefix: str) -> list[str]:
    return re.findall(rf"^\s*({prefix}\d+) \[label = ", dot, re.MULTILINE)


@needs_graphviz
@pytest.mark.parametrize("level", LEVELS)
def test_every_op_a_node_every_use_an_edge_and_graphviz_draws_it(levels: dict[str, ModuleOp], level: str) -> None:
    module = levels[level]
    ops = list(module.walk())
    dot = op_graph_dot(module)
    assert len(_ids(dot, "op")) == len(set(_ids(dot, "op"))) == len(ops)
    arguments = [arg for op in ops for region in op.regions for block in region.blocks for arg in block.args]
    assert len(_ids(dot, "arg")) == len(arguments)
    assert len(re.findall(r"^  \w+ -> \w+;$", dot, re.MULTILINE)) == sum(len(op.operands) for op in ops)
    for function in (op for op in ops if isinstance(op, func.FuncOp) and op.body.blocks):
        assert f'label = "func.func @{function.sym_name.data}";' in dot  # a kernel is a cluster of its ops
    drawn = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=False)
    assert drawn.returncode == 0, drawn.stderr
    assert "<svg" in drawn.stdout
    assert drawn.stderr == ""


def _cluster(dot: str, label: str) -> list[str]:
    """The lines of the cluster labelled `label`, to its closing brace."""
    lines = dot.splitlines()
    start = lines.index(next(line for line in lines if line.strip() == f'label = "{label}";')) - 1
    indent = lines[start][: len(lines[start]) - len(lines[start].lstrip())]
    end = lines.index(f"{indent}}}", start)
    return lines[start : end + 1]


def test_a_kernel_is_a_cluster_of_its_fused_ops(mlp_path: Path) -> None:
    module = _mlp(mlp_path)
    run_pipeline(module, 3, stop_after="program")  # the MLP's first Gemm and its Relu fused into one kernel
    kernel = "\n".join(_cluster(op_graph_dot(module), "func.func @fused_gemm_relu_0_i1_o_body"))  # its parallel loop
    assert '[label = "arith.mulf", shape = ellipse];' in kernel
    assert '[label = "arith.maximumf", shape = ellipse];' in kernel
    assert 'label = "loop.for \\"' in kernel  # its loops, clusters of their bodies


def test_the_same_module_gives_the_same_text(mlp_path: Path) -> None:
    assert op_graph_dot(_mlp(mlp_path)) == op_graph_dot(_mlp(mlp_path))


@needs_graphviz
def test_labels_with_quotes_and_backslashes_are_escaped() -> None:
    text = 'func.func @f() attributes {note = "a \\"quoted\\" \\\\ path"} {\n  func.return\n}'
    module = Parser(make_context(), text).parse_module()
    dot = op_graph_dot(module, DotOptions(max_label_len=60, print_attrs=True))
    assert r"note: \"a \\22quoted\\22 \\\\ path\"" in dot  # xDSL prints a quote as \22
    drawn = subprocess.run(["dot", "-Tsvg"], input=dot, capture_output=True, text=True, check=False)
    assert drawn.returncode == 0, drawn.stderr
    assert drawn.stderr == ""


def test_escape_and_truncate() -> None:
    assert escape('a"b\\c\nd') == 'a\\"b\\\\c\\nd'
    assert truncate("tensor<2x3xf32>", 15) == "tensor<2x3xf32>"
    assert truncate("tensor<2x3xf32>", 10) == "tensor<..."


def test_mini_opt_view_op_graph_to_stdout_and_to_a_file(tmp_path: Path) -> None:
    source = tmp_path / "relu.mlir"
    source.write_text(
        "func.func @main(%x: tensor<2x3xf32>) -> tensor<2x3xf32> {\n"
        "  %y = graph.relu %x : tensor<2x3xf32>\n  func.return %y : tensor<2x3xf32>\n}\n"
    )
    mini_opt = str(SCRIPTS / "mini-opt")
    run = subprocess.run([mini_opt, "--view-op-graph", str(source)], capture_output=True, text=True, check=False)
    assert run.returncode == 0
    assert run.stderr == ""
    assert run.stdout.startswith("digraph minimlc {")
    assert "arg0 -> op2;" in run.stdout
    dot = tmp_path / "relu.dot"
    run = subprocess.run([mini_opt, str(source), f"--view-op-graph={dot}"], capture_output=True, text=True, check=False)
    assert run.returncode == 0
    assert run.stdout.startswith("builtin.module {")
    assert dot.read_text().startswith("digraph minimlc {")


def test_mini_opt_view_op_graph_option_without_the_flag_is_one_line_error(tmp_path: Path) -> None:
    source = tmp_path / "empty.mlir"
    source.write_text("")
    mini_opt = str(SCRIPTS / "mini-opt")
    run = subprocess.run(
        [mini_opt, str(source), "--view-op-graph-print-attrs"], capture_output=True, text=True, check=False
    )
    assert run.returncode == 1
    assert "Traceback" not in run.stderr
    assert run.stderr.splitlines() == [
        "mini-opt: error: --view-op-graph-print-attrs and --view-op-graph-print-result-types need --view-op-graph"
    ]


@needs_graphviz
def test_minimlc_compile_dot_writes_a_graph_graphviz_draws(mlp_path: Path, tmp_path: Path) -> None:
    output = tmp_path / "mlp.te.dot"
    result = minimlc("compile", str(mlp_path), "--emit", "te", "--dot", "-o", str(output))
    assert result.returncode == 0, result.stderr
    dot = output.read_text()
    assert dot.startswith("digraph minimlc {")
    assert 'label = "te.compute' in dot
    drawn = subprocess.run(["dot", "-Tsvg", str(output)], capture_output=True, text=True, check=False)
    assert drawn.returncode == 0
    assert "<svg" in drawn.stdout


def test_minimlc_compile_dot_needs_an_ir_level(mlp_path: Path) -> None:
    result = minimlc("compile", str(mlp_path), "--emit", "obj", "--dot")
    assert_one_line_error(result, "--dot draws an IR level: use it with --emit graph|te|loop|scf|llvm-dialect")


def _workloads() -> dict[str, object]:
    """onnx's nine light CNNs and the benchmark's transformer workloads (`bench/bench_models.py`'s BERT-style
    encoder, GPT block and ViT), as ONNX models."""
    from transformer_models import Dims, bert, gpt, vit

    text = Dims(tokens=128, hidden=256, heads=4, ffn=1024)
    models: dict[str, object] = {path.stem: path for path in sorted(LIGHT_MODELS_DIR.glob("light_*.onnx"))}
    models["bert"] = bert(text, layers=4, vocab=30522)
    models["gpt"] = gpt(text, vocab=50257)
    models["vit"] = vit(Dims(tokens=197, hidden=192, heads=3, ffn=768), 4, image=224, patch=16, classes=1000)
    return models


@pytest.mark.slow
@pytest.mark.skipif(shutil.which("nop") is None, reason="Graphviz's `nop` is not installed")
def test_every_workload_s_graph_level_parses_with_graphviz() -> None:
    """Each model's optimised graph (O3's graph passes) as DOT: Graphviz's parser (`nop`, no layout: laying out
    DenseNet-121 takes minutes) reads it without a message, and every op is a node."""
    models = _workloads()
    assert len(models) == 12
    for name, model in models.items():
        module = import_model(model).module
        run_pipeline(module, 3, stop_after="graph")
        dot = op_graph_dot(module)
        assert len(_ids(dot, "op")) == len(list(module.walk())), name
        parsed = subprocess.run(["nop"], input=dot, capture_output=True, text=True, check=False)
        assert parsed.returncode == 0, (name, parsed.stderr)
        assert parsed.stderr == "", name
        assert parsed.stdout.startswith("digraph"), name
