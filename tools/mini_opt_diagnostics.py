"""`mini-opt`'s diagnostics: source locations of parsed ops, verifier errors that name the op and its `file:line:col`,
and `--verify-diagnostics`, which checks them against MLIR-style `// expected-error {{...}}` annotations."""

from __future__ import annotations

import re
from dataclasses import dataclass
from io import StringIO

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.parser import Parser
from xdsl.printer import Printer
from xdsl.utils.exceptions import DiagnosticException, ParseError, VerifyException
from xdsl.utils.mlir_lexer import MLIRTokenKind

SourceLocation = tuple[str, int, int]
"""File name, one-based line and column."""


class LocatingParser(Parser):
    """xDSL's parser that also records where each op starts, in `locations` (lines counted from `line_offset`)."""

    def __init__(
        self, ctx: Context, text: str, name: str, locations: dict[Operation, SourceLocation], line_offset: int = 0
    ) -> None:
        super().__init__(ctx, text, name)
        self.locations = locations
        self.line_offset = line_offset

    def parse_module(self, allow_implicit_module: bool = True) -> ModuleOp:
        """xDSL's `parse_module`, with an input of only whitespace and comments read as an empty module, as mlir-opt
        reads it (or, without the implicit module, refused in those words)."""
        if self._current_token.kind is not MLIRTokenKind.EOF:
            return super().parse_module(allow_implicit_module)
        if not allow_implicit_module:
            raise DiagnosticException("the input is empty: --no-implicit-module needs a builtin.module operation")
        return ModuleOp([])

    def parse_operation(self) -> Operation:
        start = self._current_token.span
        op = super().parse_operation()
        location = start.get_location()
        self.locations[op] = (location.file, location.line + self.line_offset, location.col)
        return op


@dataclass
class Diagnostic:
    """One error (or warning, note) of a run, where it points and the op it is about."""

    message: str
    location: SourceLocation | None = None
    detail: str = ""
    """Lines printed below the message: the source line of a parse error, the op of a verifier error."""
    severity: str = "error"

    def __str__(self) -> str:
        where = f"{self.location[0]}:{self.location[1]}:{self.location[2]}: " if self.location else ""
        return f"{where}{self.message}" + (f"\n{self.detail}" if self.detail else "")


class CompileError(Exception):
    """A failure mini-opt reports as a diagnostic (no traceback)."""

    def __init__(self, diagnostic: Diagnostic) -> None:
        super().__init__(str(diagnostic))
        self.diagnostic = diagnostic


def from_parse_error(error: ParseError) -> Diagnostic:
    """The diagnostic of a parse error, at the error's position."""
    file, line, col = error.span.get_location()
    source = str(error).rstrip("\n").split("\n")[1:-1]
    return Diagnostic(error.msg, (file, line, col), "\n".join(source))


def verify_error(
    root: Operation, error: Exception, locations: dict[Operation, SourceLocation], context: str = ""
) -> Diagnostic:
    """The diagnostic of a failed `root.verify()`: the innermost op that fails its own checks, located and printed."""
    for op in root.walk(region_first=True):
        try:
            op.verify(verify_nested_ops=False)
        except VerifyException as op_error:
            note = f"note: see current operation: {_op_text(op)}"
            return Diagnostic(context + str(op_error), locate(op, locations), note)
    return Diagnostic(context + str(error))


def locate(op: Operation | None, locations: dict[Operation, SourceLocation]) -> SourceLocation | None:
    """Where `op` was parsed, else where its closest parsed ancestor was (ops made by passes have no place)."""
    while op is not None:
        if op in locations:
            return locations[op]
        op = op.parent_op()
    return None


def _op_text(op: Operation) -> str:
    stream = StringIO()
    Printer(stream=stream, print_generic_format=True).print_op(op)
    lines = stream.getvalue().splitlines()
    return lines[0] + (" ..." if len(lines) > 1 else "")


_ANNOTATION = re.compile(r"expected-(error|warning|note)\s*(?:@\s*([+-]\d+|above|below|unknown))?\s*\{\{(.*?)\}\}")


@dataclass
class Expectation:
    """An `expected-<severity>@<where> {{text}}` annotation, written on `line`, for a diagnostic on `target`."""

    severity: str
    text: str
    line: int
    target: int | None


def expectations(text: str, line_offset: int) -> list[Expectation]:
    """The annotations in one input chunk, lines counted as in the whole file."""
    found: list[Expectation] = []
    for number, line in enumerate(text.splitlines(), start=line_offset + 1):
        for severity, where, message in _ANNOTATION.findall(line):
            shift = {"": 0, "above": -1, "below": 1}.get(where)
            target = None if where == "unknown" else number + (int(where) if shift is None else shift)
            found.append(Expectation(severity, message.strip(), number, target))
    return found


def check_expectations(name: str, expected: list[Expectation], produced: list[Diagnostic]) -> list[str]:
    """Errors for each diagnostic no annotation expects, and each annotation no diagnostic matches."""
    unmatched = list(expected)
    errors: list[str] = []
    for diagnostic in produced:
        line = diagnostic.location[1] if diagnostic.location else None
        candidates = [e for e in unmatched if e.severity == diagnostic.severity and e.target == line]
        match = next((e for e in candidates if e.text in diagnostic.message), None)
        if match is None:
            where = f"{name}:{line}" if line is not None else f"{name}:<unknown location>"
            errors.append(f"{where}: unexpected {diagnostic.severity}: {diagnostic.message}")
        else:
            unmatched.remove(match)
    errors += [f'{name}:{e.line}: expected {e.severity} "{e.text}" was not produced' for e in unmatched]
    return errors
