"""`mini-opt`: the lower-to-llvm pipeline from every level's printed text, -t llvm, --list-passes, bad options."""

from __future__ import annotations

import re
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import pytest
from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass

from minimlc.tools.mini_opt import MiniOptMain

ROOT = Path(__file__).resolve().parents[2]
SCRIPTS = Path(sys.executable).parent

MLP_GRAPH = """
func.func @main(%x: tensor<1x16xf32>) -> tensor<1x4xf32> {
  %w0 = graph.weight "fc0.weight" : tensor<8x16xf32>
  %b0 = graph.weight "fc0.bias" : tensor<8xf32>
  %h = graph.gemm %x, %w0, %b0 {trans_b} : (tensor<1x16xf32>, tensor<8x16xf32>, tensor<8xf32>) -> tensor<1x8xf32>
  %r = graph.relu %h : tensor<1x8xf32>
  %w1 = graph.weight "fc1.weight" : tensor<4x8xf32>
  %b1 = graph.weight "fc1.bias" : tensor<4xf32>
  %y = graph.gemm %r, %w1, %b1 {trans_b} : (tensor<1x8xf32>, tensor<4x8xf32>, tensor<4xf32>) -> tensor<1x4xf32>
  func.return %y : tensor<1x4xf32>
}
"""


def mini_opt(*args: str, stdin: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [str(SCRIPTS / "mini-opt"), *args], input=stdin, capture_output=True, text=True, check=False
    )


def lowered(pipeline: str) -> str:
    result = mini_opt("-p", pipeline, stdin=MLP_GRAPH)
    assert result.returncode == 0, result.stderr
    return result.stdout


@pytest.mark.parametrize("level", ["graph", "lower-to-te", "lower-to-loop", "lower-to-scf"])
def test_each_level_reparses_and_continues_to_llvm(level: str) -> None:
    text = MLP_GRAPH if level == "graph" else lowered(level)
    result = mini_opt("-p", "lower-to-llvm", "-t", "llvm", stdin=text)
    assert result.returncode == 0, result.stderr
    assert re.search(r'define void @"?main_packed"?\(ptr', result.stdout)
    assert re.search(r"fmul|@llvm\.fma\.", result.stdout)  # the products made it (as FMAs where vectorized)


def test_one_pipeline_reaches_llvm_dialect() -> None:
    text = lowered("lower-to-llvm")
    assert "llvm.func @main" in text
    for leftover in ("graph.", "te.", "loop.", "scf.", "memref.", "func.func", "builtin.unrealized_conversion_cast"):
        assert leftover not in text


def test_time_passes_lists_inner_passes_on_stderr() -> None:
    result = mini_opt("-p", "lower-to-loop", "--time-passes", stdin=MLP_GRAPH)
    assert result.returncode == 0, result.stderr
    for name in ("graph-to-te", "te-inline", "te-to-loop"):
        assert re.search(rf"%\)  {name}$", result.stderr, flags=re.MULTILINE), result.stderr
    assert result.stdout.startswith("builtin.module"), "the report must not go into the IR on stdout"
    assert "Execution time report" not in result.stdout


def test_list_passes_describes_everything() -> None:
    result = subprocess.run([str(SCRIPTS / "mini-opt"), "--list-passes"], capture_output=True, text=True, check=False)
    assert result.returncode == 0, result.stderr
    for name in ("graph-to-te", "te-inline", "te-to-loop", "loop-to-scf", "convert-to-llvm", "lower-to-llvm"):
        assert name in result.stdout
    assert "(no description)" not in result.stdout


@pytest.mark.parametrize(
    ("passes", "message"),
    [("no-such-pass", "no-such-pass"), ("cse{bogus=1}", "bogus")],
)
def test_bad_pass_lists_are_reported(passes: str, message: str) -> None:
    result = mini_opt("-p", passes, stdin=MLP_GRAPH)
    assert result.returncode != 0
    assert message in result.stderr
    assert "Traceback" not in result.stderr


def test_type_mismatch_is_a_parse_error() -> None:
    bad = MLP_GRAPH.replace("tensor<1x8xf32>\n  %r", "tensor<1x9xf32>\n  %r")
    result = mini_opt(stdin=bad)
    assert result.returncode == 1
    assert "operand is used with type tensor<1x8xf32>" in result.stderr
    assert "Traceback" not in result.stderr


def test_verifier_error_is_reported() -> None:
    bad = """
func.func @f(%a: tensor<2x3xf32>, %b: tensor<4xf32>) -> tensor<2x3xf32> {
  %c = graph.add %a, %b : (tensor<2x3xf32>, tensor<4xf32>) -> tensor<2x3xf32>
  func.return %c : tensor<2x3xf32>
}
"""
    result = mini_opt(stdin=bad)
    assert result.returncode == 1
    assert "graph.add: operand shapes (2, 3) and (4,) are not broadcast-compatible" in result.stderr
    assert "Traceback" not in result.stderr


PARSE_ERROR = "func.func @f() {\n  %0 = arith.constant 1 : i3x\n}\n"
FAILING_PASS = ["-p", "lower-to-loop,loop-split{kernel=nope loop=i factor=2}"]


@pytest.mark.parametrize(
    ("args", "stdin", "message"),
    [
        (["/no/such/file.mlir"], "", "/no/such/file.mlir: No such file or directory"),
        ([str(ROOT / "tests")], "", "Is a directory"),
        (["-f", "mlir", sys.executable], "", "utf-8"),
        ([], PARSE_ERROR, "stdin:2:27: type expected\n  %0 = arith.constant 1 : i3x\n"),
        (["--no-such-flag"], MLP_GRAPH, "unrecognized arguments: --no-such-flag"),
        (["-p", "lower-to-lop"], MLP_GRAPH, "did you mean 'lower-to-loop'?"),
        (["-p", "cse{"], MLP_GRAPH, "cannot parse pass"),
        (FAILING_PASS, MLP_GRAPH, "pass 'loop-split' failed"),
        (["--run-reproducer", "/no/such/reproducer.mlir"], "", "No such file or directory"),
    ],
    ids=[
        "missing-file",
        "directory",
        "binary",
        "parse-error",
        "bad-option",
        "unknown-pass",
        "bad-pipeline",
        "pass-failure",
        "missing-reproducer",
    ],
)
def test_user_errors_have_no_traceback(args: list[str], stdin: str, message: str) -> None:
    result = mini_opt(*args, stdin=stdin)
    assert result.returncode != 0
    assert "Traceback" not in result.stderr
    assert "mini-opt: error:" in result.stderr
    assert message in result.stderr


@pytest.mark.slow
def test_closed_stdout_pipe_exits_quietly() -> None:
    function = "func.func @f{}(%x: tensor<4xf32>) -> tensor<4xf32> {{\n  func.return %x : tensor<4xf32>\n}}\n"
    functions = "".join(function.format(i) for i in range(3000))
    result = subprocess.run(
        f"'{SCRIPTS / 'mini-opt'}' | head -1", shell=True, input=functions, capture_output=True, text=True, check=False
    )
    assert result.stdout == "builtin.module {\n"
    assert result.stderr == ""


@dataclass(frozen=True)
class DropReturnsPass(ModulePass):
    """Leaves invalid IR: erases every func.return."""

    name = "drop-returns"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        for inner in list(op.walk()):
            if isinstance(inner, func.ReturnOp):
                inner.detach()
                inner.erase()


@dataclass(frozen=True)
class CrashPass(ModulePass):
    """Crashes, as a buggy pass does."""

    name = "crash"

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        raise AssertionError("a bug in the pass")


class BrokenPassesMain(MiniOptMain):
    def register_all_passes(self) -> None:
        super().register_all_passes()
        self.register_pass("drop-returns", lambda: DropReturnsPass)
        self.register_pass("crash", lambda: CrashPass)


def run_in_process(args: list[str], tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> tuple[int, str]:
    source = tmp_path / "input.mlir"
    source.write_text(MLP_GRAPH)
    status = BrokenPassesMain(args=[str(source), *args]).run()
    return status, capsys.readouterr().err


def test_verify_each_names_the_pass_that_broke_the_ir(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_in_process(["-p", "drop-returns,cse", "--verify-each"], tmp_path, capsys)
    assert status == 1
    assert "after pass 'drop-returns': the IR does not verify: Operation graph.gemm terminates block" in err
    assert re.search(r"input\.mlir:9:3: ", err), err


def test_without_verify_each_the_final_ir_is_verified(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    status, err = run_in_process(["-p", "drop-returns,cse"], tmp_path, capsys)
    assert status == 1
    assert "after the pipeline (--verify-each names the pass that broke it): the IR does not verify" in err


def test_a_crashing_pass_is_reported_with_its_reproducer(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    reproducer = tmp_path / "repro.mlir"
    status, err = run_in_process(["-p", "cse,crash", f"--crash-reproducer={reproducer}"], tmp_path, capsys)
    assert status == 1
    assert "mini-opt: error: pass 'crash' crashed: AssertionError: a bug in the pass (at test_mini_opt.py:" in err
    assert "Traceback" not in err
    assert reproducer.read_text().startswith("// mini-opt-reproducer: -p cse,crash\nbuiltin.module {")


def test_unterminated_string_on_a_long_line_is_a_quick_error() -> None:
    """Found by bench/fuzz.py: xDSL's string-literal pattern backtracked exponentially on a stray quote (2^n in the
    rest of the line); minimlc.dialects replaces it with a linear one. A regression would hang until the timeout."""
    text = 'func.func @f() {\n  %x = "test.op"() {a = "' + "x " * 40 + "} : () -> i32\n  func.return\n}\n"
    result = subprocess.run(
        [str(SCRIPTS / "mini-opt")], input=text, capture_output=True, text=True, check=False, timeout=60
    )
    assert result.returncode == 1
    assert "closing string literal" in result.stderr
    assert "Traceback" not in result.stderr


def assert_one_line_error(result: subprocess.CompletedProcess[str], message: str) -> None:
    assert result.returncode == 1, result.stderr
    assert "Traceback" not in result.stderr
    assert len(result.stderr.strip().splitlines()) == 1, result.stderr
    assert message in result.stderr, result.stderr


@pytest.mark.parametrize("args", [["-"], []], ids=["dash", "no-file"])
def test_standard_input_is_read_with_dash_or_no_file(args: list[str]) -> None:
    result = mini_opt(*args, "-p", "graph-to-te", stdin=MLP_GRAPH)
    assert result.returncode == 0, result.stderr
    assert result.stdout.startswith("builtin.module {")
    assert "te.compute" in result.stdout


def test_dash_names_stdin_in_errors() -> None:
    result = mini_opt("-", stdin=PARSE_ERROR)
    assert result.returncode == 1
    assert result.stderr.startswith("mini-opt: error: stdin:2:27: type expected\n")


@pytest.mark.parametrize(
    ("pipeline", "message"),
    [
        ("builtin.module(cse", "--pass-pipeline: missing ')' to close 'builtin.module(' opened at column 15"),
        ("builtin.module(cse,func.func(cse)", "missing ')' to close 'builtin.module(' opened at column 15"),
        ("builtin.module(cse))", "--pass-pipeline: unexpected ')' at column 20"),
    ],
    ids=["unclosed", "unclosed-outer", "extra"],
)
def test_unbalanced_pass_pipeline_names_the_parenthesis(pipeline: str, message: str) -> None:
    result = mini_opt(f"--pass-pipeline={pipeline}", stdin=MLP_GRAPH)
    assert_one_line_error(result, message)
    assert "nesting" not in result.stderr


def test_path_option_values_need_no_quotes(tmp_path: Path) -> None:
    from minimlc.lowering.plugins import registry
    from minimlc.tools.mini_opt_pipeline import parse_pass_list

    spec = "default-schedule{tuning-db=tuned/x-1.jsonl annotate=true}"
    pass_ = parse_pass_list(spec, registry().passes)[0].pass_
    assert (pass_.tuning_db, pass_.annotate) == ("tuned/x-1.jsonl", True)  # pyright: ignore[reportAttributeAccessIssue]
    (tmp_path / "tuned").mkdir()
    (tmp_path / "tuned" / "x-1.jsonl").write_text("")
    result = subprocess.run(
        [str(SCRIPTS / "mini-opt"), "-p", f"lower-to-loop,{spec}"],
        input=MLP_GRAPH,
        capture_output=True,
        text=True,
        check=False,
        cwd=tmp_path,
    )
    assert result.returncode == 0, result.stderr
    assert "minimlc.schedule" in result.stdout


@pytest.mark.parametrize("flag", ["--print-ir-before-all", "--mlir-print-ir-before-all"])
def test_print_ir_before_all_dumps_before_every_pass_on_stderr(flag: str) -> None:
    result = mini_opt("-p", "graph-to-te,cse", flag, stdin=MLP_GRAPH)
    assert result.returncode == 0, result.stderr
    before_te = "// -----// IR Dump Before graph-to-te (graph-to-te) //----- //\nbuiltin.module {\n"
    assert result.stderr.startswith(before_te)
    assert "// -----// IR Dump Before cse (cse) //----- //\nbuiltin.module {\n" in result.stderr
    assert "IR Dump After" not in result.stderr
    assert "IR Dump" not in result.stdout


@pytest.mark.parametrize(
    ("flags", "header"),
    [
        (["--mlir-print-ir-after-all"], "IR Dump After cse (cse)"),
        (["--mlir-print-ir-after-change"], "IR Dump After graph-to-te (graph-to-te)"),
        (["--mlir-print-ir-before=cse"], "IR Dump Before cse (cse)"),
        (["--mlir-print-ir-after=graph-to-te"], "IR Dump After graph-to-te (graph-to-te)"),
        ([*FAILING_PASS, "--mlir-print-ir-after-failure"], "IR Dump After loop-split Failed"),
    ],
    ids=["after-all", "after-change", "before", "after", "after-failure"],
)
def test_mlir_opt_spellings_of_the_print_flags(flags: list[str], header: str) -> None:
    passes = [] if "-p" in flags else ["-p", "graph-to-te,cse"]
    result = mini_opt(*passes, *flags, stdin=MLP_GRAPH)
    assert "Traceback" not in result.stderr
    assert "unrecognized" not in result.stderr
    assert f"// -----// {header}" in result.stderr


def test_mlir_print_ir_tree_dir_is_an_alias(tmp_path: Path) -> None:
    result = mini_opt("-p", "graph-to-te", f"--mlir-print-ir-tree-dir={tmp_path}", stdin=MLP_GRAPH)
    assert result.returncode == 0, result.stderr
    assert (tmp_path / "01_graph-to-te.mlir").read_text().startswith("builtin.module {")


@pytest.mark.parametrize(
    ("passes", "message"),
    [
        ("loop-split{kernel=k loop=i factor=abc}", "pass 'loop-split': option 'factor' takes an integer, got 'abc'"),
        ("loop-split{kernel=k loop=i factor=1.5}", "pass 'loop-split': option 'factor' takes an integer, got '1.5'"),
        ("loop-split{kernel=k loop=i factor}", "pass 'loop-split': option 'factor' takes an integer, got no value"),
        ("default-schedule{annotate=maybe}", "option 'annotate' takes true or false, got 'maybe'"),
        ("loop-tile{kernel=k loops=i sizes=4,x}", "option 'sizes' takes a comma-separated list of integers, got '4,x'"),
    ],
    ids=["word-for-int", "float-for-int", "no-value", "word-for-bool", "word-in-int-list"],
)
def test_bad_option_values_name_the_pass_option_and_type(passes: str, message: str) -> None:
    result = mini_opt("-p", passes, stdin=MLP_GRAPH)
    assert_one_line_error(result, message)
    assert "Incompatible types" not in result.stderr


@pytest.mark.parametrize("text", ["", "  \n\n", "// a comment\n\n// another\n"], ids=["empty", "blank", "comments"])
@pytest.mark.parametrize("from_file", [False, True], ids=["stdin", "file"])
def test_empty_input_prints_an_empty_module(text: str, from_file: bool, tmp_path: Path) -> None:
    source = tmp_path / "empty.mlir"
    source.write_text(text)
    result = mini_opt(str(source), stdin="") if from_file else mini_opt(stdin=text)
    assert (result.returncode, result.stderr) == (0, "")
    assert result.stdout.strip() == "builtin.module {\n}"  # with the blank line that ends any module's output


def test_empty_input_without_implicit_module_is_a_clear_error() -> None:
    result = mini_opt("--no-implicit-module", stdin="// nothing\n")
    assert_one_line_error(result, "the input is empty: --no-implicit-module needs a builtin.module operation")
