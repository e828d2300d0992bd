"""`mini-opt`'s pass runner with MLIR's instrumentation: IR dumps before/after passes (stderr, or one file per pass),
`--verify-each`, the timing report (a tree with named pipelines as parents) and crash reproducers."""

from __future__ import annotations

import shlex
import sys
import time
import traceback
from collections.abc import Sequence
from dataclasses import dataclass, field
from io import StringIO
from pathlib import Path
from typing import IO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, VerifyException

from minimlc.tools.mini_opt_diagnostics import CompileError, Diagnostic, SourceLocation, verify_error
from minimlc.tools.mini_opt_pipeline import PassEntry

REPRODUCER_TAG = "// mini-opt-reproducer:"

Timing = tuple[str, float, PassEntry | None]
"""(label, seconds, pass) of a timed step; the pass is None for parsing and output."""


@dataclass
class Instrumentation:
    """What to print, verify, time and save around each pass (the command-line flags)."""

    print_before: set[str] = field(default_factory=set[str])
    print_after: set[str] = field(default_factory=set[str])
    print_before_all: bool = False
    print_after_all: bool = False
    print_after_change: bool = False
    print_after_failure: bool = False
    print_between_passes: bool = False
    tree_dir: Path | None = None
    verify_each: bool = False
    verify: bool = True
    generic: bool = False
    reproducer: Path | None = None
    reproducer_flags: str = ""
    timings: list[Timing] = field(default_factory=list[Timing])
    """Every timed step, in order."""


def print_ir(module: Operation, generic: bool = False) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=generic).print_op(module)
    return stream.getvalue() + "\n"


def _header(when: str, name: str) -> str:
    return f"// -----// IR Dump {when} ({name}) //----- //\n"


def run_passes(
    module: ModuleOp,
    entries: Sequence[PassEntry],
    ctx: Context,
    inst: Instrumentation,
    locations: dict[Operation, SourceLocation],
) -> None:
    """Apply `entries` to `module` with the instrumentation `inst`; raises CompileError on a failing pass."""
    initial = print_ir(module, inst.generic) if inst.reproducer else ""
    for index, entry in enumerate(entries, start=1):
        if inst.print_before_all or entry.name in inst.print_before:
            sys.stderr.write(_header(f"Before {entry.name}", entry.name) + print_ir(module, inst.generic))
        before = print_ir(module, inst.generic) if inst.print_after_change else ""
        start = time.perf_counter()
        try:
            entry.pass_.apply(ctx, module)
            if inst.verify_each:
                _verify(module, f"after pass '{entry.name}': ", locations)
            elif inst.verify and index == len(entries):
                _verify(module, "after the pipeline (--verify-each names the pass that broke it): ", locations)
        except Exception as error:
            inst.timings.append((entry.name, time.perf_counter() - start, entry))
            raise _failure(module, entries, entry, error, inst, initial, locations) from None
        inst.timings.append((entry.name, time.perf_counter() - start, entry))
        _after_pass(module, entry, index, len(entries), before, inst)


def _after_pass(module: ModuleOp, entry: PassEntry, index: int, count: int, before: str, inst: Instrumentation) -> None:
    """The dumps after a pass that succeeded (printing the IR only when one is asked for)."""
    wanted = inst.print_after_all or entry.name in inst.print_after or inst.print_after_change
    if not (wanted or inst.tree_dir is not None or (inst.print_between_passes and index < count)):
        return
    after = print_ir(module, inst.generic)
    if inst.print_after_all or entry.name in inst.print_after or (inst.print_after_change and after != before):
        sys.stderr.write(_header(f"After {entry.name}", entry.name) + after)
    if inst.tree_dir is not None:
        inst.tree_dir.mkdir(parents=True, exist_ok=True)
        (inst.tree_dir / f"{index:02d}_{entry.name}.mlir").write_text(after)
    if inst.print_between_passes and index < count:
        sys.stdout.write(f"IR after {entry.name}:\n{after}\n\n\n")


def _verify(module: ModuleOp, context: str, locations: dict[Operation, SourceLocation]) -> None:
    try:
        module.verify()
    except VerifyException as error:
        diagnostic = verify_error(module, error, locations, context + "the IR does not verify: ")
        raise CompileError(diagnostic) from None


def _failure(
    module: ModuleOp,
    entries: Sequence[PassEntry],
    entry: PassEntry,
    error: Exception,
    inst: Instrumentation,
    initial: str,
    locations: dict[Operation, SourceLocation],
) -> CompileError:
    """The CompileError of a pass that raised `error`, after the failure dump and the reproducer it asks for."""
    if inst.print_after_failure:
        sys.stderr.write(_header(f"After {entry.name} Failed", entry.name) + print_ir(module, inst.generic))
    if isinstance(error, CompileError):
        diagnostic = error.diagnostic
    elif isinstance(error, DiagnosticException):
        diagnostic = Diagnostic(f"pass '{entry.name}' failed: {error}")
    else:
        frame = traceback.extract_tb(error.__traceback__)[-1]
        where = f"{Path(frame.filename).name}:{frame.lineno} in {frame.name}"
        diagnostic = Diagnostic(f"pass '{entry.name}' crashed: {type(error).__name__}: {error} (at {where})")
    if inst.reproducer is not None:
        pipeline = ",".join(e.item for e in entries)
        header = f"{REPRODUCER_TAG} -p {shlex.quote(pipeline)}{inst.reproducer_flags}\n"
        inst.reproducer.write_text(header + initial)
        diagnostic.message += f"\nnote: reproducer written to {inst.reproducer} (mini-opt --run-reproducer to replay)"
    return CompileError(diagnostic)


def read_reproducer(path: str) -> list[str]:
    """The mini-opt arguments a reproducer's header line records."""
    with open(path) as file:
        first = file.readline()
    if not first.startswith(REPRODUCER_TAG):
        raise ValueError(f"'{path}' is not a mini-opt reproducer (its first line must start with '{REPRODUCER_TAG}')")
    return shlex.split(first[len(REPRODUCER_TAG) :])


def write_timing_report(inst: Instrumentation, tree: bool, stream: IO[str]) -> None:
    """MLIR's `-mlir-timing` report: wall time and share per step; named pipelines parent their passes if `tree`."""
    total = sum(seconds for _, seconds, _ in inst.timings) or 1e-12
    rows: list[list[int | str | float]] = []
    parent = 0
    previous: PassEntry | None = None
    for label, seconds, entry in inst.timings:
        if tree and entry is not None and entry.pipeline is not None:
            if previous is None or previous.group != entry.group:
                parent = len(rows)
                rows.append([0, entry.pipeline, 0.0])
            rows[parent][2] = float(rows[parent][2]) + seconds
            rows.append([1, label, seconds])
        else:
            rows.append([0, label, seconds])
        previous = entry
    rule = "===" + "-" * 73 + "===\n"
    stream.write(f"{rule}{'... Execution time report ...':^79}".rstrip() + f"\n{rule}")
    stream.write(f"  Total Execution Time: {total:.4f} seconds\n\n  ----Wall Time----  ----Name----\n")
    for depth, label, seconds in [*rows, [0, "Total", total]]:
        share = 100 * float(seconds) / total
        stream.write(f"  {float(seconds):9.4f} ({share:5.1f}%)  {'  ' * int(depth)}{label}\n")
