"""Built-in converters of FX `call_module` nodes (`MODULES`: torch.nn layer type -> converter) to graph ops.

Each converter takes the `FxContext`, the module, its qualified name (which names its weights: `layers.0.weight`)
and the node's arguments; layers whose result depends on training mode (BatchNorm, Dropout) must be in eval mode:

    MODULES[nn.Linear](ctx, model.linear0, "linear0", x)     # graph.gemm of x by linear0.weight, + linear0.bias
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from torch import nn
from xdsl.ir import SSAValue

from minimlc.dialects import graph
from minimlc.frontend.torch import fx_functions, fx_layers
from minimlc.frontend.torch.fx_context import FxContext, TorchImportError, pair, tensor_value

ModuleConverter = Callable[..., SSAValue]


def _parameter(ctx: FxContext, name: str, module: nn.Module, attribute: str) -> SSAValue | None:
    tensor = getattr(module, attribute)
    return None if tensor is None else ctx.weight(f"{name}.{attribute}", tensor)


def _linear(ctx: FxContext, module: nn.Linear, name: str, input: Any) -> SSAValue:
    weight, bias = _parameter(ctx, name, module, "weight"), _parameter(ctx, name, module, "bias")
    return fx_functions.linear(ctx, input, weight, bias)


def _conv(ctx: FxContext, module: nn.Conv1d | nn.Conv2d, name: str, input: Any) -> SSAValue:
    """graph.conv with PyTorch's padding (sizes, "valid" or "same") made explicit; zero padding only."""
    if module.padding_mode != "zeros":
        raise TorchImportError(f"padding_mode={module.padding_mode!r} is not supported (only 'zeros')")
    weight, bias = _parameter(ctx, name, module, "weight"), _parameter(ctx, name, module, "bias")
    return fx_layers.conv(ctx, input, weight, bias, module.stride, module.padding, module.dilation, module.groups)


def _batch_norm(ctx: FxContext, module: nn.BatchNorm1d | nn.BatchNorm2d, name: str, input: Any) -> SSAValue:
    """Inference batch normalisation with the running statistics (the module in eval mode)."""
    scale, shift = _parameter(ctx, name, module, "weight"), _parameter(ctx, name, module, "bias")
    mean, var = _parameter(ctx, name, module, "running_mean"), _parameter(ctx, name, module, "running_var")
    return fx_layers.batch_norm(ctx, input, mean, var, scale, shift, module.training, eps=module.eps)


def _layer_norm(ctx: FxContext, module: nn.LayerNorm, name: str, input: Any) -> SSAValue:
    weight, bias = _parameter(ctx, name, module, "weight"), _parameter(ctx, name, module, "bias")
    return fx_functions.layer_norm(ctx, input, module.normalized_shape, weight, bias, module.eps)


def _pool_window(module: nn.MaxPool2d | nn.AvgPool2d) -> tuple[list[int], list[int], list[int]]:
    kernel = pair(module.kernel_size, 2)
    strides = pair(module.stride, 2) if module.stride else kernel  # type: ignore[arg-type]
    padding = pair(module.padding, 2)
    return kernel, strides, padding + padding


def _max_pool(ctx: FxContext, module: nn.MaxPool2d, name: str, input: Any) -> SSAValue:
    return fx_layers.max_pool2d(
        ctx,
        input,
        module.kernel_size,
        module.stride,
        module.padding,
        module.dilation,
        module.ceil_mode,
        module.return_indices,
    )


def _avg_pool(ctx: FxContext, module: nn.AvgPool2d, name: str, input: Any) -> SSAValue:
    if module.divisor_override is not None:
        raise TorchImportError("AvgPool2d with divisor_override is not supported")
    kernel, strides, pads = _pool_window(module)
    return ctx.emit(
        "average_pool",
        tensor_value(input),
        kernel_shape=kernel,
        strides=strides,
        pads=pads,
        dilations=[1, 1],
        ceil_mode=bool(module.ceil_mode),
        count_include_pad=bool(module.count_include_pad),
    )


def _adaptive_avg_pool(ctx: FxContext, module: nn.AdaptiveAvgPool2d, name: str, input: Any) -> SSAValue:
    return fx_layers.adaptive_avg_pool2d(ctx, input, module.output_size)


def _embedding(ctx: FxContext, module: nn.Embedding, name: str, input: Any) -> SSAValue:
    if module.max_norm is not None:
        raise TorchImportError("Embedding with max_norm (it renormalises the table) is not supported")
    indices = tensor_value(input)
    if graph.element_type(indices) not in graph.INDICES:
        raise TorchImportError(f"Embedding indices must be int32 or int64, got {graph.element_type(indices)}")
    return ctx.emit("take", _parameter(ctx, name, module, "weight"), indices, 0)


def _flatten(ctx: FxContext, module: nn.Flatten, name: str, input: Any) -> SSAValue:
    return fx_functions.flatten(ctx, input, module.start_dim, module.end_dim)


def _dropout(ctx: FxContext, module: nn.Dropout, name: str, input: Any) -> SSAValue:
    return fx_functions.dropout(ctx, input, module.p, module.training)


def _softmax(ctx: FxContext, module: nn.Softmax, name: str, input: Any) -> SSAValue:
    return fx_functions.softmax(ctx, input, module.dim)


def _activation(op: str, *arguments: Any) -> ModuleConverter:
    def convert(ctx: FxContext, module: nn.Module, name: str, input: Any) -> SSAValue:
        return ctx.emit(op, tensor_value(input), *arguments)

    return convert


def _gelu(ctx: FxContext, module: nn.GELU, name: str, input: Any) -> SSAValue:
    return ctx.emit("gelu", tensor_value(input), module.approximate)


def _identity(ctx: FxContext, module: nn.Identity, name: str, input: Any, *args: Any, **kwargs: Any) -> SSAValue:
    return tensor_value(input)


MODULES: dict[type[nn.Module], ModuleConverter] = {
    nn.Linear: _linear,
    nn.Conv1d: _conv,
    nn.Conv2d: _conv,
    nn.BatchNorm1d: _batch_norm,
    nn.BatchNorm2d: _batch_norm,
    nn.LayerNorm: _layer_norm,
    nn.ReLU: _activation("relu"),
    nn.GELU: _gelu,
    nn.SiLU: _activation("swish", 1.0),
    nn.Sigmoid: _activation("sigmoid"),
    nn.Tanh: _activation("tanh"),
    nn.Softmax: _softmax,
    nn.MaxPool2d: _max_pool,
    nn.AvgPool2d: _avg_pool,
    nn.AdaptiveAvgPool2d: _adaptive_avg_pool,
    nn.Dropout: _dropout,
    nn.Embedding: _embedding,
    nn.Flatten: _flatten,
    nn.Identity: _identity,
}
"""torch.nn layer type -> converter(ctx, module, qualified name, *node args)."""
