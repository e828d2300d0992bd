"""The ONNX op tables of the importer (`minimlc.frontend.onnx`): the converter of every op type, the ops that take
run-time data of every element type, and the operands that must be compile-time constants (which the ONNX backend
binds).
"""

from __future__ import annotations

import onnx

from minimlc.frontend import (
    onnx_activation,
    onnx_arithmetic,
    onnx_attention,
    onnx_bitwise,
    onnx_causal_conv,
    onnx_compaction,
    onnx_control,
    onnx_detection,
    onnx_einsum,
    onnx_flex_attention,
    onnx_fold,
    onnx_generation,
    onnx_indexing,
    onnx_linalg,
    onnx_linear_attention,
    onnx_loss,
    onnx_matmul_nbits,
    onnx_ml,
    onnx_nms,
    onnx_nn,
    onnx_normalization,
    onnx_ops,
    onnx_padding,
    onnx_qlinear,
    onnx_quantize,
    onnx_recurrent,
    onnx_resize,
    onnx_selection,
    onnx_sequence,
    onnx_signal,
    onnx_spatial,
    onnx_tensor,
    onnx_tensor_scatter,
    onnx_text,
    onnx_training,
    onnx_tree_ensemble,
    onnx_tree_ensemble_legacy,
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
    **onnx_arithmetic.CONVERTERS,
    **onnx_control.CONVERTERS,
    **onnx_sequence.CONVERTERS,
    **onnx_qlinear.CONVERTERS,
    **onnx_training.CONVERTERS,
    **onnx_signal.CONVERTERS,
    **onnx_text.CONVERTERS,
    **onnx_detection.CONVERTERS,
    **onnx_nms.CONVERTERS,
    **onnx_bitwise.CONVERTERS,
    **onnx_linalg.CONVERTERS,
    **onnx_tensor_scatter.CONVERTERS,
    **onnx_causal_conv.CONVERTERS,
    **onnx_linear_attention.CONVERTERS,
    **onnx_flex_attention.CONVERTERS,
    **onnx_padding.CONVERTERS,
    **onnx_ml.CONVERTERS,
    **onnx_tree_ensemble.CONVERTERS,
    **onnx_tree_ensemble_legacy.CONVERTERS,
    **onnx_matmul_nbits.CONVERTERS,
}
"""ONNX op type -> converter, over every op family (`converter_key`: an op of another domain is `domain.OpType`)."""


def converter_key(domain: str, op_type: str) -> str:
    """The `CONVERTERS` key of an op: its type in the default domain, `domain.OpType` in another one."""
    return op_type if domain in onnx_fold.DEFAULT_DOMAINS else f"{domain}.{op_type}"


OTHER_DOMAINS = frozenset(key.rpartition(".")[0] for key in CONVERTERS if "." in key)
"""The domains besides ONNX's default one that have converters (ai.onnx.preview, ai.onnx.preview.training,
ai.onnx.ml)."""

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
        # optimizers (an int64 iteration count)
        *("Adagrad", "Adam", "Momentum"),
        # signal (MelWeightMatrix's run-time sample rate)
        "MelWeightMatrix",
        # integer tokens
        "TfIdfVectorizer",
        # detection (int64 indices; each converter checks its float operands)
        *("MaxUnpool", "RoiAlign", "DeformConv"),
        "TensorScatter",
        # the ai.onnx.ml numeric ops (float, double, int32, int64; each converter checks)
        *("Binarizer", "ArrayFeatureExtractor", "TreeEnsemble", "TreeEnsembleRegressor", "TreeEnsembleClassifier"),
        # every element type its graph ops take (each converter checks its operands)
        *("Einsum", "Pad", "MaxPool", "Softmax"),
        # reductions (each checks the element types its graph op takes)
        *(f"Reduce{kind}" for kind in ("Sum", "Max", "Min", "Prod", "Mean", "L1", "L2", "LogSum", "LogSumExp")),
        "ReduceSumSquare",
        # control flow and sequences (their subgraphs' nodes check their own inputs)
        *onnx_control.CONVERTERS,
        *onnx_sequence.CONVERTERS,
        # quantized integer products
        *("MatMulInteger", "ConvInteger", "QLinearMatMul", "QLinearConv"),
        # bits of integers and floats, float classes, sequences reversed at run-time lengths, float64 Det and MVN,
        # Shrink of every number
        *("BitShift", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "BitwiseNot", "BitCast", "IsNaN", "IsInf"),
        "ReverseSequence",
        "Det",
        "Shrink",
        "MeanVarianceNormalization",
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
    "DFT": (1, 2),
    "STFT": (1, 3),
    "MelWeightMatrix": (0, 1),
    "MaxUnpool": (2,),
    "NonMaxSuppression": (2,),
    **{
        f"Reduce{kind}": (1,)
        for kind in ("L1", "L2", "LogSum", "LogSumExp", "Max", "Mean", "Min", "Prod", "Sum", "SumSquare")
    },
    # the trip count and initial condition set the scan outputs' extent; positions and splits choose the element
    "Loop": (0, 1),
    "SequenceAt": (1,),
    "SequenceInsert": (2,),
    "SequenceErase": (1,),
    "SplitToSequence": (1,),
    # float operands the converters need as constants
    "Dropout": (1, 2),
}
"""ONNX op type -> the positions of its inputs that must be compile-time constants: shape-setting operands (shapes,
axes, pads, repeats, sizes) and Dropout's ratio and training_mode. The backend binds graph inputs read there, and
only there: an integer or bool graph input read anywhere else is data, and refused."""


def node_label(node: onnx.NodeProto, index: int) -> str:
    """How messages name a node: its name, or its position in its graph."""
    return node.name or f"<unnamed node #{index}>"


def unsupported_nodes(
    graph_proto: onnx.GraphProto, opsets: dict[str, int], constants: set[str] | None = None
) -> dict[tuple[str, int | None], list[str]]:
    """(op type, opset) -> the labels of the nodes of `graph_proto` and its subgraphs that have no converter and are
    not foldable (`constants`: the values known at compile time; default, the initializers)."""
    known = {tensor.name for tensor in graph_proto.initializer} if constants is None else set(constants)
    unsupported: dict[tuple[str, int | None], list[str]] = {}
    for index, node in enumerate(graph_proto.node):
        for subgraph in onnx_control.subgraphs(node):
            inner = (known | {tensor.name for tensor in subgraph.initializer}) - {vi.name for vi in subgraph.input}
            inner |= onnx_control.constant_inputs(node, subgraph)
            for key, labels in unsupported_nodes(subgraph, opsets, inner).items():
                unsupported.setdefault(key, []).extend(labels)
        domain = node.domain if node.domain not in onnx_fold.DEFAULT_DOMAINS else ""
        foldable = onnx_fold.is_foldable(node, known.__contains__)
        if onnx_fold.is_constant_output(node, known.__contains__):
            known.update(node.output)
        if foldable or converter_key(domain, node.op_type) in CONVERTERS:
            continue
        op_type = f"{domain}.{node.op_type}" if domain else node.op_type
        unsupported.setdefault((op_type, opsets.get(domain)), []).append(node_label(node, index))
    return unsupported
