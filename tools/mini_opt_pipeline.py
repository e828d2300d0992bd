"""`mini-opt`'s pass lists: `-p a,b{x=1}` and MLIR's `--pass-pipeline='builtin.module(a,b{x=1})'`, named pipelines
expanded with their name kept (for the timing tree), every name and option checked with a "did you mean" hint."""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from types import NoneType, UnionType
from typing import Any, Union, get_args, get_origin, get_type_hints

from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ParameterType
from xdsl.utils.hints import isa

from minimlc.lowering.pipeline import PassItem, expand_pipelines, quoted, split_pass_list
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


_OPTIONS = re.compile(r'\{(?:"(?:\\.|[^"\\])*"|[^}"])*\}')
"""A pass's options, `{x=1 path="a(b)"}`: masked before looking at a pipeline's parentheses."""


def from_pass_pipeline(text: str) -> str:
    """MLIR's `builtin.module(a,b{x=1})` as a `-p` list `a,b{x=1}`; a nested `func.func(...)` is refused."""
    masked = _OPTIONS.sub(lambda match: " " * len(match.group()), text)
    _check_parentheses(masked)
    match = re.fullmatch(r"\s*(?:builtin\.)?module\s*\((.*)\)\s*", masked, flags=re.DOTALL)
    start, end = match.span(1) if match else (0, len(text))
    if nested := re.search(r"([\w.-]+)\s*\(", masked[start:end]):
        raise PipelineError(
            f"--pass-pipeline: '{nested.group(1)}(...)' nesting is not supported: minimlc's passes are module passes, "
            f"list them directly in 'builtin.module(...)'"
        )
    return text[start:end].strip()


def _check_parentheses(masked: str) -> None:
    """Raise PipelineError for a ')' that closes nothing or a '(' that is never closed (columns from 1)."""
    opened: list[int] = []
    for pos, char in enumerate(masked):
        if char == "(":
            opened.append(pos)
        elif char == ")" and not opened:
            raise PipelineError(f"--pass-pipeline: unexpected ')' at column {pos + 1}")
        elif char == ")":
            opened.pop()
    if opened:
        name = re.split(r"[^\w.-]", masked[: opened[-1]].rstrip())[-1]
        raise PipelineError(f"--pass-pipeline: missing ')' to close '{name}(' opened at column {opened[-1] + 1}")


def did_you_mean(name: str, known: Iterable[str]) -> str:
    """`; did you mean 'x'?` for the closest known name, or nothing."""
    import difflib

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
    item, parsed = _parse_item(item)
    spec = parsed.arg_spec()
    pass_class = passes[spec.name]()
    _check_options(parsed, pass_class)
    try:
        return PassEntry(item, pass_class.from_pass_spec(spec), pipeline, group)
    except ValueError as error:
        raise PipelineError(f"pass '{spec.name}': {error}") from None


def _check_options(parsed: PassItem, pass_class: type[ModulePass]) -> None:
    """Raise PipelineError for an option the pass lacks or a value of the wrong type, naming pass, option and type."""
    is_dataclass = dataclasses.is_dataclass(pass_class)
    option_types = get_type_hints(pass_class) if is_dataclass else {}
    options = [field.name for field in dataclasses.fields(pass_class)] if is_dataclass else []
    for key, values in parsed.arg_spec().parameters.items():
        option = key.replace("-", "_")
        if option not in options:
            known = ", ".join(options) or "none"
            hint = did_you_mean(option, options)
            raise PipelineError(f"pass '{parsed.name}' has no option '{option}'{hint} (its options: {known})")
        if not _accepts(option_types[option], values):
            wanted = describe_type(option_types[option])
            got = f"'{parsed.option(key)}'" if parsed.option(key) else "no value"
            raise PipelineError(f"pass '{parsed.name}': option '{key}' takes {wanted}, got {got}")


def _parse_item(item: str) -> tuple[str, PassItem]:
    """The item's text and parse; a bare value xDSL cannot read (`tuning-db=dir/x.jsonl`) is read as a string, as
    mlir-opt reads it, and comes back quoted."""
    try:
        return item, PassItem.parse(item)
    except ValueError as error:
        try:
            requoted = _quote_bare_values(item)
            return requoted, PassItem.parse(requoted)
        except ValueError:
            raise PipelineError(f"cannot parse pass '{item}': {error}") from None


_OPTION_ELEMENT = re.compile(r'(?:"(?:\\.|[^"\\])*"|[^\s"]|")+')
"""One `key=value` of a pass's options: up to a space outside quoted strings."""
_XDSL_BARE_VALUE = re.compile(r"[-+]?[0-9]+(?:\.[0-9]*(?:[eE][-+]?[0-9]+)?)?|[A-Za-z0-9_-]+|\".*\"", flags=re.DOTALL)
"""A value xDSL's pass-option lexer reads as one token: a number, an identifier or a quoted string."""


def _quote_bare_values(item: str) -> str:
    """`p{a=dir/x.jsonl b=1,x.y}` as `p{a="dir/x.jsonl" b=1,"x.y"}`: each list element xDSL cannot read, quoted."""
    name, brace, body = item.partition("{")
    if not brace or not body.endswith("}"):
        return item
    elements: list[str] = []
    for element in _OPTION_ELEMENT.findall(body[:-1]):
        key, equals, value = element.partition("=")
        parts = [part if _XDSL_BARE_VALUE.fullmatch(part) else quoted(part) for part in split_pass_list(value)]
        elements.append(key + equals + ",".join(parts))
    return f"{name}{{{' '.join(elements)}}}"


def _accepts(option_type: Any, values: tuple[ParameterType, ...]) -> bool:
    """Whether xDSL's `from_pass_spec` takes `values` for an option of this type."""
    if not values and get_origin(option_type) in (Union, UnionType):
        return NoneType in get_args(option_type)
    return (len(values) == 1 and isa(values[0], option_type)) or isa(values, option_type)


_TYPE_WORDS = {int: ("an integer", "integers"), float: ("a number", "numbers"), bool: ("true or false", "booleans")}


def describe_type(option_type: Any) -> str:
    """An option's type in words: `int` -> "an integer", `tuple[int, ...]` -> "a comma-separated list of integers"."""
    origin, args = get_origin(option_type), [arg for arg in get_args(option_type) if arg not in (NoneType, Ellipsis)]
    if origin in (Union, UnionType):
        return " or ".join(describe_type(arg) for arg in args)
    if origin is tuple:
        return "a comma-separated list of " + " or ".join(_TYPE_WORDS.get(arg, ("", "strings"))[1] for arg in args)
    return _TYPE_WORDS.get(option_type, ("a string", ""))[0]
