"""Tuning tasks: the distinct kernels of a model, each with its space, its weight (calls) and a standalone module.

A task is one kernel structure (`tuning_db.kernel_key`: kernels with the same body and space are one task, as
`describe_spaces` groups them) weighted by how often the entry calls it. Its standalone module is the unscheduled
kernel and an entry that calls it once: parameters that are weights (or load-time buffers) at the model's call
become `loop.weight`s, so schedules that pack weights apply as in the model; the others are the entry's inputs and
its output. A contraction (convolution, GEMM) whose first call's output only an elementwise kernel reads (its bias,
ReLU, residual add) brings that kernel along, after it: the model fuses the two (`loop-fuse-kernels`, at the
write-back where it can), and so does the measurer, so a config is timed with the epilogue work and memory traffic
it has in the model (a residual folded at a channel-blocked tile's write-back, or left as a pass of its own over the
output). The measurer schedules the kernel with a candidate config (the epilogue with its default) and times the
module on random buffers.

    tasks = extract_tasks(import_model("model.onnx"), target=target_from_name("host"))
    tasks[0].key, tasks[0].calls, tasks[0].space.default()
"""

from __future__ import annotations

from dataclasses import dataclass

from xdsl.dialects import func
from xdsl.dialects.builtin import MemRefType, ModuleOp, UnitAttr
from xdsl.ir import SSAValue

from minimlc.dialects import loop
from minimlc.frontend.onnx import ImportedModel
from minimlc.lowering.abi import ENTRY_ATTR, ENTRY_FUNCTION
from minimlc.lowering.loop.kernel_patterns import callee, epilogue_call
from minimlc.lowering.pipeline import ExtraPasses, build_pipeline, run_pipeline
from minimlc.lowering.program.loop_profile_calls import bf16_product_flops, kernel_flops
from minimlc.lowering.schedule.default_schedule import kernel_space
from minimlc.lowering.schedule.kernel_analysis import call_sites, kernels_of
from minimlc.lowering.schedule.space import Space
from minimlc.lowering.strategy.tuning_db import kernel_key
from minimlc.lowering.target import Target, copy_target, set_target

Buffer = tuple[tuple[int, ...], str]
"""A buffer's shape and numpy dtype name."""


@dataclass(frozen=True)
class Task:
    """One distinct kernel of a model: what the tuner searches and the database remembers."""

    key: str
    kernel: str
    """The name of its first kernel in the model (for people; the key identifies it)."""
    rule: str
    calls: int
    flops: int
    """Floating-point operations of one call."""
    bf16_flops: int
    """Those of them that bfloat16 dot products do (`bf16_product_flops`), at their own peak."""
    space: Space
    module: str
    """The standalone module (loop level, unscheduled) as text."""
    inputs: tuple[Buffer, ...]
    weights: tuple[Buffer, ...]
    """In the entry's weight order: `w0`, `w1`, ..."""
    output: Buffer


def extract_tasks(
    imported: ImportedModel,
    target: Target,
    opt_level: int = 3,
    tuning_db: str | None = None,
    extra_passes: ExtraPasses | None = None,
) -> list[Task]:
    """The tasks of `imported` (lowered in place to the `schedule` stage), in first-call order; `tuning_db`: with the
    convolution algorithms that database chose (`te-conv-winograd{tuning-db}`); `extra_passes`: those of the build
    tuned (a bfloat16 build's, `bf16_passes`)."""
    module = imported.module
    set_target(module, target)
    pipeline = build_pipeline(opt_level, extra_passes=extra_passes, tuning_db=tuning_db or None)
    run_pipeline(module, pipeline, stop_after="schedule")
    tasks: dict[str, Task] = {}
    calls: dict[str, int] = {}
    for kernel in kernels_of(module):
        space = kernel_space(module, kernel, target)
        sites = call_sites(module, kernel.sym_name.data)
        if space is None or not sites:
            continue
        key = kernel_key(kernel, space.space)
        calls[key] = calls.get(key, 0) + len(sites)
        if key not in tasks:
            standalone, inputs, weights, output = standalone_module(module, kernel, sites[0])
            rule = space.rule.name if space.rule is not None else "parallel"
            tasks[key] = Task(
                key,
                kernel.sym_name.data,
                rule,
                0,
                kernel_flops(kernel),
                bf16_product_flops(kernel),
                space.space,
                str(standalone),
                inputs,
                weights,
                output,
            )
    return [Task(**{**task.__dict__, "calls": calls[key]}) for key, task in tasks.items()]


def standalone_module(
    module: ModuleOp, kernel: func.FuncOp, call: func.CallOp
) -> tuple[ModuleOp, tuple[Buffer, ...], tuple[Buffer, ...], Buffer]:
    """A module of `kernel` and an entry that calls it once, with `call`'s weights as weights (see the module
    docstring), and the elementwise kernel after it that `loop-fuse-kernels` fuses into a contraction (bias, ReLU, a
    residual add: `epilogue_call`), which the measurer then fuses too; returns it with its input, weight and output
    buffers.

        func.func @main(%in0, %in1, %out) {
          %w0 = loop.weight "w0" ...
          %t = loop.alloc "global" : memref<1x28x28x512xf32>
          func.call @conv_32(%in0, %w0, %t)
          func.call @relu_35(%t, %in1, %out)      // the epilogue, when the model has one
        }
    """
    epilogue = epilogue_call(module, call)
    calls = [call] if epilogue is None else [call, epilogue]
    internal = call.arguments[-1]  # the contraction's output: with an epilogue, an intermediate of the entry
    operands = list(dict.fromkeys(arg for c in calls for arg in c.arguments[:-1] if arg is not internal))
    result = calls[-1].arguments[-1]
    types = [operand.type for operand in operands]
    is_weight = [
        isinstance(operand.owner, loop.WeightOp | loop.PrecomputeOp) and isinstance(t, MemRefType)
        for operand, t in zip(operands, types)
    ]
    input_types = [t for t, weight in zip(types, is_weight) if not weight]
    entry = func.FuncOp(ENTRY_FUNCTION, ([*input_types, result.type], []))
    entry.attributes[ENTRY_ATTR] = UnitAttr()
    params = iter(entry.body.block.args)
    mapping: dict[SSAValue, SSAValue] = {}
    weights: list[Buffer] = []
    for operand, t, weight in zip(operands, types, is_weight):
        if weight:
            handle = loop.WeightOp(f"w{len(weights)}", t)
            entry.body.block.add_op(handle)
            mapping[operand] = handle.result
            weights.append(_buffer(t))
        else:
            mapping[operand] = next(params)
    mapping[result] = next(params)
    functions = [kernel.clone()]
    if epilogue is not None:
        intermediate = loop.AllocOp(internal.type)  # type: ignore[arg-type]
        entry.body.block.add_op(intermediate)
        mapping[internal] = intermediate.result
        functions.append(callee(module, epilogue).clone())
    for c in calls:
        entry.body.block.add_op(func.CallOp(c.callee.string_value(), [mapping[a] for a in c.arguments], []))
    entry.body.block.add_op(func.ReturnOp())
    standalone = ModuleOp([entry, *functions])
    copy_target(module, standalone)
    return standalone, tuple(_buffer(t) for t in input_types), tuple(weights), _buffer(result.type)


def _buffer(memref_type: object) -> Buffer:
    from minimlc.lowering.abi import buffer_dtype

    assert isinstance(memref_type, MemRefType)
    return tuple(memref_type.get_shape()), buffer_dtype(memref_type.element_type).name
