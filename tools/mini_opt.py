"""`mini-opt`: minimlc's IR driver, a thin subclass of xDSL's `xdsl-opt`.

It registers our dialects, passes, named pipelines (expanded before parsing so `--time-passes` and
`--print-between-passes` see every inner pass), the `llvm` target (LLVM IR text) and an `.onnx` frontend:

    mini-opt model.mlir -p lower-to-llvm -t llvm
    mini-opt model.onnx -p lower-to-loop
    mini-opt --list-passes
    mini-opt toy.mlir --load-plugin my_toy.py -p toy-to-graph   # a plugin's dialects and passes (repeatable)
    mini-opt kernel.mlir --mcpu x86-64-v3 -p default-schedule   # schedule for AVX2, whatever the host

`--mcpu NAME` (llc's spelling; xdsl-opt's `-t/--target` already names the output format) pins the module's target
CPU (`minimlc.target`, see `minimlc.lowering.target`) before the passes run. Beyond xdsl-opt it has mlir-opt's pass
writer flags: `--pass-pipeline`, `--print-ir-*`, `--mlir-timing`, `--verify-each`, `--verify-diagnostics` with
`// expected-error` annotations, `file:line:col` in errors, crash reproducers, "did you mean" for pass names, and
`--view-op-graph[=OUT.dot]`, the IR as Graphviz DOT (`tools/op_graph_dot.py`).
"""

from __future__ import annotations

import argparse
import dataclasses
import os
import sys
import time
from collections.abc import Sequence
from importlib.metadata import version
from io import BytesIO
from typing import IO, Any, ClassVar

from xdsl.dialects.builtin import ModuleOp
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.universe import Universe
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError, ShrinkException, VerifyException
from xdsl.xdsl_opt_main import xDSLOptMain

from minimlc.lowering import UPSTREAM_PASSES
from minimlc.lowering.plugins import load_plugin, registry
from minimlc.lowering.target import known_targets, set_target
from minimlc.lowering.workers import fewer_collections
from minimlc.tools import cli_options
from minimlc.tools.mini_opt_diagnostics import (
    CompileError,
    Diagnostic,
    LocatingParser,
    SourceLocation,
    check_expectations,
    expectations,
    from_parse_error,
    verify_error,
)
from minimlc.tools.mini_opt_instrument import Instrumentation, read_reproducer, run_passes, write_timing_report
from minimlc.tools.mini_opt_options import attach_view_op_graph, register_driver_arguments, validate_pass_names
from minimlc.tools.mini_opt_pipeline import PassEntry, from_pass_pipeline, parse_pass_list


class MiniOptMain(xDSLOptMain):
    """xdsl-opt with minimlc's dialects, passes, pipelines, targets and frontends, those of its plugins, and
    mlir-opt's driver flags."""

    version_format: ClassVar[str] = f"mini-opt (minimlc {version('minimlc')}) on xDSL {{xdsl_version}}"

    def __init__(self, args: Sequence[str] | None = None) -> None:
        self.locations: dict[Operation, SourceLocation] = {}
        self.entries: list[PassEntry] = []
        self.inst = Instrumentation()
        self.graphs: list[str] = []
        """With `--view-op-graph=FILE`: the DOT of each chunk, for FILE."""
        args = attach_view_op_graph(list(sys.argv[1:] if args is None else args))
        # Plugins must be loaded before xdsl-opt registers dialects and passes, which is before it parses arguments.
        plugins, _ = _plugin_arguments().parse_known_args(args)
        for spec in plugins.load_plugin:
            load_plugin(spec)
        super().__init__("mini-opt: minimlc's IR driver (xdsl-opt with minimlc's dialects and passes)", args)

    def register_all_dialects(self) -> None:
        for name, factory in registry().dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in registry().passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        """Only the targets that print our IR: `mlir` (xDSL's) and `llvm` (LLVM IR text)."""
        self.available_targets["mlir"] = Universe.get_multiverse().all_targets["mlir"]

        def llvm_ir() -> type[Any]:
            from minimlc.lowering.llvm.translate import LlvmIrTarget

            return LlvmIrTarget

        self.available_targets["llvm"] = llvm_ir

    def register_all_frontends(self) -> None:
        super().register_all_frontends()

        def parse_onnx(stream: IO[bytes]) -> ModuleOp:
            from minimlc.frontend.onnx import import_model

            return import_model(stream.read()).module

        self.available_frontends["onnx"] = parse_onnx

    def register_all_arguments(self, arg_parser: argparse.ArgumentParser) -> None:
        super().register_all_arguments(arg_parser)
        register_driver_arguments(arg_parser)
        _plugin_arguments(arg_parser)
        arg_parser.add_argument(
            "--list-passes",
            action=_ListPassesAction,
            nargs=0,
            help="List every pass and named pipeline with a one-line description and its options, then exit",
        )
        arg_parser.add_argument(
            "--mcpu",
            metavar="CPU",
            type=cli_options.target_name,
            help=f"target CPU for the schedules and code generation (default: the module's, else the host): "
            f"{', '.join(known_targets())}",
        )

    def setup_pipeline(self) -> None:
        args = self.args
        if args.input_file == "-":  # mlir-opt's name for standard input, which xdsl-opt reads when no file is given
            args.input_file = None
        if args.pass_pipeline is not None:
            if args.passes:
                raise ValueError("use either -p or --pass-pipeline, not both")
            args.passes = from_pass_pipeline(args.pass_pipeline)
        self.entries = parse_pass_list(args.passes, self.available_passes)
        validate_pass_names([*args.print_ir_before, *args.print_ir_after], self.available_passes)
        if args.view_op_graph == "":
            raise ValueError("--view-op-graph=: name the .dot file, or give no value for standard output")
        if args.view_op_graph is None and (args.view_op_graph_print_attrs or args.view_op_graph_print_result_types):
            raise ValueError("--view-op-graph-print-attrs and --view-op-graph-print-result-types need --view-op-graph")
        flags = " --allow-unregistered-dialect" if args.allow_unregistered_dialect else ""
        self.inst = Instrumentation(
            print_before=set(args.print_ir_before),
            print_after=set(args.print_ir_after),
            print_before_all=args.print_ir_before_all,
            print_after_all=args.print_ir_after_all,
            print_after_change=args.print_ir_after_change,
            print_after_failure=args.print_ir_after_failure,
            print_between_passes=args.print_between_passes,
            tree_dir=args.print_ir_tree_dir,
            verify_each=args.verify_each,
            verify=not args.disable_verify,
            generic=args.print_op_generic,
            reproducer=args.crash_reproducer,
            reproducer_flags=flags,
        )

    def parse_chunk(self, chunk: IO[bytes], file_extension: str, start_offset: int = 0) -> ModuleOp | None:
        if file_extension != "mlir":
            return super().parse_chunk(chunk, file_extension, start_offset)
        parser = LocatingParser(self.ctx, chunk.read().decode(), self.get_input_name(), self.locations, start_offset)
        return parser.parse_module(not self.args.no_implicit_module)

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.args.mcpu is not None:
            set_target(prog, self.args.mcpu)
        if not self.args.disable_verify:
            try:
                prog.verify()
            except VerifyException as error:
                raise CompileError(verify_error(prog, error, self.locations)) from None
        run_passes(prog, self.entries, self.ctx, self.inst, self.locations)

    def run(self) -> int:  # pyright: ignore[reportIncompatibleMethodOverride]
        """Parse, transform and print every chunk; report diagnostics (or check them); the exit status."""
        chunks, file_extension = self.prepare_input()
        output = self.prepare_output()
        failed = False
        try:
            for index, (chunk, offset) in enumerate(chunks):
                if index > 0:
                    output.write("// -----\n")
                data = chunk.read()
                chunk.close()
                diagnostics = self._process_chunk(data, file_extension, offset, output)
                if self.args.verify_diagnostics:
                    expected = expectations(data.decode(errors="replace"), offset)
                    problems = check_expectations(self.get_input_name(), expected, diagnostics)
                else:
                    problems = [str(diagnostic) for diagnostic in diagnostics]
                for problem in problems:
                    print(f"mini-opt: error: {problem}", file=sys.stderr)
                failed = failed or bool(problems)
        except ShrinkException:
            print("Success, can shrink")
            return 0
        finally:
            if output is not sys.stdout:
                output.close()
        if self.graphs:
            with open(self.args.view_op_graph, "w") as dot:
                dot.write("".join(self.graphs))
        if self.args.mlir_timing or self.args.time_passes:
            write_timing_report(self.inst, self.args.mlir_timing, sys.stderr)
        if self.args.shrink:
            print("Failure, can't shrink")
        return 1 if failed or self.args.shrink else 0

    def _parse(self, data: bytes, file_extension: str, offset: int) -> ModuleOp | None:
        """`parse_chunk`, with a crash of xDSL's parser on malformed text (`array<i0>` divides by the element size
        0) reported as a diagnostic, not a traceback. ValueErrors (the importer's refusals) keep their own report."""
        try:
            return self.parse_chunk(BytesIO(data), file_extension, offset)
        except (ArithmeticError, IndexError, AssertionError) as error:
            raise DiagnosticException(f"could not parse the input: {type(error).__name__}: {error}") from error

    def _write_output(self, module: ModuleOp, output: IO[str]) -> None:
        """The resulting program, or with `--view-op-graph` its DOT (instead, or also into the file given)."""
        if self.args.view_op_graph is None:
            output.write(self.output_resulting_program(module))
            return
        from minimlc.tools.op_graph_dot import DotOptions, op_graph_dot

        options = DotOptions(
            self.args.view_op_graph_max_label_len,
            self.args.view_op_graph_print_attrs,
            self.args.view_op_graph_print_result_types,
        )
        dot = op_graph_dot(module, options)
        if self.args.view_op_graph == "-":
            output.write(dot)
        else:
            output.write(self.output_resulting_program(module))
            self.graphs.append(dot)

    def _process_chunk(self, data: bytes, file_extension: str, offset: int, output: IO[str]) -> list[Diagnostic]:
        """Parse, transform and print one chunk; the diagnostics it raised (at most one: the first stops it)."""
        start = time.perf_counter()
        try:
            module = self._parse(data, file_extension, offset)
            self.inst.timings.append(("Parser", time.perf_counter() - start, None))
            if module is None:
                return []
            self.apply_passes(module)
            start = time.perf_counter()
            self._write_output(module, output)
            output.flush()
            self.inst.timings.append(("Output", time.perf_counter() - start, None))
        except ParseError as error:
            error.span = dataclasses.replace(error.span, line_offset=offset)
            if self.args.parsing_diagnostics:
                print(error)
                return []
            return [from_parse_error(error)]
        except CompileError as error:
            return [error.diagnostic]
        except DiagnosticException as error:
            return [Diagnostic(str(error))]
        return []


def _plugin_arguments(parser: argparse.ArgumentParser | None = None) -> argparse.ArgumentParser:
    parser = parser or argparse.ArgumentParser(add_help=False)
    parser.add_argument(
        "--load-plugin",
        action="append",
        default=[],
        metavar="FILE.py|MODULE",
        help="load a plugin's dialects, passes and pipelines from a file or module defining plugin() (repeatable)",
    )
    return parser


class _ListPassesAction(argparse.Action):
    def __call__(self, parser: argparse.ArgumentParser, *args: Any, **kwargs: Any) -> None:
        print(describe_passes())
        parser.exit()


def describe_passes() -> str:
    """A table of every pass (name, description, options) and named pipeline."""
    known = registry()
    lines = ["Passes:"]
    for name, factory in sorted(known.passes.items()):
        pass_class = factory()
        plugin = known.plugin_of("pass", name)
        lines.append(f"  {name:<28} {_summary(pass_class)}" + (f" [from plugin {plugin}]" if plugin else ""))
        for option, (kind, default) in _options(pass_class).items():
            lines.append(f"  {'':<28}   {option}: {kind} = {default}")
    lines.append("Pipelines:")
    for name, (description, passes) in known.pipelines.items():
        plugin = known.plugin_of("pipeline", name)
        lines.append(f"  {name:<28} {description}" + (f" [from plugin {plugin}]" if plugin else ""))
        lines.append(f"  {'':<28}   = {passes}")
    return "\n".join(lines)


def _summary(pass_class: type[ModulePass]) -> str:
    if pass_class.name in UPSTREAM_PASSES:
        return UPSTREAM_PASSES[pass_class.name]
    paragraph = (pass_class.__doc__ or "").strip().split("\n\n")[0]
    return " ".join(paragraph.split()) or "(no description)"


def _options(pass_class: type[ModulePass]) -> dict[str, tuple[str, str]]:
    import dataclasses

    if not dataclasses.is_dataclass(pass_class):
        return {}
    options: dict[str, tuple[str, str]] = {}
    for field in dataclasses.fields(pass_class):
        kind = getattr(field.type, "__name__", str(field.type))
        default = "required" if field.default is dataclasses.MISSING else repr(field.default)
        options[field.name] = (kind, default)
    return options


def main(argv: Sequence[str] | None = None) -> int:
    """Entry point of the `mini-opt` console script: the exit status, and no traceback for a user's mistake."""
    try:
        with fewer_collections():
            return MiniOptMain(args=_replay_reproducer(list(sys.argv[1:] if argv is None else argv))).run()
    except (ArgSpecParseError, DiagnosticException, ParseError, ValueError) as error:
        print(f"mini-opt: error: {error}", file=sys.stderr)
    except BrokenPipeError:
        # The reader (`| head -1`) has gone: stop quietly, and keep Python from complaining at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        return 0
    except OSError as error:
        print(f"mini-opt: error: {error.filename or ''}: {error.strerror or error}", file=sys.stderr)
    return 1


def _replay_reproducer(argv: list[str]) -> list[str]:
    """`--run-reproducer FILE` as the arguments the reproducer recorded, with FILE as the input."""
    for index, arg in enumerate(argv):
        if arg.startswith("--run-reproducer"):
            inline = arg.partition("=")[2]
            path = inline or (argv[index + 1] if index + 1 < len(argv) else "")
            rest = argv[:index] + argv[index + (1 if inline else 2) :]
            return [path, *read_reproducer(path), *rest]
    return argv


if __name__ == "__main__":
    sys.exit(main())
