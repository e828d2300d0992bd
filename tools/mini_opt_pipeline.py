"""`mini-opt`'s pass lists: `-p a,b{x=1}` and MLIR's `--pass-pipeline='builtin.module(a,b{x=1})'`, named pipelines
expanded with their name kept (for the timing tree), every name and option checked with a "did you mean" hint."""

from __future__ import annotations

import dataclasses
import difflib
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass

from xdsl.passes import ModulePass

from minimlc.lowering.pipeline import PassItem, expand_pipelines, split_pass_list
from minimlc.lowering.plugins import registry


class PipelineError(ValueError):
    """A pass list that names an unknown pass, pipeline or option, or uses syntax mini-opt does not accept."""


@dataclass(frozen=True)
class PassEntry:
    """One pass to run: its item text (`loop-split{factor=4}`), the pass, and the named pipeline it came from."""

    item: str
    pass_: ModulePass
    pipeline: str | None
    group: int
    """Which top-level item of the pass list it came from (a pipeline's passes share one)."""

    @property
    def name(self) -> str:
        return self.pass_.name


def from_pass_pipeline(text: str) -> str:
    """MLIR's `builtin.module(a,b{x=1})` as a `-p` list `a,b{x=1}`; a nested `func.func(...)` is refused."""
    text = text.strip()
    match = re.fullmatch(r"(?:builtin\.)?module\s*\((.*)\)", text, flags=re.DOTALL)
    body = match.group(1) if match else text
    if nested := re.search(r"([\w.-]+)\s*\(", re.sub(r"\{[^}]*\}", "", body)):
        raise PipelineError(
            f"--pass-pipeline: '{nested.group(1)}(...)' nesting is not supported: minimlc's passes are module passes, "
            f"list them directly in 'builtin.module(...)'"
        )
    return body.strip()


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest known name, or nothing."""
    close = difflib.get_close_matches(name, list(known), n=1, cutoff=0.6)
    return f"; did you mean '{close[0]}'?" if close else ""


def parse_pass_list(spec: str, passes: dict[str, Callable[[], type[ModulePass]]]) -> list[PassEntry]:
    """The passes of a `-p` list, named pipelines (ours and the plugins') expanded; raises PipelineError for anything
    unknown:

        parse_pass_list("lower-to-te,cse", registry().passes)   # graph-to-te (group 0, lower-to-te), cse (group 1)
    """
    pipelines = registry().pipelines
    entries: list[PassEntry] = []
    for group, item in enumerate(split_pass_list(spec)):
        name = item.split("{")[0].strip()
        if name in pipelines:
            if "{" in item:
                raise PipelineError(f"pipeline '{name}' takes no options (its passes: {pipelines[name][1]})")
            try:
                inner_items = split_pass_list(expand_pipelines(name))
            except ValueError as error:
                raise PipelineError(str(error)) from None
            entries += [_entry(inner, passes, name, group) for inner in inner_items]
        elif name in passes:
            entries.append(_entry(item, passes, None, group))
        else:
            hint = did_you_mean(name, [*passes, *pipelines])
            raise PipelineError(f"unknown pass or pipeline '{name}'{hint} (mini-opt --list-passes lists them)")
    return entries


def _entry(item: str, passes: dict[str, Callable[[], type[ModulePass]]], pipeline: str | None, group: int) -> PassEntry:
    try:
        spec = PassItem.parse(item).arg_spec()
    except ValueError as error:
        raise PipelineError(f"cannot parse pass '{item}': {error}") from None
    pass_class = passes[spec.name]()
    options = [field.name for field in dataclasses.fields(pass_class)] if dataclasses.is_dataclass(pass_class) else []
    for option in spec.normalize_parameter_names().parameters:
        if option not in options:
            known = ", ".join(options) or "none"
            hint = did_you_mean(option, options)
            raise PipelineError(f"pass '{spec.name}' has no option '{option}'{hint} (its options: {known})")
    try:
        return PassEntry(item, pass_class.from_pass_spec(spec), pipeline, group)
    except ValueError as error:
        raise PipelineError(f"pass '{spec.name}': {error}") from None
