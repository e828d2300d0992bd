"""The bfloat16 form of a float32 convolution marked `BF16_PRODUCTS_ATTR` (`graph-bf16-products`): its products run
on the target's bfloat16 pair dot product (`llvmx.dot_bf16`: x86 `vdpbf16ps`, AArch64 `bfdot`), summed in float32.

The int8 dot-product convolution's form (`quantized._dot_product_conv`) with pairs instead of quads: input channels
paired into i32 words of two bfloat16 values (element j of word w is channel `w + j * ceil(C / 2)`, `pair_index`),
"conv_bf16_weight" (Co, C/2, KH, KW) of the weight (channels past C: 0), computed once at load time,
"conv_bf16_input" (N, H', W', C/2) of the input, channels last and padded spatially with zeros, and "conv" summing
`llvmx.dot_bf16(0.0, pixel_word, weight_word)` over (KH, KW, C/2). "conv" keeps the float convolution's NCHW
output (te-channels-last stores it channels-last where the float one would be) and "conv_bias" follows it as it
follows the float one. Group-1 only: depthwise and grouped convolutions stay float32.

    %w = te.compute "conv_bf16_weight" (%f, %c, %kh, %kw) -> tensor<16x2x3x3xi32> { ... te.yield %word : i32 }
    %x = te.compute "conv_bf16_input" (%n, %h, %v, %c) -> tensor<1x10x10x2xi32> { ... te.yield %word : i32 }
    %y = te.compute "conv" (%n, %f, %h, %v) reduce sum (%kh : 3, %kw : 3, %c : 2) -> tensor<1x16x8x8xf32> {
      %a = te.read %x[%n, %ih, %iv, %c] : tensor<1x10x10x2xi32>
      %b = te.read %w[%f, %c, %kh, %kw] : tensor<16x2x3x3xi32>
      %d = llvmx.dot_bf16 %zero, %a, %b : f32, i32
      te.yield %d : f32
    }
"""

from __future__ import annotations

from collections.abc import Callable

from xdsl.dialects import arith
from xdsl.dialects.builtin import DYNAMIC_INDEX, f32
from xdsl.ir import SSAValue

from minimlc.dialects import graph, llvm_ext, te
from minimlc.lowering.graph_to_te.bfloat16 import BF16_PRODUCTS_ATTR, bf16_word, pair_index
from minimlc.lowering.graph_to_te.builder import Indices, build_compute, f32_constant, read
from minimlc.lowering.graph_to_te.nn import _affine, _Guard  # pyright: ignore[reportPrivateUsage]


def takes_bf16_products(op: graph.ConvOp) -> bool:
    """Whether `op` takes the bfloat16 form: marked `BF16_PRODUCTS_ATTR`, group 1, float32, static shapes."""
    shapes = (graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result))
    return (
        BF16_PRODUCTS_ATTR in op.attributes
        and op.group.value.data == 1
        and graph.element_type(op.input) == f32
        and all(DYNAMIC_INDEX not in shape for shape in shapes)
    )


def _word(word: SSAValue, extent: int, value_at: Callable[[SSAValue], SSAValue]) -> SSAValue:
    """The i32 word `word` of an axis of `extent` paired into words: `value_at(index)` of its two elements
    (`pair_index`) rounded to bfloat16, 0.0 for an element past the extent (on both sides, so that an infinity
    there adds no NaN)."""
    values: list[SSAValue] = []
    for j in (0, 1):
        index, inside = pair_index(word, j, extent)
        value = value_at(index)
        values.append(value if inside is None else arith.SelectOp(inside, value, f32_constant(0.0)).result)
    return bf16_word(*values)


def bf16_conv(op: graph.ConvOp) -> list[te.ComputeOp]:
    """The computes of `op`'s bfloat16 form (see the module docstring), "conv_bias" last where it has a bias."""
    x, w, shape = graph.shape_of(op.input), graph.shape_of(op.weight), graph.shape_of(op.result)
    spatial, channels = len(x) - 2, x[1]
    words = -(-channels // 2)
    strides, pads, dilations = op.strides.get_values(), op.pads.get_values(), op.dilations.get_values()
    reach = [(shape[2 + a] - 1) * strides[a] + (w[2 + a] - 1) * dilations[a] + 1 for a in range(spatial)]

    def input_word(indices: Indices) -> SSAValue:
        n, *window, word = indices
        guard = _Guard()
        coordinates = [
            guard.clamp(_affine(position, 1, -pads[a]), -pads[a], reach[a] - 1 - pads[a], x[2 + a])
            for a, position in enumerate(window)
        ]
        return _word(word, channels, lambda c: guard.select(read(op.input, [n, c, *coordinates]), 0.0))

    def weight_word(indices: Indices) -> SSAValue:
        f, word, *taps = indices
        return _word(word, channels, lambda c: read(op.weight, [f, c, *taps]))

    weights = build_compute("conv_bf16_weight", (w[0], words, *w[2:]), weight_word)
    data = build_compute("conv_bf16_input", (x[0], *reach, words), input_word)

    def product(indices: Indices) -> SSAValue:
        n, co, outputs = indices[0], indices[1], indices[2 : 2 + spatial]
        taps, word = indices[2 + spatial : 2 + 2 * spatial], indices[-1]
        window = [
            arith.AddiOp(_affine(outputs[a], strides[a], 0), _affine(taps[a], dilations[a], 0)).result
            for a in range(spatial)
        ]
        pixel, kernel = read(data.result, [n, *window, word]), read(weights.result, [co, word, *taps])
        return llvm_ext.DotBF16Op(f32_constant(0.0), pixel, kernel).result

    conv = build_compute("conv", shape, product, (*w[2:], words), "sum")
    if (bias := op.bias) is None:
        return [weights, data, conv]

    def biased(indices: Indices) -> SSAValue:
        return arith.AddfOp(read(conv.result, indices), read(bias, [indices[1]])).result

    return [weights, data, conv, build_compute("conv_bias", shape, biased)]
