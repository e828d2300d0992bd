"""The command-line flags `mini-opt` adds to xdsl-opt's, spelled as mlir-opt spells them (the IR printing flags also
with mlir-opt's `--mlir-` prefix: `--mlir-print-ir-after-all`)."""

from __future__ import annotations

import argparse
from collections.abc import Callable, Iterable
from pathlib import Path

from xdsl.passes import ModulePass

from minimlc.tools.mini_opt_pipeline import PipelineError, did_you_mean


def _pass_names(text: str) -> list[str]:
    return [name.strip() for name in text.split(",") if name.strip()]


def register_driver_arguments(parser: argparse.ArgumentParser) -> None:
    """Add the pass-pipeline, IR-printing, timing, verification and reproducer flags to `parser`."""
    parser.prog = "mini-opt"
    helps = {
        "verify_diagnostics": "check the diagnostics against the input's `// expected-error {{...}}` annotations "
        "(also @+N, @-N, @above, @below, @unknown; expected-warning, expected-note); exit 1 on any mismatch",
        "target": "output format: mlir (default) or llvm (LLVM IR text)",
        "time_passes": "print each pass's wall time to stderr (a flat list; --mlir-timing for the tree)",
    }
    for action in parser._actions:  # pyright: ignore[reportPrivateUsage]
        action.help = helps.get(action.dest, action.help)
    parser.add_argument(
        "--pass-pipeline",
        metavar="PIPELINE",
        help="MLIR's pipeline syntax, 'builtin.module(graph-to-te,te-inline)': the same as -p graph-to-te,te-inline",
    )
    parser.add_argument(
        "--print-ir-before",
        "--mlir-print-ir-before",
        metavar="PASS[,PASS]",
        type=_pass_names,
        default=[],
        help="print the IR to stderr before each run of these passes",
    )
    parser.add_argument(
        "--print-ir-after",
        "--mlir-print-ir-after",
        metavar="PASS[,PASS]",
        type=_pass_names,
        default=[],
        help="print the IR to stderr after each run of these passes",
    )
    parser.add_argument(
        "--print-ir-before-all",
        "--mlir-print-ir-before-all",
        action="store_true",
        help="print the IR to stderr before every pass",
    )
    parser.add_argument(
        "--print-ir-after-all",
        "--mlir-print-ir-after-all",
        action="store_true",
        help="print the IR to stderr after every pass",
    )
    parser.add_argument(
        "--print-ir-after-change",
        "--mlir-print-ir-after-change",
        action="store_true",
        help="print the IR to stderr after every pass that changed it",
    )
    parser.add_argument(
        "--print-ir-after-failure",
        "--mlir-print-ir-after-failure",
        action="store_true",
        help="print the IR as a failing pass left it, before the error",
    )
    parser.add_argument(
        "--print-ir-tree-dir",
        "--mlir-print-ir-tree-dir",
        metavar="DIR",
        type=Path,
        help="write the IR after each pass to DIR/<index>_<pass-name>.mlir (index from 01)",
    )
    parser.add_argument(
        "--mlir-timing",
        action="store_true",
        help="print a timing report to stderr: wall time and share of parsing, each pass (under "
        "its named pipeline) and output",
    )
    parser.add_argument(
        "--verify-each",
        action="store_true",
        help="verify the IR after every pass (default: the input and the final IR) and name the pass "
        "that left it invalid",
    )
    parser.add_argument(
        "--crash-reproducer",
        metavar="FILE",
        type=Path,
        help="when a pass fails, write its input IR and the pipeline to FILE for --run-reproducer",
    )
    parser.add_argument(
        "--run-reproducer",
        metavar="FILE",
        help="replay a reproducer that --crash-reproducer wrote: its IR through its pipeline",
    )
    parser.add_argument(
        "--view-op-graph",
        nargs="?",
        const="-",
        metavar="OUT.dot",
        help="Graphviz DOT of the IR after the passes: alone, to standard output instead of the IR; "
        "--view-op-graph=OUT.dot writes it there and prints the IR",
    )
    parser.add_argument(
        "--view-op-graph-max-label-len",
        metavar="N",
        type=_label_length,
        default=20,
        help="with --view-op-graph: cut attribute values and types at N characters (default 20)",
    )
    parser.add_argument(
        "--view-op-graph-print-attrs",
        action="store_true",
        help="with --view-op-graph: label each op with its attributes",
    )
    parser.add_argument(
        "--view-op-graph-print-result-types",
        action="store_true",
        help="with --view-op-graph: label each op with its result types",
    )


def _label_length(text: str) -> int:
    if not text.isdigit() or int(text) < 1:
        raise argparse.ArgumentTypeError(f"expects a positive number of characters, got '{text}'")
    return int(text)


def attach_view_op_graph(argv: list[str]) -> list[str]:
    """`argv` with a bare `--view-op-graph` spelled `--view-op-graph=-` (standard output), so that it never takes
    the next argument (`mini-opt --view-op-graph in.mlir`) as its file."""
    return ["--view-op-graph=-" if arg == "--view-op-graph" else arg for arg in argv]


def validate_pass_names(names: Iterable[str], passes: dict[str, Callable[[], type[ModulePass]]]) -> None:
    """Raise PipelineError for a name in `--print-ir-before/after` that is no pass."""
    for name in names:
        if name not in passes:
            raise PipelineError(f"--print-ir-before/after: unknown pass '{name}'{did_you_mean(name, passes)}")
