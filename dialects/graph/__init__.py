"""The `graph` dialect: model-level tensor operations, one op per semantic operation.

Values are ranked tensors with static shapes of the element types in `common.ELEMENT_TYPES`: f32, f64, i8..i64,
ui8..ui64, i1 (bool), f16 and bf16 (computed in f32), storage-only float8, float4, i4, ui4, i2 and ui2; each op says
which it takes. Weights are handles into a weight store outside the IR (`graph.weight "fc0.weight"`), never inline
data. ONNX attributes are typed properties, and every op verifies its result shape, naming the op and the mismatch.

    func.func @main(%x: tensor<1x784xf32>) -> tensor<1x128xf32> {
      %w = graph.weight "fc0.weight" : tensor<128x784xf32>
      %b = graph.weight "fc0.bias" : tensor<128xf32>
      %y = graph.gemm %x, %w, %b {trans_b} : (tensor<1x784xf32>, tensor<128x784xf32>, tensor<128xf32>) -> tensor<1x128xf32>
      %r = graph.relu %y : tensor<1x128xf32>
      func.return %r : tensor<1x128xf32>
    }

The ops are grouped by family in the modules of this package (`core`, `elementwise`, `activation`, `nn`,
`indexing`, `normalization`, `tensor`, `spatial`, `extern`, `selection`, `generation`, `compaction`, `attention`,
`quantized`, `linalg`), each family on a base class of `core`, the element types and shape helpers in `common`;
each module lists its ops in `OPS`, all importable from here (`from minimlc.dialects import graph; graph.GemmOp`).
"""

from xdsl.ir import Dialect

from minimlc.dialects.graph import (
    activation,
    attention,
    compaction,
    core,
    elementwise,
    extern,
    generation,
    indexing,
    linalg,
    nn,
    normalization,
    quantized,
    selection,
    spatial,
    tensor,
    weight_only,
)
from minimlc.dialects.graph.activation import *  # noqa: F403
from minimlc.dialects.graph.attention import *  # noqa: F403
from minimlc.dialects.graph.compaction import *  # noqa: F403
from minimlc.dialects.graph.core import *  # noqa: F403
from minimlc.dialects.graph.elementwise import *  # noqa: F403
from minimlc.dialects.graph.extern import *  # noqa: F403
from minimlc.dialects.graph.generation import *  # noqa: F403
from minimlc.dialects.graph.indexing import *  # noqa: F403
from minimlc.dialects.graph.linalg import *  # noqa: F403
from minimlc.dialects.graph.nn import *  # noqa: F403
from minimlc.dialects.graph.normalization import *  # noqa: F403
from minimlc.dialects.graph.quantized import *  # noqa: F403
from minimlc.dialects.graph.selection import *  # noqa: F403
from minimlc.dialects.graph.spatial import *  # noqa: F403
from minimlc.dialects.graph.tensor import *  # noqa: F403
from minimlc.dialects.graph.weight_only import *  # noqa: F403

Graph = Dialect(
    "graph",
    [
        *core.OPS,
        *elementwise.OPS,
        *activation.OPS,
        *nn.OPS,
        *normalization.OPS,
        *tensor.OPS,
        *indexing.OPS,
        *spatial.OPS,
        *extern.OPS,
        *selection.OPS,
        *generation.OPS,
        *compaction.OPS,
        *attention.OPS,
        *quantized.OPS,
        *linalg.OPS,
        *weight_only.OPS,
    ],
    [],
)
