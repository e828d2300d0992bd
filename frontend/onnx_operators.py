"""The ONNX op tables of the importer (`minimlc.frontend.onnx`): the converter of every op type, the ops that take
run-time data of every element type, and the operands that must be compile-time constants (which the ONNX backend
binds).
"""

from __future__ import annotations

import onnx

from minimlc.frontend import (
    onnx_activation,
    onnx_attention,
    onnx_compaction,
    onnx_einsum,
    onnx_fold,
    onnx_generation,
    onnx_indexing,
    onnx_loss,
    onnx_nn,
    onnx_normalization,
    onnx_ops,
    onnx_padding,
    onnx_quantize,
    onnx_recurrent,
    onnx_resize,
    onnx_selection,
    onnx_spatial,
    onnx_tensor,
)

CONVERTERS = {
    **onnx_ops.CONVERTERS,
    **onnx_activation.CONVERTERS,
    **onnx_einsum.CONVERTERS,
    **onnx_nn.CONVERTERS,
    **onnx_normalization.CONVERTERS,
    **onnx_tensor.CONVERTERS,
    **onnx_indexing.CONVERTERS,
    **onnx_spatial.CONVERTERS,
    **onnx_resize.CONVERTERS,
    **onnx_loss.CONVERTERS,
    **onnx_selection.CONVERTERS,
    **onnx_generation.CONVERTERS,
    **onnx_compaction.CONVERTERS,
    **onnx_recurrent.CONVERTERS,
    **onnx_attention.CONVERTERS,
    **onnx_quantize.CONVERTERS,
    **onnx_padding.CONVERTERS,
}
"""ONNX op type -> converter, over every op family."""

TYPED_OPS = frozenset(
    {
        # arithmetic, comparison and logic on numbers and bools
        *("Add", "Sub", "Mul", "Div", "Mod", "Pow", "Neg", "Abs", "Max", "Min", "Sum"),
        *("Equal", "Less", "LessOrEqual", "Greater", "GreaterOrEqual", "Not", "And", "Or", "Xor"),
        *("Where", "Cast", "CastLike", "Clip", "QuantizeLinear", "DequantizeLinear"),
        # indices
        *("Gather", "GatherElements", "CumSum", "ArgMax", "ArgMin"),
        # data movement and shapes
        *("Reshape", "Flatten", "Squeeze", "Unsqueeze", "Expand", "Tile", "Concat", "Split", "Slice", "Transpose"),
        *("Identity", "Shape", "Size", "Trilu"),
        # selection, compaction, recurrence and losses (run-time indices, lengths and targets)
        *("CumProd", "ScatterElements", "Scatter", "ScatterND", "GatherND", "OneHot", "TopK", "EyeLike", "NonZero"),
        *("Compress", "Unique", "RNN", "LSTM", "GRU", "NegativeLogLikelihoodLoss", "SoftmaxCrossEntropyLoss"),
        # float data with bool masks or integer positions (each converter checks its float operands)
        *("Attention", "RotaryEmbedding"),
        # every element type its graph ops take (each converter checks its operands)
        *("Einsum", "Pad", "MaxPool", "Softmax"),
        # reductions (each checks the element types its graph op takes)
        *(f"Reduce{kind}" for kind in ("Sum", "Max", "Min", "Prod", "Mean", "L1", "L2", "LogSum", "LogSumExp")),
        "ReduceSumSquare",
    }
)
"""The ONNX ops whose converters take run-time inputs of every element type (each checks its own); the others
compute on float32 and are refused any other run-time input."""

CONSTANT_OPERANDS: dict[str, tuple[int, ...]] = {
    # operands that set the output's shape (or which axes it has)
    "Reshape": (1,),
    "Expand": (1,),
    "ConstantOfShape": (0,),
    "Tile": (1,),
    "Trilu": (1,),
    "Slice": (1, 2, 3, 4),
    "Pad": (1, 3),
    "TopK": (1,),
    "Range": (0, 1, 2),
    "OneHot": (1,),
    "Resize": (1, 2, 3),
    "Upsample": (1,),
    "CenterCropPad": (1,),
    "AffineGrid": (1,),
    "Col2Im": (1, 2),
    "Split": (1,),
    "Squeeze": (1,),
    "Unsqueeze": (1,),
    "CumSum": (1,),
    "CumProd": (1,),
    **dict.fromkeys(("HannWindow", "HammingWindow", "BlackmanWindow"), (0,)),
    **{
        f"Reduce{kind}": (1,)
        for kind in ("L1", "L2", "LogSum", "LogSumExp", "Max", "Mean", "Min", "Prod", "Sum", "SumSquare")
    },
    # float operands the converters need as constants
    "Dropout": (1, 2),
}
"""ONNX op type -> the positions of its inputs that must be compile-time constants: shape-setting operands (shapes,
axes, pads, repeats, sizes) and Dropout's ratio and training_mode. The backend binds graph inputs read there, and
only there: an integer or bool graph input read anywhere else is data, and refused."""


def constant_operand_names(graph_proto: onnx.GraphProto) -> set[str]:
    """The names of the values the graph's nodes use where `CONSTANT_OPERANDS` needs a compile-time constant."""
    return {
        node.input[position]
        for node in graph_proto.node
        if node.domain in onnx_fold.DEFAULT_DOMAINS
        for position in CONSTANT_OPERANDS.get(node.op_type, ())
        if position < len(node.input) and node.input[position]
    }
