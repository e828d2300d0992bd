"""`default-schedule`: choose and apply a schedule to every kernel still as te-to-loop left it.

Kernels are recognised by structure, not by name, by the schedule rules tried in order (one file each):
`rows` (kernels of several stages over shared rows: softmax, normalisations), `weight_only` (matmuls reading packed
int8 / int4 weights), `gemm` (GEMM-like reductions), `conv` (direct convolutions; `integer_conv`, `bfloat16_conv`
on their products), `pool` (pooling and NCHW depthwise convolutions), `depthwise` (channels-last depthwise
convolutions), `shuffle` (channel shuffle copies), `concat` (no reduction, the innermost index compared with
constants: a concatenation along it) and `elementwise` (no reduction); a kernel with a loop of a run-time trip count
gets the `dynamic` rule alone (`dynamic.py`: main parts and remainders). The first rule
that matches a kernel gives its space of schedules (named knobs, see
`space.py`) and its default config, today's measured heuristics; the rule turns that config into a list of
primitive passes. Then `parallel` places one parallel loop per big enough nest (for kernels no rule matched too):

    func.func private @matmul_0(...) { loop.for "i0" ... { loop.for "i1" ... { loop.for "k2" ... } } }
    // gets
    loop-decompose-reduction{kernel=matmul_0},loop-split{kernel=matmul_0 loop=i1_init factor=16},...,
    loop-parallel{kernel=matmul_0 loop=i0_o}

The target (vector width and registers) is the module's (`minimlc.target`, else the host). Each schedule is a list of
primitive passes (`schedule_for` returns it as text, the trace `minimlc compile --emit schedule` prints); replaying that
list with `mini-opt -p` gives the same IR; `minimlc compile --emit space` prints each kernel's knobs
(`describe_spaces`). Each schedule is applied once; one that fails a step or that the vector code generator cannot lower
(a reduction across lanes, say) is undone (`apply_or_undo`), leaving the kernel to LLVM. Kernels with any non-serial
loop count as scheduled and are left alone, so the pass can run twice.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, fields, replace
from typing import Any

from xdsl.context import Context
from xdsl.dialects import func
from xdsl.dialects.builtin import ModuleOp, StringAttr
from xdsl.ir import Operation
from xdsl.passes import ModulePass
from xdsl.rewriter import Rewriter
from xdsl.utils.exceptions import DiagnosticException

from minimlc.dialects import loop
from minimlc.lowering.abi import SCHEDULE_ATTR, TASK_ATTR
from minimlc.lowering.generic.clone import clone_op
from minimlc.lowering.loop.analysis import call_sites, calls_fixed, find_kernel, loops_of
from minimlc.lowering.loop.expand import check_in_place, expand_loops
from minimlc.lowering.schedule.bfloat16_conv import BF16_CONV
from minimlc.lowering.schedule.bfloat16_gemm import BF16_GEMM
from minimlc.lowering.schedule.concat import CONCAT
from minimlc.lowering.schedule.conv import CONV
from minimlc.lowering.schedule.depthwise import DEPTHWISE
from minimlc.lowering.schedule.dynamic import DYNAMIC, has_dynamic_loop
from minimlc.lowering.schedule.elementwise import ELEMENTWISE
from minimlc.lowering.schedule.gemm import GEMM
from minimlc.lowering.schedule.integer_conv import INTEGER_CONV
from minimlc.lowering.schedule.integer_gemm import INTEGER_GEMM
from minimlc.lowering.schedule.kernel_analysis import kernels_of
from minimlc.lowering.schedule.parallel import GRAIN_KNOB, PARALLEL_KNOB, PARALLEL_KNOBS, TASKS_KNOB, parallel_steps
from minimlc.lowering.schedule.pool import POOL
from minimlc.lowering.schedule.rows import ROWS
from minimlc.lowering.schedule.shuffle import SHUFFLE
from minimlc.lowering.schedule.space import Config, Rule, Space
from minimlc.lowering.schedule.weight_only import WEIGHT_ONLY
from minimlc.lowering.strategy.tuning_db import TuningDatabase, kernel_key, kernel_structure, target_key
from minimlc.lowering.target import Target, copy_target, target_of

RULES: tuple[Rule, ...] = (
    *(ROWS, WEIGHT_ONLY, GEMM, INTEGER_GEMM, BF16_GEMM, CONV, INTEGER_CONV, BF16_CONV),
    *(POOL, DEPTHWISE, SHUFFLE, CONCAT, ELEMENTWISE),
)
"""The schedule rules, in the order they are tried: the first that matches a kernel schedules it."""


@dataclass(frozen=True)
class KernelSpace:
    """A kernel's schedule space: the rule that matched it (None: only parallel placement), its workload, and its
    knobs, the parallel placement's knobs last."""

    kernel: str
    rule: Rule | None
    workload: Any
    space: Space

    def steps(self, config: Config) -> list[str]:
        """The rule's primitive passes for `config` (checked against the space first; raises ConfigError)."""
        self.space.check(config, self.kernel)
        placement = {knob.name for knob in PARALLEL_KNOBS}
        rule_config = {name: value for name, value in config.items() if name not in placement}
        if self.rule is None or not rule_config:
            return []
        return self.rule.apply(self.workload, rule_config)


def kernel_space(module: ModuleOp, kernel: func.FuncOp, target: Target) -> KernelSpace | None:
    """The space of `kernel`'s schedules, or None if it is already scheduled, has no loops, or has a static loop that
    runs no iteration (a zero-size tensor's kernel: the rules' knobs divide extents, and there is nothing to speed up).
    A kernel with a loop of a run-time trip count gets the `dynamic` rule (the others read trip counts), after the
    weight-only rule, which reads only its static column and block loops (a decoder's rows are a run-time count)."""
    loops = loops_of(kernel)
    if not loops or any(lp.kind.data != "serial" for lp in loops):
        return None
    if any(not lp.is_dynamic and lp.upper.value.data <= lp.lower.value.data for lp in loops):
        return None
    name = kernel.sym_name.data
    for rule in (WEIGHT_ONLY, DYNAMIC) if has_dynamic_loop(kernel) else RULES:
        workload = rule.match(module, kernel, target)
        if workload is not None:
            knobs = rule.space(workload, target).knobs
            return KernelSpace(name, rule, workload, Space((*knobs, *PARALLEL_KNOBS)))
    return KernelSpace(name, None, None, Space(PARALLEL_KNOBS))


def schedule_for(module: ModuleOp, kernel: func.FuncOp, target: Target, config: Config | None = None) -> list[str]:
    """The primitive passes default-schedule applies to `kernel` before parallel placement, as pass-pipeline items
    (empty: leave it); `config` picks a point of its space (default: the default config; raises ConfigError for a
    value outside the space)."""
    space = kernel_space(module, kernel, target)
    if space is None:
        return []
    return space.steps(space.space.default() if config is None else config)


@dataclass(frozen=True)
class DefaultSchedulePass(ModulePass):
    """Apply the default schedule of its kind to every unscheduled kernel (see the module docstring);
    `tuning-db=PATH` applies the fastest record of each kernel in that tuning database instead
    (`strategy/tuning_db.py`), `annotate=true` leaves each kernel's rule and config in `minimlc.schedule` and its
    tuning key in `minimlc.task` (for the profiler)."""

    name = "default-schedule"
    tuning_db: str = ""
    annotate: bool = False

    def apply(self, ctx: Context, op: ModuleOp) -> None:
        database = TuningDatabase(self.tuning_db) if self.tuning_db else None
        apply_default_schedules(ctx, op, database, self.annotate)


def apply_default_schedules(
    ctx: Context, module: ModuleOp, database: TuningDatabase | None = None, annotate: bool = False
) -> list[tuple[str, list[str]]]:
    """Schedule every kernel of `module` (with `database`'s best config where it has one); returns the trace:
    (kernel, the passes applied to it) per kernel. No step adds or removes a call (`loop-pack` changes the
    operands of calls), so the rules read call sites from one index (`calls_fixed`)."""
    with calls_fixed(module):
        return _schedule_all(ctx, module, database, annotate)


def _schedule_all(
    ctx: Context, module: ModuleOp, database: TuningDatabase | None, annotate: bool
) -> list[tuple[str, list[str]]]:
    target = target_of(module)
    trace: list[tuple[str, list[str]]] = []
    spaces = [(kernel, space) for kernel in kernels_of(module) if (space := kernel_space(module, kernel, target))]
    for kernel, space in spaces:
        name = kernel.sym_name.data
        key = kernel_key(kernel, space.space) if database is not None or annotate else ""
        config = _tuned_config(database, key, space, target) if database is not None else None
        steps = schedule_kernel(ctx, module, space, config, strict=True) if config is not None else None
        if config is None or steps is None:
            config = space.space.default()
            steps = schedule_kernel(ctx, module, space, config) or []
        if annotate:
            described = " ".join(f"{knob}={_text(value)}" for knob, value in config.items())
            rule = space.rule.name if space.rule is not None else PARALLEL_KNOB.name
            scheduled = find_kernel(module, DefaultSchedulePass.name, name)
            scheduled.attributes[SCHEDULE_ATTR] = StringAttr(f"{rule} {described}")
            scheduled.attributes[TASK_ATTR] = StringAttr(key)
        if steps:
            trace.append((name, steps))
    return trace


def schedule_kernel(
    ctx: Context,
    module: ModuleOp,
    space: KernelSpace,
    config: Config,
    strict: bool = False,
) -> list[str] | None:
    """Apply `config`'s schedule to kernel `space.kernel` of `module` (the rule's passes, then parallel placement if
    `config` keeps its `parallel` knob on); returns the passes applied. Where the rule's passes do not lower, they
    are undone (only parallel placement applies), or with `strict` nothing applies and the result is None. Raises
    ConfigError for a config outside the space."""
    steps = space.steps(config)
    if steps and not apply_or_undo(ctx, module, space.kernel, steps):
        if strict:
            return None
        steps = []
    parallel = []
    if config.get(PARALLEL_KNOB.name, True):
        tasks, grain = config.get(TASKS_KNOB.name, TASKS_KNOB.default), config.get(GRAIN_KNOB.name, GRAIN_KNOB.default)
        scheduled = find_kernel(module, DefaultSchedulePass.name, space.kernel)
        parallel = parallel_steps(scheduled, int(tasks), int(grain))
        apply_steps(ctx, module, parallel)
    return steps + parallel


def _tuned_config(database: TuningDatabase, key: str, space: KernelSpace, target: Target) -> Config | None:
    """The config of `database`'s fastest record of kernel `key` on `target` among those that fit the space, if any."""
    record = database.best(key, target_key(target), space.space)
    return None if record is None else record.config


def _text(value: object) -> str:
    return str(value).lower() if isinstance(value, bool) else str(value)


def schedule_trace(ctx: Context, module: ModuleOp, database: TuningDatabase | None = None) -> str:
    """What `minimlc compile --emit schedule` prints: per scheduled kernel, a comment and its pass list; then the
    whole list, which `mini-opt -p` replays on the same loop IR to the IR default-schedule gives (with `database`,
    its best records where it has them)."""
    trace = apply_default_schedules(ctx, module, database)
    lines = [f"// {kernel}\n{','.join(steps)}" for kernel, steps in trace]
    lines.append("// all kernels, in order (mini-opt -p)")
    lines.append(",".join(step for _, steps in trace for step in steps))
    return "\n".join(lines) + "\n"


def describe_spaces(module: ModuleOp) -> list[dict[str, Any]]:
    """What `minimlc compile --emit space` prints: per distinct kernel of `module` (kernels with the same body are
    one), `{"kernel", "rule", "calls", "knobs": [{"name", "values", "default"}]}`; `rule` is `parallel` for a kernel
    only parallel placement applies to."""
    target = target_of(module)
    calls: dict[str, int] = {}
    for op in module.walk():
        if isinstance(op, func.CallOp):
            calls[op.callee.string_value()] = calls.get(op.callee.string_value(), 0) + 1
    described: dict[str, dict[str, Any]] = {}
    for kernel in kernels_of(module):
        space = kernel_space(module, kernel, target)
        if space is None:
            continue
        body = kernel_structure(kernel)
        if body in described:
            described[body]["calls"] += calls.get(kernel.sym_name.data, 0)
            continue
        rule = space.rule.name if space.rule is not None else PARALLEL_KNOB.name
        described[body] = {
            "kernel": space.kernel,
            "rule": rule,
            "calls": calls.get(kernel.sym_name.data, 0),
            "knobs": space.space.describe(),
        }
    return list(described.values())


def apply_steps(ctx: Context, module: ModuleOp, steps: list[str]) -> None:
    """Apply pass-pipeline items (`loop-split{kernel=k loop=i factor=8}`) to `module`, as `run_passes` does. A step
    naming its kernel is configured from its text once with the name left out (`kernel=_`) and then given the
    name: kernels of a kind get the same steps but for their names, and parsing every step's options was a tenth of
    default-schedule's time (`configured_pass` keeps one configured pass per text)."""
    from minimlc.lowering.pipeline import configured_pass, is_frozen

    for step in steps:
        match = _KERNEL_OPTION.search(step)
        if match is None:
            configured_pass(step).apply(ctx, module)
            continue
        template = configured_pass(step[: match.start(1)] + "_" + step[match.end(1) :])
        if is_frozen(type(template)) and "kernel" in {field.name for field in fields(template)}:
            replace(template, kernel=match.group(1)).apply(ctx, module)
        else:
            configured_pass(step).apply(ctx, module)


_KERNEL_OPTION = re.compile(r"[{ ]kernel=([A-Za-z0-9_.$]+)[ }]")
"""A step's `kernel=` option: the kernel it schedules."""


def apply_or_undo(ctx: Context, module: ModuleOp, name: str, steps: list[str]) -> bool:
    """Apply `steps` to kernel `name` of `module`; True if they apply and the kernel's vector code can be generated
    (`check_vector_code`). Otherwise undo them (`_undo`) and return False. Applying once and undoing the rare failure
    replaced trying every schedule on a copy first, which doubled the work of scheduling a model."""
    saved = clone_op(find_kernel(module, DefaultSchedulePass.name, name), {})
    last = module.body.block.last_op
    try:
        apply_steps(ctx, module, steps)
        check_vector_code(module, find_kernel(module, DefaultSchedulePass.name, name))
    except DiagnosticException:
        _undo(module, name, saved, last)
        return False
    return True


def check_vector_code(module: ModuleOp, kernel: func.FuncOp) -> None:
    """Raise DiagnosticException if `loop-to-scf` cannot generate `kernel`'s vector code, for each loop it would
    refuse or rewrite (its outermost `vectorize` loops and run-time `unroll` loops): in place, building nothing, where
    `check_in_place` can tell (a static vectorize loop with only static unroll loops in it), else by `expand_loops`
    (vectors only) run on a copy of the loop, not of the whole kernel (copying kernels was a third of trying
    schedules). The copies read the kernel's values while they exist and are erased after, dropping those uses."""
    copied = [root for root in _expanded_roots(kernel) if not check_in_place(root)]
    if not copied:
        return
    trial = ModuleOp([clone_op(root, {}) for root in copied])
    copy_target(module, trial)
    try:
        expand_loops(trial, vectors_only=True)
    finally:
        trial.erase()


def _expanded_roots(kernel: func.FuncOp) -> list[loop.ForOp]:
    """The loops of `kernel` that are `vectorize` or `unroll` with a run-time trip count, outermost ones only: every
    loop `expand_loops(vectors_only=True)` reads lies in one of them."""
    roots: list[loop.ForOp] = []

    def visit(op: Operation) -> None:
        for region in op.regions:
            for block in region.blocks:
                for inner in block.ops:
                    if isinstance(inner, loop.ForOp) and (
                        inner.kind.data == "vectorize" or (inner.kind.data == "unroll" and inner.is_dynamic)
                    ):
                        roots.append(inner)
                    elif inner.regions:
                        visit(inner)

    visit(kernel)
    return roots


def _undo(module: ModuleOp, name: str, saved: func.FuncOp, last: Operation | None) -> None:
    """Put kernel `name` back as `saved`, and take back what scheduling it did outside it: the functions it added
    to `module` after `last` (`loop-pack`'s packing kernels) and the packing at its call sites (a `loop.precompute`
    of such a function in place of a weight operand), the only steps that reach outside a kernel."""
    added = []
    op = last.next_op if last is not None else module.body.block.first_op
    while op is not None:
        added.append(op)
        op = op.next_op
    added_names = {f.sym_name.data for f in added if isinstance(f, func.FuncOp)}
    for call in call_sites(module, name):
        for index, argument in enumerate(call.arguments):
            packing = argument.owner
            if isinstance(packing, loop.PrecomputeOp) and packing.kernel.root_reference.data in added_names:
                call.operands[index] = packing.sources[0]
                if not packing.result.uses:
                    packing.detach()
                    packing.erase()
    for function in added:
        function.detach()
        function.erase()
    Rewriter.replace_op(find_kernel(module, DefaultSchedulePass.name, name), saved)
