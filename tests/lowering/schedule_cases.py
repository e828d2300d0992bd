"""Helpers of the schedule-space tests: a rule's kernel space in a module, a model run with that kernel scheduled by
a chosen config, and a model's default schedule trace."""

from __future__ import annotations

from collections.abc import Callable

import numpy as np
import onnx

from minimlc.driver.compiler import compile_model
from minimlc.frontend.onnx import import_model
from minimlc.lowering.pipeline import PIPELINES, make_context, run_passes, run_pipeline, split_pass_list, stage_passes
from minimlc.lowering.schedule.default_schedule import KernelSpace, apply_steps, kernel_space, schedule_trace
from minimlc.lowering.schedule.kernel_analysis import kernels_of
from minimlc.lowering.schedule.space import Config
from minimlc.lowering.target import set_target, target_of

AVX512 = "skylake-avx512"
"""The target of tests that expect one vector width (16 lanes) and register count (32): traces are built for it
on any host."""


def space_of(module: object, rule: str) -> KernelSpace:
    """The space of the one kernel of `module` (at the schedule stage) that `rule` matches."""
    target = target_of(module)  # type: ignore[arg-type]
    spaces = [kernel_space(module, kernel, target) for kernel in kernels_of(module)]  # type: ignore[arg-type]
    (space,) = [s for s in spaces if s is not None and s.rule is not None and s.rule.name == rule]
    return space


def scheduled_run(
    model: onnx.ModelProto, rule: str, config_of: Callable[[KernelSpace], Config], x: np.ndarray
) -> np.ndarray:
    """Lower `model` (one input, one float32 output) to the schedule stage, schedule its `rule` kernel with
    `config_of(space)`, compile the rest at O3 and run it on `x`."""
    imported = import_model(model)
    run_pipeline(imported.module, 3, stop_after="schedule")
    space = space_of(imported.module, rule)
    apply_steps(make_context(), imported.module, space.steps(config_of(space)))
    rest = [item for item in stage_passes(3, start_after="schedule") if item != "default-schedule"]
    compiled = compile_model(imported, rest)
    out = np.empty(compiled.outputs[0].shape, dtype=np.float32)
    args = np.concatenate((np.array([x.ctypes.data, out.ctypes.data], dtype=np.uintp), compiled.weight_addresses))
    compiled.entry(args.ctypes.data)
    return out


def trace_of(model: onnx.ModelProto, target: str | None = None) -> str:
    """The default schedule of every kernel of `model` (`lower-to-schedule`) for `target` (by default the host), as
    `--emit schedule` prints it. Tests that expect one vector width or register count pin a target."""
    imported = import_model(model)
    if target is not None:
        set_target(imported.module, target)
    ctx = make_context()
    run_passes(imported.module, split_pass_list(PIPELINES["lower-to-schedule"][1]), ctx)
    return schedule_trace(ctx, imported.module)
