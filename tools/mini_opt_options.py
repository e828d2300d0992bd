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
    parser.add_argument("--print-ir-before", "--mlir-print-ir-before", metavar="PASS[,PASS]", type=_pass_names,
                        default=[], help="print the IR to stderr before each run of these passes")
    parser.add_argument("--print-ir-after", "--mlir-print-ir-after", metavar="PASS[,PASS]", type=_pass_names,
                        default=[], help="print the IR to stderr after each run of these passes")
    parser.add_argument("--print-ir-before-all", "--mlir-print-ir-before-all", action="store_true",
                        help="print the IR to stderr before every pass")
    parser.add_argument("--print-ir-after-all", "--mlir-print-ir-after-all", action="store_true",
                        help="print the IR to stderr after every pass")
    parser.add_argument("--print-ir-after-change", "--mlir-print-ir-after-change", action="store_true",
                        help="print the IR to stderr after every pass that changed it")
    parser.add_argument("--print-ir-after-failure", "--mlir-print-ir-after-failure", action="store_true",
                        help="print the IR as a failing pass left it, before the error")
    parser.add_argument("--print-ir-tree-dir", "--mlir-print-ir-tree-dir", metavar="DIR", type=Path,
                        help="write the IR after each pass to DIR/<index>_<pass-name>.mlir (index from 01)")
    parser.add_argument("--mlir-timing", action="store_true",
                        help="print a timing report to stderr: wall time and share of parsing, each pass (under "
                        "its named pipeline) and output")
    parser.add_argument("--verify-each", action="store_true",
                        help="verify the IR after every pass (default: the input and the final IR) and name the pass "
                        "that left it invalid")
    parser.add_argument("--crash-reproducer", metavar="FILE", type=Path,
                        help="when a pass fails, write its input IR and the pipeline to FILE for --run-reproducer")
    parser.add_argument("--run-reproducer", metavar="FILE",
                        help="replay a reproducer that --crash-reproducer wrote: its IR through its pipeline")


def validate_pass_names(names: Iterable[str], passes: dict[str, Callable[[], type[ModulePass]]]) -> None:
    """Raise PipelineError for a name in `--print-ir-before/after` that is no pass."""
    for name in names:
        if name not in passes:
            raise PipelineError(f"--print-ir-before/after: unknown pass '{name}'{did_you_mean(name, passes)}")
