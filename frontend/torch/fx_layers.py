"""Built-in converters of the functional forms of `nn` layers (`torch.conv2d`, `F.batch_norm`, `F.max_pool2d`,
`F.adaptive_avg_pool2d`), which TorchDynamo writes for the layers it inlines and `fx_modules` uses for the layers
themselves, and of the comparisons a data-dependent branch tests (`h.sum() > 0`). Each takes PyTorch's argument names
and defaults:

    FUNCTIONS[torch.conv2d](ctx, x, weight, bias, stride=2, padding="same")   # graph.conv, pads made explicit
"""

from __future__ import annotations

import operator
from collections.abc import Callable, Sequence
from typing import Any

import numpy as np
import torch
import torch.nn.functional as F
from xdsl.dialects.builtin import f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.dialects.graph import shape_of
from minimlc.frontend.torch.fx_context import FxContext, TorchImportError, pair, tensor_value

Converter = Callable[..., Any]


def _spatial_input(input: Any, spatial: int, what: str) -> SSAValue:
    x = tensor_value(input)
    if len(shape_of(x)) != spatial + 2:
        raise TorchImportError(f"{what} of an input of shape {shape_of(x)} (batched inputs only)")
    return x


def conv(
    ctx: FxContext,
    input: Any,
    weight: Any,
    bias: Any = None,
    stride: int | Sequence[int] = 1,
    padding: str | int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    groups: int = 1,
) -> SSAValue:
    """`torch.conv1d`/`torch.conv2d` -> graph.conv with the padding (sizes, "valid" or "same") made explicit."""
    kernel = shape_of(tensor_value(weight, "weight"))[2:]
    spatial = len(kernel)
    x = _spatial_input(input, spatial, f"conv{spatial}d")
    dilations = pair(dilation, spatial)
    if padding == "same":
        totals = [step * (size - 1) for step, size in zip(dilations, kernel)]
        pads = [total // 2 for total in totals] + [total - total // 2 for total in totals]
    else:
        begins = [0] * spatial if padding == "valid" else pair(padding, spatial)  # type: ignore[arg-type]
        pads = begins + begins
    return ctx.emit(
        "conv", x, weight, bias, strides=pair(stride, spatial), pads=pads, dilations=dilations, group=int(groups)
    )


def batch_norm(
    ctx: FxContext,
    input: Any,
    running_mean: Any,
    running_var: Any,
    weight: Any = None,
    bias: Any = None,
    training: bool = False,
    momentum: float = 0.1,
    eps: float = 1e-5,
) -> SSAValue:
    """Inference batch normalisation with the running statistics (the layer in eval mode)."""
    if training or running_mean is None or running_var is None:
        raise TorchImportError(
            "batch_norm normalises with batch statistics (training mode or no running statistics); call model.eval()"
        )
    channels = shape_of(tensor_value(running_mean, "running_mean"))[0]
    scale = np.ones(channels, np.float32) if weight is None else weight
    shift = np.zeros(channels, np.float32) if bias is None else bias
    return ctx.emit("batch_norm", tensor_value(input), scale, shift, running_mean, running_var, float(eps))


def max_pool2d(
    ctx: FxContext,
    input: Any,
    kernel_size: int | Sequence[int],
    stride: int | Sequence[int] | None = None,
    padding: int | Sequence[int] = 0,
    dilation: int | Sequence[int] = 1,
    ceil_mode: bool = False,
    return_indices: bool = False,
) -> SSAValue:
    if return_indices:
        raise TorchImportError("max_pool2d with return_indices=True is not supported")
    kernel = pair(kernel_size, 2)
    begins = pair(padding, 2)
    return ctx.emit(
        "max_pool",
        _spatial_input(input, 2, "max_pool2d"),
        kernel_shape=kernel,
        strides=pair(stride, 2) if stride else kernel,  # type: ignore[arg-type]
        pads=begins + begins,
        dilations=pair(dilation, 2),
        ceil_mode=bool(ceil_mode),
    )


def adaptive_avg_pool2d(ctx: FxContext, input: Any, output_size: int | Sequence[int | None]) -> SSAValue:
    """A mean over each plane for an output of 1x1, else an average pool where the output size divides the input."""
    x = _spatial_input(input, 2, "adaptive_avg_pool2d")
    shape = shape_of(x)
    wanted = [size if out is None else out for size, out in zip(shape[2:], pair(output_size, 2))]  # type: ignore[arg-type]
    if wanted == [1, 1]:
        return ctx.emit("reduce_mean", x, [2, 3], True)
    if any(size % out for size, out in zip(shape[2:], wanted)):
        raise TorchImportError(
            f"adaptive_avg_pool2d to {tuple(wanted)} of a {shape[2]}x{shape[3]} input: uneven windows are not supported"
        )
    kernel = [size // out for size, out in zip(shape[2:], wanted)]
    return ctx.emit("average_pool", x, kernel_shape=kernel, strides=kernel, pads=[0, 0, 0, 0], dilations=[1, 1])


def _comparison(op: str, python: Callable[[Any, Any], bool]) -> Converter:
    """A float32 tensor compared with a tensor or a number, giving bools; of two Python numbers, their result."""

    def convert(ctx: FxContext, input: Any, other: Any) -> Any:
        if not isinstance(input, SSAValue) and not isinstance(other, SSAValue):
            return python(input, other)
        operands = [
            value if isinstance(value, SSAValue) else ctx.emit("constant", float(value), ()) for value in (input, other)
        ]
        if any(graph.element_type(value) != f32 for value in operands):
            raise TorchImportError(f"{op} of {[str(graph.element_type(value)) for value in operands]} (float32 only)")
        return ctx.emit(op, *operands)

    return convert


FUNCTIONS: dict[Any, Converter] = {
    torch.conv1d: conv,
    torch.conv2d: conv,
    F.batch_norm: batch_norm,
    F.max_pool2d: max_pool2d,
    F.adaptive_avg_pool2d: adaptive_avg_pool2d,
    operator.gt: _comparison("greater", operator.gt),
    operator.ge: _comparison("greater_or_equal", operator.ge),
    operator.lt: _comparison("less", operator.lt),
    operator.le: _comparison("less_or_equal", operator.le),
}
"""call_function target -> converter(ctx, *args, **kwargs)."""
