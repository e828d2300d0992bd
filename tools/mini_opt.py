"""`mini-opt`: minimlc's IR driver, a thin subclass of xDSL's `xdsl-opt`.

It registers our dialects, passes, named pipelines (expanded before parsing so `--time-passes` and
`--print-between-passes` see every inner pass), the `llvm` target (LLVM IR text) and an `.onnx` frontend:

    mini-opt model.mlir -p lower-to-llvm -t llvm
    mini-opt model.onnx -p lower-to-loop
    mini-opt --list-passes
    mini-opt toy.mlir --load-plugin my_toy.py -p toy-to-graph   # a plugin's dialects and passes (repeatable)
    mini-opt kernel.mlir --mcpu x86-64-v3 -p default-schedule   # schedule for AVX2, whatever the host

`--mcpu NAME` (llc's spelling; xdsl-opt's `-t/--target` already names the output format) pins the module's target
CPU (`minimlc.target`, see `minimlc.lowering.target`) before the passes run.
"""

from __future__ import annotations

import argparse
import sys
from collections.abc import Sequence
from typing import IO, Any

from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.exceptions import ArgSpecParseError, DiagnosticException, ParseError
from xdsl.xdsl_opt_main import xDSLOptMain

from minimlc.lowering import UPSTREAM_PASSES
from minimlc.lowering.pipeline import expand_pipelines
from minimlc.lowering.plugins import load_plugin, registry
from minimlc.lowering.target import known_targets, set_target, target_from_name


class MiniOptMain(xDSLOptMain):
    """xdsl-opt with minimlc's dialects, passes, pipelines, targets and frontends, and those of its plugins."""

    def __init__(self, description: str = "minimlc's IR driver", args: Sequence[str] | None = None):
        # Plugins must be loaded before xdsl-opt registers dialects and passes, which is before it parses arguments.
        plugins, _ = _plugin_arguments().parse_known_args(args)
        for spec in plugins.load_plugin:
            load_plugin(spec)
        super().__init__(description, args)

    def register_all_dialects(self) -> None:
        for name, factory in registry().dialects.items():
            self.ctx.register_dialect(name, factory)

    def register_all_passes(self) -> None:
        for name, factory in registry().passes.items():
            self.register_pass(name, factory)

    def register_all_targets(self) -> None:
        super().register_all_targets()

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
            type=_target_name,
            help=f"target CPU for the schedules and code generation (default: the module's, else the host): "
            f"{', '.join(known_targets())}",
        )

    def apply_passes(self, prog: ModuleOp) -> None:
        if self.args.mcpu is not None:
            set_target(prog, self.args.mcpu)
        super().apply_passes(prog)

    def setup_pipeline(self) -> None:
        self.args.passes = expand_pipelines(self.args.passes)
        super().setup_pipeline()


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


def _target_name(name: str) -> str:
    try:
        target_from_name(name)
    except ValueError as error:
        raise argparse.ArgumentTypeError(str(error)) from None
    return name


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
    """Entry point of the `mini-opt` console script."""
    try:
        MiniOptMain(args=argv).run()
    except (ArgSpecParseError, DiagnosticException, ParseError, ValueError) as error:
        print(f"mini-opt: error: {error}", file=sys.stderr)
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
