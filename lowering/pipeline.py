"""The pipeline: opt levels as named pass lists, the stages a pipeline can stop at, the one builder and the one runner.

Everything that lowers IR goes through `run_pipeline` or `run_passes`: `InferenceSession` (via the compile driver),
`minimlc compile --emit LEVEL`, the schedule rules' trial lowering and the benchmarks; `mini-opt` expands the same
named pipelines before xDSL parses its pass list, so `--print-between-passes` sees every inner pass. A pipeline is
an opt level (0-3), a named pipeline (`lower-to-llvm-O2`), a comma-separated pass list or a list of pass items:

    run_pipeline(module, 3, stop_after="loop")                       # graph -> loop nests, as O3 builds them
    run_pipeline(module, "graph-to-te,te-inline,te-to-loop")
    run_pipeline(module, ["graph-to-te", "te-to-loop", "loop-split{kernel=k loop=i factor=4}"])
    run_pipeline(module, build_pipeline(2, extra_passes={"graph": ["toy-relu-to-clip"]}))   # O2 + a plugin's pass

Pipelines are built, never edited as text: `build_pipeline` turns any of these forms into `PassItem`s (a pass name
and its options) with extra passes, a tuning database or profiling added, in any combination; `str(item)` is the
text `mini-opt -p` reads and prints.

Passes, dialects and pipelines come from `minimlc.lowering.plugins.registry()`: minimlc's own and its plugins'.
"""

from __future__ import annotations

import functools
import os
from collections.abc import Callable, Iterable, Mapping, Sequence
from dataclasses import dataclass, replace

from xdsl.context import Context
from xdsl.dialects.builtin import ModuleOp
from xdsl.passes import ModulePass
from xdsl.utils.arg_spec import ArgSpec, PipelineLexer, SpecTokenKind, parse_pipeline, parse_spec
from xdsl.utils.exceptions import ArgSpecParseError

from minimlc.lowering.plugins import registry
from minimlc.lowering.target import Target, set_target

_TO_LLVM = "convert-scf-to-cf,convert-to-llvm,reconcile-unrealized-casts"
_GRAPH_CLEANUPS = "graph-simplify,cse,dce"
_SCHEDULED = (
    "graph-split-grouped-conv,graph-pad-conv,graph-pad-max-pool,graph-to-te,te-conv-im2col,te-conv-layout,"
    "te-channels-last,te-conv-winograd,"
    "te-inline,te-expand-math,te-clamped-casts,"
    "te-to-loop,{hoist}default-schedule,loop-fuse-kernels,loop-plan-memory,loop-generalize-kernels,loop-outline-parallel,"
    "loop-merge-functions,loop-mark-load-time,loop-to-scf,"
    + _TO_LLVM
)
OPT_LEVELS: dict[int, str] = {
    0: f"graph-to-te,te-to-loop,loop-outline-parallel,loop-to-scf,{_TO_LLVM}",
    1: f"{_GRAPH_CLEANUPS},graph-to-te,te-to-loop,loop-plan-memory,loop-outline-parallel,loop-to-scf,{_TO_LLVM}",
    2: "graph-simplify,graph-pad-attention-keys,graph-fuse-attention,cse,dce," + _SCHEDULED.format(hoist=""),
    3: "graph-simplify,graph-fold-batch-norm,graph-pad-attention-keys,graph-fuse-attention,cse,dce,"
    + "graph-pad-conv-channels,graph-pad-gemm-columns,"
    + _SCHEDULED.format(hoist="loop-hoist-constants,"),
}
"""Optimisation level -> the pass list that compiles a graph-level module to the llvm dialect at that level.

O0 lowers op by op: one kernel per graph op, loops as te-to-loop builds them, one allocation per intermediate. O1
adds the graph cleanups (no-op reshapes and transposes, common subexpressions, dead ops and unused weights) and
memory planning (intermediates share one arena by liveness; it runs after any schedule and before outlining). O2 adds
fusion (attention keys padded to whole vectors, attention chains into one op where that beats the GEMMs, te-inline;
loop-fuse-kernels after the schedules) and the default schedules, with convolutions padded and made channels-last for
them. O3 adds the
whole-model constant work: batch norms folded into the preceding conv/gemm/matmul,
and every computation on weights alone hoisted to load time (the two go together: without hoisting, folded weights
would be recomputed on every call), and the output channels of convolutions and columns of Gemms and MatMuls with a
weight B padded to a multiple of the vector width (zero weight rows or columns, also hoisted).

LLVM optimises the code of O1-O3 with its O2 pipeline and not at all at O0 (`llvm_opt_level`).
"""


def llvm_opt_level(opt_level: int) -> int:
    """LLVM's optimisation level (module passes and code generation) for minimlc's `opt_level`: none at O0, as
    clang's `-O0` (the native code follows the IR one to one, and compiles two to three times faster), O2 above.

    Not O3: minimlc's schedules already unroll, vectorise and place the hot loops, and what O3 adds to O2 (larger
    unrolling and inlining thresholds, non-trivial unswitching, argument promotion) made a fifth more object code
    and took 15-20% more LLVM time (light ResNet-50: 3.6 -> 2.9 CPU s; Inception v2 6.6-7.3 -> 5.8-6.1) for run
    times within 3% either way on the bench models, float and quantized, and the weight-only GEMVs of decoding
    (docs/measurements.md)."""
    return 0 if opt_level == 0 else 2


STAGES: dict[str, tuple[str, bool] | None] = {
    "graph": ("graph-to-te", False),
    "te": ("te-to-loop", False),
    "loop": ("te-to-loop", True),
    "schedule": ("default-schedule", False),
    "program": ("loop-to-scf", False),
    "scf": ("loop-to-scf", True),
    "llvm": None,
}
"""Stage name -> where it ends in a pipeline: before (False) or after (True) that pass; None: the pipeline's end.
`schedule` is the loop IR default-schedule receives, the input of `--emit schedule` and `--emit space`; `program` the
loop IR after the whole-program passes (fusion, memory planning, outlining, load-time marking), where every pass
after it works function by function and the compile driver splits the module for parallel code generation
(`driver/codegen.py`)."""


OptionValue = str | int | bool
"""An option's value for `PassItem.with_options`: text as written (`4`, `1,2`, `"a string"`: see `quoted`), an int,
or a bool (`true`, `false`)."""


@dataclass(frozen=True)
class PassItem:
    """One pass of a pipeline and its options, in order, each value as written; `str()` is the text `mini-opt -p`
    reads (`name` or `name{key=value key2=value2}`, a bare key for an option without a value):

        item = PassItem.parse('default-schedule{tuning-db="tuned.jsonl"}')
        item.option("tuning-db")                  # '"tuned.jsonl"'
        str(item.with_options(annotate=True))     # 'default-schedule{annotate=true tuning-db="tuned.jsonl"}'
    """

    name: str
    options: tuple[tuple[str, str], ...] = ()

    def __str__(self) -> str:
        if not self.options:
            return self.name
        return f"{self.name}{{{' '.join(f'{key}={value}' if value else key for key, value in self.options)}}}"

    @classmethod
    def parse(cls, text: str) -> PassItem:
        """The item `text` writes, as xDSL reads pass lists; ValueError (xDSL's message) if it is not one pass."""
        text = text.strip()
        try:
            count = len(list(parse_pipeline(text)))
        except ArgSpecParseError as error:
            raise ValueError(str(error)) from None
        if count != 1:
            raise ValueError(f"expected one pass, got {count}: '{text}'")
        name, _, body = text.partition("{")
        elements, start, lexer = [], 0, PipelineLexer(body[:-1])
        while (token := lexer.lex()).kind is not SpecTokenKind.EOF:
            if token.kind is SpecTokenKind.SPACE:  # outside quoted strings: the lexer reads those whole
                elements.append(body[start : token.span.start])
                start = token.span.end
        elements.append(body[start:-1])
        return cls(name, tuple((key, value) for key, _, value in (e.partition("=") for e in elements if e)))

    def option(self, key: str) -> str | None:
        """The value of option `key` as written (`tuning_db` and `tuning-db` are one option), or None if unset."""
        return next((value for k, value in self.options if _key(k) == _key(key)), None)

    def with_options(self, **options: OptionValue) -> PassItem:
        """This item with `options` set (`tuning_db=` is `tuning-db`): a set option keeps its place, a new one goes
        before the first whose key sorts after its own, so that setting options in any order gives the same item."""
        result = list(self.options)
        for key, value in options.items():
            text = str(value).lower() if isinstance(value, bool) else str(value)
            keys = [_key(k) for k, _ in result]
            if _key(key) in keys:
                position = keys.index(_key(key))
                result[position] = (result[position][0], text)
            else:
                result.insert(next((n for n, k in enumerate(keys) if k > _key(key)), len(keys)), (_key(key), text))
        return replace(self, options=tuple(result))

    def arg_spec(self) -> ArgSpec:
        """The item as xDSL's `ArgSpec` (values decoded: `"a b"` -> `a b`), which configures a pass."""
        return parse_spec(str(self))


def _key(key: str) -> str:
    return key.replace("_", "-")


def quoted(text: str) -> str:
    r"""`text` as an option's string value, which xDSL reads back as `text`: `a "b"` -> `"a \"b\""`."""
    return '"' + text.replace("\\", "\\\\").replace('"', '\\"') + '"'


def split_pass_list(spec: str) -> list[str]:
    """Split `a,b{x=1,2 y="p,q"},c` at the commas that are not inside braces or quoted strings."""
    items: list[str] = []
    depth = 0
    start = 0
    quote = escaped = False
    for pos, char in enumerate(spec):
        if quote:
            quote, escaped = (escaped or char != '"'), (not escaped and char == "\\")
        elif char == '"':
            quote = True
        elif char == "{":
            depth += 1
        elif char == "}":
            depth -= 1
        elif char == "," and depth == 0:
            items.append(spec[start:pos])
            start = pos + 1
    items.append(spec[start:])
    return [item.strip() for item in items if item.strip()]


def _stage_end(names: Sequence[str], stage: str | None, default: int) -> int:
    """Where `stage` ends in a pipeline of the passes `names` (see `STAGES`); `default` if `stage` is None."""
    if stage is None:
        return default
    if stage not in STAGES:
        raise ValueError(f"unknown stage '{stage}'; stages: {', '.join(STAGES)}")
    end = STAGES[stage]
    if end is None:
        return len(names)
    name, after = end
    if name not in names:
        raise ValueError(f"the pipeline does not run {name}, so it cannot stop at stage '{stage}'")
    return list(names).index(name) + after


def _names(passes: Sequence[str]) -> list[str]:
    return [item.split("{", 1)[0].strip() for item in passes]


def _level_until(level: int, stage: str) -> str:
    """The passes of an opt level up to the end of `stage`, as a comma list (for the named pipelines below)."""
    passes = split_pass_list(OPT_LEVELS[level])
    return ",".join(passes[: _stage_end(_names(passes), stage, len(passes))])


def _level_with(level: int, options: Mapping[str, Mapping[str, str]]) -> str:
    """An opt level's passes with `options[pass]` set on each pass named there, as a comma list."""
    items = (PassItem.parse(item) for item in split_pass_list(OPT_LEVELS[level]))
    return ",".join(str(item.with_options(**options.get(item.name, {}))) for item in items)


PIPELINES: dict[str, tuple[str, str]] = {
    "lower-to-te": ("graph dialect -> te compute definitions", "graph-to-te"),
    "lower-to-loop": ("graph or te -> loop nests over buffers", "graph-to-te,te-inline,te-to-loop"),
    "lower-to-schedule": (
        "graph -> the loop nests default-schedule schedules (as in lower-to-llvm, before default-schedule)",
        _level_until(3, "schedule"),
    ),
    "lower-to-scf": (
        "graph, te or loop -> scf/memref/arith/math/func, as lower-to-llvm",
        _level_until(3, "scf"),
    ),
    "lower-to-llvm": (
        "any minimlc level -> llvm dialect, fully optimised (= lower-to-llvm-O3; print LLVM IR with -t llvm)",
        OPT_LEVELS[3],
    ),
    "lower-to-llvm-O0": ("-> llvm dialect, no optimisation: one kernel per graph op, unscheduled", OPT_LEVELS[0]),
    "lower-to-llvm-O1": (
        "-> llvm dialect, O0 + graph cleanups (simplify, cse, dce) and memory planning",
        OPT_LEVELS[1],
    ),
    "lower-to-llvm-O2": (
        "-> llvm dialect, O1 + fusion (te-inline, loop-fuse-kernels) and default schedules",
        OPT_LEVELS[2],
    ),
    "lower-to-llvm-O3": (
        "-> llvm dialect, O2 + batch-norm folding and load-time evaluation of weight-only computations",
        OPT_LEVELS[3],
    ),
    "lower-to-llvm-conv-direct": (
        "as lower-to-llvm, every convolution with the direct schedule",
        _level_with(3, {"te-conv-im2col": {"algorithm": "direct"}, "te-conv-winograd": {"convolutions": "none"}}),
    ),
    "lower-to-llvm-conv-im2col": (
        "as lower-to-llvm, every convolution as im2col + GEMM",
        _level_with(3, {"te-conv-im2col": {"algorithm": "im2col"}}),
    ),
    "lower-to-llvm-conv-winograd": (
        "as lower-to-llvm, every stride-1 3x3 convolution stored channels-last with Winograd F(2x2, 3x3)",
        _level_with(3, {"te-conv-winograd": {"convolutions": "all"}}),
    ),
    "lower-to-llvm-unscheduled": (
        "as lower-to-llvm, but kernels keep the loops te-to-loop (or the user's schedule passes) gave them",
        "graph-to-te,te-inline,te-to-loop,loop-plan-memory,loop-outline-parallel,loop-to-scf,convert-scf-to-cf,"
        "convert-to-llvm,reconcile-unrealized-casts",
    ),
}
"""Pipeline name -> (one-line description, comma-separated pass list)."""


def expand_pipelines(spec: str) -> str:
    """Replace every named pipeline in a pass list by its passes, recursively (a plugin's pipeline may name ours):
    `lower-to-te,cse` -> `graph-to-te,cse`."""
    pipelines = registry().pipelines

    def expand(item: str, inside: tuple[str, ...]) -> list[str]:
        if item not in pipelines:
            return [item]
        if item in inside:
            raise ValueError(f"pipeline '{item}' names itself: {' -> '.join((*inside, item))}")
        return [inner for part in split_pass_list(pipelines[item][1]) for inner in expand(part, (*inside, item))]

    return ",".join(inner for item in split_pass_list(spec) for inner in expand(item, ()))


def opt_level_pipeline(opt_level: int) -> str:
    """The named pipeline of an optimisation level (0-3): `3` -> `lower-to-llvm-O3`."""
    if isinstance(opt_level, bool) or not isinstance(opt_level, int) or opt_level not in OPT_LEVELS:
        allowed = ", ".join(str(level) for level in OPT_LEVELS)
        raise ValueError(f"opt_level must be one of {allowed}, got {opt_level!r}")
    return f"lower-to-llvm-O{opt_level}"


Pipeline = int | str | Sequence[str | PassItem]
"""An opt level, a named pipeline, a comma-separated pass list, or a list of pass items (text or `PassItem`)."""


def pipeline_passes(pipeline: Pipeline) -> list[str]:
    """The pass items of `pipeline` as text, named pipelines expanded: `2` -> `["graph-simplify", "cse", ...]`."""
    if isinstance(pipeline, int):
        pipeline = opt_level_pipeline(pipeline)
    entries = [pipeline] if isinstance(pipeline, str) else pipeline
    return [item for entry in entries for item in split_pass_list(expand_pipelines(str(entry)))]


def stage_passes(pipeline: Pipeline, stop_after: str | None = None, start_after: str | None = None) -> list[str]:
    """The passes of `pipeline` that lie after stage `start_after` (None: from the start) up to the end of stage
    `stop_after` (None: to the end); raises ValueError for an unknown stage or one the pipeline does not reach."""
    passes = pipeline_passes(pipeline)
    names = _names(passes)
    return passes[_stage_end(names, start_after, 0) : _stage_end(names, stop_after, len(passes))]


ExtraPasses = Mapping[str, str | Sequence[str]]
"""Passes to insert into a pipeline, by the stage they run after: `{"graph": ["toy-relu-to-clip"], "loop": "cse"}`
(a stage's passes as a list of pass items or one comma-separated pass list; named pipelines are expanded). Passes
after `program` run, in a compiled model, on each code-generation partition: a share of the functions, the others
declared."""


def build_pipeline(
    pipeline: Pipeline = 3,
    *,
    extra_passes: ExtraPasses | None = None,
    tuning_db: str | os.PathLike[str] | None = None,
    profiling: str | None = None,
    start_after: str | None = None,
    stop_after: str | None = None,
) -> tuple[PassItem, ...]:
    """The pass items of `pipeline` (default O3), named pipelines expanded, with:

    - `extra_passes[stage]` inserted where `stage` ends (see `STAGES`): after `graph` is before `graph-to-te`, after
      `loop` right after `te-to-loop`, after `llvm` the end;
    - `tuning_db` applied by `default-schedule` and by `te-conv-winograd` where its `convolutions` is not fixed
      (`default-schedule{tuning-db="PATH"}`);
    - `profiling`, the clock `loop-profile-calls` reads (`monotonic`, its default, or `thread-cpu`), timing every
      kernel call: that pass before `loop-outline-parallel`, and `default-schedule{annotate=true}`;

    then cut to the stages between `start_after` and `stop_after` (as `stage_passes`). Each edit leaves the others'
    passes as they are, so they give the same pipeline applied in any order:

        build_pipeline(3, extra_passes={"graph": "toy-relu-to-clip"}, tuning_db="tuned.jsonl", profiling="monotonic")

    Raises ValueError for an unknown stage, one the pipeline does not reach (`schedule` at O0/O1), an unknown pass
    among the extra ones, or a pass item that does not parse.
    """
    passes = tuple(PassItem.parse(item) for item in pipeline_passes(pipeline))
    if extra_passes:
        passes = _with_extra_passes(passes, extra_passes)
    if tuning_db is not None:
        passes = _with_tuning_db(passes, tuning_db)
    if profiling is not None:
        passes = _with_profiling(passes, profiling)
    names = [item.name for item in passes]
    return passes[_stage_end(names, start_after, 0) : _stage_end(names, stop_after, len(passes))]


def _with_extra_passes(passes: tuple[PassItem, ...], extra: ExtraPasses) -> tuple[PassItem, ...]:
    names = [item.name for item in passes]
    known = registry().passes
    inserts: dict[int, list[PassItem]] = {}
    for stage, items in extra.items():
        added = build_pipeline([items] if isinstance(items, str) else items)
        for item in added:
            if item.name not in known:
                raise ValueError(f"unknown pass '{item.name}' in the passes after stage '{stage}'")
        try:
            position = _stage_end(names, stage, len(passes))
        except ValueError as error:
            raise ValueError(f"cannot insert passes after stage '{stage}': {error}") from None
        inserts.setdefault(position, []).extend(added)
    return tuple(item for n in range(len(passes) + 1) for item in (*inserts.get(n, ()), *passes[n : n + 1]))


def _with_tuning_db(passes: tuple[PassItem, ...], path: str | os.PathLike[str]) -> tuple[PassItem, ...]:
    value = quoted(os.fspath(path))
    return tuple(
        item.with_options(tuning_db=value)
        if item.name == "default-schedule" or (item.name == "te-conv-winograd" and item.option("convolutions") is None)
        else item
        for item in passes
    )


def _with_profiling(passes: tuple[PassItem, ...], clock: str) -> tuple[PassItem, ...]:
    profile = PassItem("loop-profile-calls")
    profile = profile if clock == "monotonic" else profile.with_options(clock=clock)
    result: list[PassItem] = []
    for item in passes:
        if item.name == "loop-outline-parallel":
            result.append(profile)
        result.append(item.with_options(annotate=True) if item.name == "default-schedule" else item)
    return tuple(result)


def set_pass_options(passes: Iterable[PassItem], name: str, **options: OptionValue) -> tuple[PassItem, ...]:
    """`passes` with `options` set on every item of pass `name` (see `PassItem.with_options`): the passes of
    `lower-to-llvm-conv-winograd` are `set_pass_options(build_pipeline(3), "te-conv-winograd", convolutions="all")`."""
    return tuple(item.with_options(**options) if item.name == name else item for item in passes)


def tuning_db_of(pipeline: Pipeline) -> str | None:
    """The tuning database path `pipeline`'s `default-schedule` applies (see `build_pipeline`), or None."""
    for item in build_pipeline(pipeline):
        if item.name == "default-schedule" and item.option("tuning-db") is not None:
            return str(item.arg_spec().normalize_parameter_names().parameters["tuning_db"][0])
    return None


def make_context() -> Context:
    """A context with every dialect minimlc's pipeline uses, and those of its plugins."""
    ctx = Context()
    for name, factory in registry().dialects.items():
        ctx.register_dialect(name, factory)
    return ctx


def run_passes(
    module: ModuleOp,
    passes: Sequence[str | PassItem],
    ctx: Context | None = None,
    on_pass: Callable[[str], None] | None = None,
) -> None:
    """Apply pass items (`name` or `name{option=value ...}`, text or `PassItem`) to `module` in order, in memory;
    `on_pass(item)` (the item's text) is called after each (timings, progress). Raises ValueError naming an unknown
    pass."""
    ctx = ctx or make_context()
    for item in map(str, passes):
        configured_pass(item).apply(ctx, module)
        if on_pass is not None:
            on_pass(item)


def configured_pass(item: str) -> ModulePass:
    """The pass `item` (`name{option=value ...}`) configures: made once per item text where the pass is a frozen
    dataclass (every minimlc pass), else anew. Raises ValueError naming an unknown pass."""
    name = item.split("{", 1)[0].strip()
    known = registry().passes
    if name not in known:
        raise ValueError(f"unknown pass '{name}'")
    pass_class = known[name]()
    return _configured(pass_class, item) if is_frozen(pass_class) else _configure(pass_class, item)


def is_frozen(pass_class: type[ModulePass]) -> bool:
    """Whether `pass_class` is a frozen dataclass: its configured passes can be shared."""
    return getattr(getattr(pass_class, "__dataclass_params__", None), "frozen", False)


def _configure(pass_class: type[ModulePass], item: str) -> ModulePass:
    (spec,) = parse_pipeline(item)
    return pass_class.from_pass_spec(spec)


_configured = functools.cache(_configure)
"""A frozen pass configured once per item: parsing options (type hints per field) was 6% of a small model's compile."""


def run_pipeline(
    module: ModuleOp,
    pipeline: Pipeline = 3,
    *,
    stop_after: str | None = None,
    start_after: str | None = None,
    target: str | Target | None = None,
    ctx: Context | None = None,
    on_pass: Callable[[str], None] | None = None,
) -> None:
    """Lower `module` in place with `pipeline` (default: O3), between the stages `start_after` and `stop_after`
    (see `STAGES`); `target` pins the module's target CPU first (see `minimlc.lowering.target`)."""
    if target is not None:
        set_target(module, target)
    run_passes(module, stage_passes(pipeline, stop_after, start_after), ctx, on_pass)
